package swap_test

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// A task replaces the partition dt=2026-11-29 atomically: stage files under
// the generation's prefix, then commit. Re-running the same run is a no-op.
func Example() {
	ctx := context.Background()
	st := memstore.New()
	run := func() swap.Result {
		txn, err := swap.Begin(ctx, st, "dt=2026-11-29", swap.Options{RunID: "daily__2026-11-29"})
		if err != nil {
			panic(err)
		}
		body := []byte("parquet bytes would go here")
		if _, err := st.Put(ctx, txn.DataPrefix()+"part-00000.parquet", body, store.PutOptions{IfNoneMatch: true}); err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		var c manifest.Content
		c.Add(manifest.File{Path: "part-00000.parquet", Size: int64(len(body)), Rows: 1, Checksum: manifest.SHA256Checksum(sum[:])})
		c.ContentChecksum = "example:00000000000000000000000000000001"
		res, err := txn.Commit(ctx, c)
		if err != nil {
			panic(err)
		}
		return res
	}
	first := run()
	fmt.Println(first.Changed, first.Outcome, first.Rows)
	again := run()
	fmt.Println(again.Changed, again.Outcome, again.Generation == first.Generation)

	snap, err := swap.Resolve(ctx, st, "dt=2026-11-29")
	if err != nil {
		panic(err)
	}
	fmt.Println(len(snap.Files), snap.Files[0].Path)
	// Output:
	// true committed 1
	// false same-run true
	// 1 part-00000.parquet
}
