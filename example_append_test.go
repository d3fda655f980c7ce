package pswap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pswap/pswap"
)

// Appends to an immutable event log: each run adds its rows exactly once.
// A retry of a run is a no-op however many other runs appended since, so
// readers never deduplicate.
func ExamplePartition_Append() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "pswap-example")
	defer os.RemoveAll(dir)

	table, err := pswap.Open(ctx, filepath.Join(dir, "events"), pswap.Options{})
	if err != nil {
		panic(err)
	}
	day, err := table.Partition("dt=2026-11-29")
	if err != nil {
		panic(err)
	}
	run := func(runID string, rows ...Sale) pswap.Result {
		w, err := day.Append(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: runID}})
		if err != nil {
			panic(err)
		}
		if !w.AlreadyCommitted() { // a re-run skips the work
			if err := pswap.Write(w, rows...); err != nil {
				w.Abort(ctx)
				panic(err)
			}
		}
		res, err := w.Commit(ctx)
		if err != nil {
			panic(err)
		}
		return res
	}
	first := run("hourly__13", Sale{1, "Lisbon", 12.5}, Sale{2, "Porto", 7.25})
	fmt.Println(first.Outcome, "rows:", first.Rows)
	second := run("hourly__14", Sale{3, "Lisbon", 3})
	fmt.Println(second.Outcome, "rows:", second.Rows, "files:", second.Files)
	retry := run("hourly__13", Sale{1, "Lisbon", 12.5}, Sale{2, "Porto", 7.25})
	fmt.Println(retry.Outcome, "rows:", retry.Rows, "run's generation is the first:", retry.RunGeneration == first.Generation)

	report, err := day.Verify(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("verified:", report.OK)
	// Output:
	// committed rows: 2
	// committed rows: 3 files: 2
	// same-run rows: 3 run's generation is the first: true
	// verified: true
}
