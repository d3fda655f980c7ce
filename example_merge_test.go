package pswap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pswap/pswap"
)

// A late change log merged into the days it belongs to: order 2 changes,
// order 3 is deleted, order 4 is new. Each day swaps atomically; re-running
// the merge with the same run id is a no-op.
func ExampleTable_Merge() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "pswap-example-merge")
	defer os.RemoveAll(dir)
	table, err := pswap.Open(ctx, filepath.Join(dir, "sales"), pswap.Options{})
	if err != nil {
		panic(err)
	}
	day, _ := table.Partition("dt=2026-11-29")
	w, err := day.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		panic(err)
	}
	if err := pswap.Write(w, Sale{1, "Lisbon", 12.5}, Sale{2, "Porto", 7.25}, Sale{3, "Lisbon", 3}); err != nil {
		panic(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		panic(err)
	}

	changes := filepath.Join(dir, "changes.csv") // the partition column routes each row
	os.WriteFile(changes, []byte("dt,order_id,city,amount,op\n"+
		"2026-11-29,2,Porto,9.75,U\n"+
		"2026-11-29,3,,0,D\n"+
		"2026-11-29,4,Braga,20,I\n"), 0o644)
	opts := pswap.MergeOptions{Keys: []string{"order_id"}, DeleteWhen: "op=D", Commit: pswap.CommitOptions{RunID: "cdc-42"}}
	for range 2 {
		res, err := table.Merge(ctx, []string{changes}, opts)
		if err != nil {
			panic(err)
		}
		for _, p := range res.Partitions {
			fmt.Printf("%s: %s, %d rows (%d kept, %d upserted, %d deleted)\n", p.Partition, p.Result.Outcome, p.Result.Rows, p.Kept, p.Upserts, p.Deletes)
		}
	}
	// Output:
	// dt=2026-11-29: committed, 3 rows (1 kept, 2 upserted, 1 deleted)
	// dt=2026-11-29: same-run, 3 rows (0 kept, 2 upserted, 1 deleted)
}
