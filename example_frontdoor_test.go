package pswap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/memstore"
)

// What a commit would do, without writing: the first dry run would
// commit, a dry run of the same rows after the commit is a no-op
// (Identical), and a retry of the run that committed is SameRun. With
// Force, a dry run also tells whether a re-run's input differs from what
// its run committed (`pswap commit` warns with it).
func ExamplePartition_DryRun() {
	ctx := context.Background()
	table := pswap.NewTable(memstore.New())
	day, err := table.Partition("dt=2026-11-29")
	if err != nil {
		panic(err)
	}
	rows := []Sale{{1, "Lisbon", 10}, {2, "Porto", 20}}
	add := func(w *pswap.Writer) error { return pswap.Write(w, rows...) }
	opts := pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "daily/2026-11-29"}}

	d, err := day.DryRun(ctx, opts, add)
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Outcome, d.Rows, "rows; current:", d.Current == "")

	w, err := day.Begin(ctx, opts)
	if err != nil {
		panic(err)
	}
	if err := add(w); err != nil {
		panic(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		panic(err)
	}

	d, _ = day.DryRun(ctx, pswap.WriteOptions{}, add)
	fmt.Println(d.Outcome, d.Rows, "rows")
	d, _ = day.DryRun(ctx, opts, add)
	fmt.Println(d.Outcome, d.CurrentRows, "rows current")

	rows = append(rows, Sale{3, "Faro", 30}) // corrected upstream data
	forced := opts
	forced.Commit.Force = true
	d, _ = day.DryRun(ctx, forced, add)
	fmt.Println(d.Outcome, d.Rows, "rows; the run committed", d.RunRows, "; differs:", d.InputDiffers)
	// Output:
	// would-commit 2 rows; current: true
	// identical 2 rows
	// same-run 2 rows current
	// would-commit 3 rows; the run committed 2 ; differs: true
}

// A table's schema as table.json records it: each column's field id and
// Iceberg type (what `pswap show --json` prints), and the check a write
// makes of a partition key.
func ExampleTableSchema() {
	ctx := context.Background()
	table := pswap.NewTable(memstore.New())
	day, _ := table.Partition("dt=2026-11-29")
	w, err := day.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		panic(err)
	}
	if err := pswap.Write(w, Sale{1, "Lisbon", 10}); err != nil {
		panic(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		panic(err)
	}
	schema, err := table.Schema(ctx)
	if err != nil {
		panic(err)
	}
	for _, c := range schema.Columns {
		fmt.Println(c.ID, c.Name, string(c.Type), c.Nullable)
	}
	fmt.Println(schema.CheckKey("dt=2026-11-30") == nil)
	fmt.Println(schema.CheckKey("dt=20261130") != nil)
	// Output:
	// 1 order_id "long" false
	// 2 city "string" false
	// 3 amount "double" false
	// true
	// true
}

// The audit as CSV, as `pswap audit --format csv` writes it (WriteParquet
// writes the same rows as a Parquet file).
func ExampleAuditRows_WriteCSV() {
	ctx := context.Background()
	table := pswap.NewTable(memstore.New())
	day, _ := table.Partition("dt=2026-11-29")
	w, err := day.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "daily/2026-11-29"}})
	if err != nil {
		panic(err)
	}
	if err := pswap.Write(w, Sale{1, "Lisbon", 10}); err != nil {
		panic(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		panic(err)
	}
	rows, err := table.Audit(ctx, pswap.AuditOptions{})
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	if err := rows.WriteCSV(&b); err != nil {
		panic(err)
	}
	lines := strings.Split(b.String(), "\n")
	fmt.Println(lines[0] == strings.Join(pswap.AuditColumns, ","))
	fmt.Println(len(lines[1:]) - 1) // one row, then the final newline
	// Output:
	// true
	// 1
}

// A merge's options checked before any request (`pswap merge` checks its
// flags this way).
func ExampleMergeOptions_Validate() {
	fmt.Println(pswap.MergeOptions{Keys: []string{"order_id"}}.Validate())
	fmt.Println(pswap.MergeOptions{Keys: []string{"order_id", "order_id"}}.Validate())
	fmt.Println(pswap.MergeOptions{Keys: []string{"order_id"}, DeleteWhen: "op"}.Validate())
	// Output:
	// <nil>
	// bad merge option: key column "order_id" given twice
	// bad merge option: delete marker "op": want column=value, e.g. op=D
}

// The files Writer.AddPath would stage from a folder, listed before a
// write: an engine's markers and hidden files are skipped.
func ExampleInputFiles() {
	dir, _ := os.MkdirTemp("", "pswap-inputs")
	defer os.RemoveAll(dir)
	for name, data := range map[string]string{
		"part-0.csv": "order_id,city,amount\n1,Lisbon,10\n",
		"part-1.csv": "order_id,city,amount\n2,Porto,20\n",
		"_SUCCESS":   "",
		".part.crc":  "x",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			panic(err)
		}
	}
	files, err := pswap.InputFiles(dir, pswap.FormatAuto)
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		fmt.Println(filepath.Base(f.Path), f.Format, f.Size)
	}
	fmt.Println(pswap.FormatAuto.For("day.jsonl.gz"))
	fmt.Println(pswap.IsEngineMarker("_SUCCESS"), pswap.IsEngineMarker("part-0.parquet"))
	// Output:
	// part-0.csv csv 33
	// part-1.csv csv 32
	// jsonl <nil>
	// true false
}
