package pswap_test

import (
	"context"
	"fmt"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/memstore"
)

// Garbage collection of a table: three commits of one day (a run and two
// backfills), then, two days later, Table.GC keeps the current generation
// and one before it for rollback (Keep: 1), and deletes the oldest: its
// manifest and its data file. It also keeps
// whatever the table's Iceberg snapshots still name, as `pswap gc` does.
func ExampleTable_GC() {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	st := memstore.New(memstore.Options{Now: func() time.Time { return now }}) // the store's clock
	table := pswap.NewTable(st)
	day, err := table.Partition("dt=2026-11-29")
	if err != nil {
		panic(err)
	}
	for run := 1; run <= 3; run++ {
		w, err := day.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			panic(err)
		}
		if err := pswap.Write(w, Sale{int64(run), "Lisbon", float64(run)}); err != nil {
			panic(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			panic(err)
		}
		now = now.Add(time.Hour)
	}
	now = now.Add(48 * time.Hour)

	rep, err := table.GC(ctx, pswap.GCOptions{Keep: 1})
	if err != nil {
		panic(err)
	}
	// Deleted: the collected generation's data file, manifest and attempt
	// record (the audit's).
	fmt.Println("partitions:", rep.Totals.Partitions, "generations kept:", rep.Totals.Kept, "collected:", rep.Totals.Collected, "objects deleted:", rep.Totals.Objects)
	snap, err := day.Current(ctx)
	if err != nil {
		panic(err)
	}
	p := rep.Partitions[0]
	fmt.Println("the current one is kept:", p.Kept[0] == snap.Manifest.Generation, "rows:", snap.Manifest.Rows)
	// Output:
	// partitions: 1 generations kept: 2 collected: 1 objects deleted: 3
	// the current one is kept: true rows: 1
}
