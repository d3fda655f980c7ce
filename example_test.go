package pswap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pswap/pswap"
)

type Sale struct {
	OrderID int64   `parquet:"order_id"`
	City    string  `parquet:"city"`
	Amount  float64 `parquet:"amount"`
}

// The whole flow of a daily task: open the table, write the day's rows as
// one new generation, commit it atomically. The re-run of the same run is a
// no-op, and a reader sees one complete generation.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "pswap-example")
	defer os.RemoveAll(dir)

	table, err := pswap.Open(ctx, filepath.Join(dir, "sales"), pswap.Options{}) // or "s3://bucket/sales"
	if err != nil {
		panic(err)
	}
	day, err := table.Partition("dt=2026-11-29")
	if err != nil {
		panic(err)
	}
	task := func() pswap.Result {
		w, err := day.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "daily__2026-11-29"}})
		if err != nil {
			panic(err)
		}
		if w.AlreadyCommitted() {
			// This run committed before (whatever committed since): the
			// commit is a no-op without producing any rows.
			fmt.Println("already committed by this run; skipping the work")
		} else if err := pswap.Write(w, Sale{1, "Lisbon", 12.5}, Sale{2, "Porto", 7.25}, Sale{3, "Lisbon", 3}); err != nil {
			w.Abort(ctx)
			panic(err)
		}
		fmt.Println("rows written:", w.Rows())
		res, err := w.Commit(ctx)
		if err != nil {
			panic(err)
		}
		return res
	}

	first := task()
	fmt.Println("changed:", first.Changed, "rows:", first.Rows, "files:", first.Files)
	again := task()
	fmt.Println("changed:", again.Changed, "outcome:", again.Outcome, "current files:", again.Files)

	snap, err := day.Current(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("current rows:", snap.Manifest.Rows, "files:", len(snap.Files))
	report, err := day.Verify(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("verified:", report.OK)
	// Output:
	// rows written: 3
	// changed: true rows: 3 files: 1
	// already committed by this run; skipping the work
	// rows written: 0
	// changed: false outcome: same-run current files: 1
	// current rows: 3 files: 1
	// verified: true
}
