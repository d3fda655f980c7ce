package gc_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path"
	"time"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// commitOne commits a generation of one small file.
func commitOne(ctx context.Context, st store.Store, part, body string) error {
	txn, err := swap.Begin(ctx, st, part, swap.Options{})
	if err != nil {
		return err
	}
	if _, err := st.Put(ctx, txn.DataPrefix()+"part-00000.parquet", []byte(body), store.PutOptions{IfNoneMatch: true}); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(body))
	var c manifest.Content
	c.Add(manifest.File{Path: "part-00000.parquet", Size: int64(len(body)), Rows: 1, Checksum: manifest.SHA256Checksum(sum[:])})
	c.ContentChecksum = manifest.SHA256Checksum(sum[:])
	_, err = txn.Commit(ctx, c)
	return err
}

func ExamplePartition() {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	st := memstore.New(memstore.Options{Now: func() time.Time { return now }})
	part := "dt=2026-11-29"
	for i := range 4 { // four generations, an hour apart
		if err := commitOne(ctx, st, part, fmt.Sprint("run ", i)); err != nil {
			fmt.Println(err)
			return
		}
		now = now.Add(time.Hour)
	}
	now = now.Add(12 * time.Hour) // long after MinAge (6h)

	// A dry run says what would go, and deletes nothing.
	r, err := gc.Partition(ctx, st, part, gc.Options{DryRun: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("dry run: would delete %d generations, %d objects\n", len(r.Collected), r.Objects)
	fmt.Println("first:", path.Dir(r.Keys[0])) // manifests go first, then data

	// The default keeps the current generation and one retired for rollback.
	r, err = gc.Partition(ctx, st, part, gc.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("kept %d, deleted %d generations (%d objects)\n", len(r.Kept), len(r.Collected), r.Objects)
	_, err = swap.Rollback(ctx, st, part, r.Kept[1], swap.Options{})
	fmt.Println("rollback to the kept one:", err)
	_, err = swap.Rollback(ctx, st, part, r.Collected[0], swap.Options{})
	fmt.Println("rollback to a collected one:", err != nil)
	// Output:
	// dry run: would delete 2 generations, 4 objects
	// first: _pswap/p/dt=2026-11-29/manifests
	// kept 2, deleted 2 generations (4 objects)
	// rollback to the kept one: <nil>
	// rollback to a collected one: true
}

func ExampleTable() {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	st := memstore.New(memstore.Options{Now: func() time.Time { return now }})
	for _, part := range []string{"dt=2026-11-28", "dt=2026-11-29"} {
		for i := range 3 {
			if err := commitOne(ctx, st, part, fmt.Sprint(part, " run ", i)); err != nil {
				fmt.Println(err)
				return
			}
		}
	}
	now = now.Add(7 * 24 * time.Hour)
	tr, err := gc.Table(ctx, st, "", gc.Options{Keep: gc.None}) // no generation kept for rollback
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range tr.Partitions {
		fmt.Printf("%s: kept %d, deleted %d\n", r.Partition, len(r.Kept), len(r.Collected))
	}
	fmt.Printf("total: %d objects\n", tr.Totals.Objects)
	// Output:
	// dt=2026-11-28: kept 1, deleted 2
	// dt=2026-11-29: kept 1, deleted 2
	// total: 8 objects
}
