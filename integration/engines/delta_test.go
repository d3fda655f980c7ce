package engines

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
)

// The Delta Lake log pswap publishes beside the Iceberg metadata, read by
// the Delta readers (delta-rs, Polars, DuckDB's delta extension, Spark's
// delta-spark on file: only) from the table's root: exact rows and
// partition values at every version (time travel), after commits,
// replaces, a rollback, a schema evolution, a --partitioned backfill and
// gc, then a user's VACUUM, on file:// and MinIO.

// deltaStep is the table as one Delta version holds it.
type deltaStep struct {
	step    string
	version int64
	rows    []string // canonical JSON, sorted
}

// deltaTable follows a table's partitions as pswap commits them.
type deltaTable struct {
	*table
	parts map[string][]map[string]any // partition -> rows (canonical values)
	cols  []string                    // the table's columns
	steps []deltaStep
}

// csvRows turns CSV lines (order_id,city,amount[,note]) into the rows the
// readers return (amount is a double column, dt a date).
func csvRows(dt string, lines ...string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		f := strings.Split(l, ",")
		amount := f[2]
		if !strings.Contains(amount, ".") {
			amount += ".0"
		}
		r := map[string]any{"order_id": f[0], "city": f[1], "amount": amount, "dt": dt}
		if len(f) > 3 && f[3] != "" {
			r["note"] = f[3] // an empty CSV field is null
		}
		out = append(out, r)
	}
	return out
}

// deltaCommit runs a pswap command with --delta and checks the Delta
// publish it reports.
func (dt *deltaTable) deltaCommit(args ...string) map[string]any {
	dt.t.Helper()
	var doc map[string]any
	out := dt.run(append(args, "--delta", "--json")...)
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		dt.t.Fatalf("%s: %v", out, err)
	}
	if doc["delta_published"] != true {
		dt.t.Fatalf("pswap %s: the Delta log was not published: %s", strings.Join(args, " "), out)
	}
	return doc
}

// record remembers what the latest Delta version must read.
func (dt *deltaTable) record(step string, version int64) {
	dt.t.Helper()
	var rows []map[string]any
	for _, part := range slices.Sorted(maps.Keys(dt.parts)) {
		for _, r := range dt.parts[part] {
			c := map[string]any{}
			for _, col := range dt.cols {
				c[col] = r[col] // nil where the file lacks the column
			}
			rows = append(rows, c)
		}
	}
	dt.steps = append(dt.steps, deltaStep{step: step, version: version, rows: canonRows(dt.t, rows)})
}

// read reads version v (-1: the latest) with a reader.
func (dt *deltaTable) read(engine, op string, v int64) ([]string, error) {
	dt.t.Helper()
	req := map[string]any{"engine": engine, "op": op, "table": dt.root}
	if v >= 0 {
		req["version"] = v
	}
	var rows []map[string]any
	if engine == "deltars" {
		var ans struct {
			Version int64            `json:"version"`
			Rows    []map[string]any `json:"rows"`
		}
		if err := call(dt.t, req, &ans); err != nil {
			return nil, err
		}
		if v >= 0 && ans.Version != v {
			return nil, fmt.Errorf("delta-rs opened version %d, want %d", ans.Version, v)
		}
		rows = ans.Rows
	} else if err := call(dt.t, req, &rows); err != nil {
		return nil, err
	}
	return canonRows(dt.t, rows), nil
}

// check reads every recorded version with delta-rs and Polars (time
// travel), and the latest with DuckDB and (file: only, with spark) Spark,
// whose answers must be exactly the recorded rows.
func (dt *deltaTable) check(what string, spark bool) {
	dt.t.Helper()
	last := dt.steps[len(dt.steps)-1]
	readers := [][2]string{{"deltars", "scan"}, {"polars", "scan"}, {"duckdb", "delta_scan"}}
	spark = spark && dt.store == "file"
	if spark {
		readers = append(readers, [2]string{"spark", "delta_scan"})
	}
	for _, r := range readers {
		start := time.Now()
		got, err := dt.read(r[0], r[1], -1)
		dt.t.Logf("%s: %s read in %v", what, r[0], time.Since(start))
		if err != nil {
			dt.t.Fatalf("%s: %s of the latest version: %v", what, r[0], err)
		}
		sameRows(dt.t, fmt.Sprintf("%s: %s, version %d (%s)", what, r[0], last.version, last.step), got, last.rows)
	}
	for _, s := range dt.steps {
		for _, r := range [][2]string{{"deltars", "scan"}, {"polars", "scan"}} {
			got, err := dt.read(r[0], r[1], s.version)
			if err != nil {
				dt.t.Fatalf("%s: %s of version %d (%s): %v", what, r[0], s.version, s.step, err)
			}
			sameRows(dt.t, fmt.Sprintf("%s: %s time travel to version %d (%s)", what, r[0], s.version, s.step), got, s.rows)
		}
	}
	if spark {
		got, err := dt.read("spark", "delta_scan", dt.steps[0].version)
		if err != nil {
			dt.t.Fatalf("%s: Spark VERSION AS OF %d: %v", what, dt.steps[0].version, err)
		}
		sameRows(dt.t, what+": Spark time travel to the first version", got, dt.steps[0].rows)
	}
}

func TestDeltaReaders(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		dt := &deltaTable{table: tb, parts: map[string][]map[string]any{}, cols: []string{"amount", "city", "dt", "order_id"}}
		commitCSV := func(part, run string, extra []string, lines ...string) map[string]any {
			header := "order_id,city,amount"
			if strings.Count(lines[0], ",") == 3 {
				header += ",note"
			}
			in := dt.write(strings.NewReplacer("=", "_", "/", "_").Replace(part)+"-"+run+".csv", header+"\n"+strings.Join(lines, "\n")+"\n")
			args := append([]string{"commit", "--partition", part, "--run-id", run}, extra...)
			doc := dt.deltaCommit(append(args, in)...)
			dt.parts[part] = csvRows(strings.TrimPrefix(part, "dt="), lines...)
			return doc
		}
		version := func(doc map[string]any) int64 { return int64(doc["delta_version"].(float64)) }

		first := commitCSV("dt=2026-11-28", "r28", nil, "1,Lisbon,12.5", "2,Porto,7.25")
		dt.record("first commit", version(first))
		dt.record("second partition", version(commitCSV("dt=2026-11-29", "r29", nil, "3,Faro,3")))
		dt.record("replace", version(commitCSV("dt=2026-11-28", "fix28", nil, "4,Braga,4", "5,Braga,5.5", "6,Évora,6")))
		rb := dt.deltaCommit("rollback", "--partition", "dt=2026-11-28", "--to", first["generation"].(string))
		dt.parts["dt=2026-11-28"] = csvRows("2026-11-28", "1,Lisbon,12.5", "2,Porto,7.25")
		dt.record("rollback", version(rb))
		dt.cols = append(dt.cols, "note")
		dt.record("schema evolution", version(commitCSV("dt=2026-11-30", "r30", []string{"--evolve-schema"}, "7,Lisbon,1.5,late", "8,Porto,2,")))
		// A --partitioned backfill: one Delta version after its commits.
		src := filepath.Join(dt.dir, "backfill")
		for day, body := range map[string]string{"2026-12-01": "9,Faro,9,\n10,Faro,10,x\n", "2026-12-02": "11,Porto,11,\n"} {
			if err := os.MkdirAll(filepath.Join(src, "dt="+day), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "dt="+day, "part.csv"), []byte("order_id,city,amount,note\n"+body), 0o644); err != nil {
				t.Fatal(err)
			}
			dt.parts["dt="+day] = csvRows(day, strings.Split(strings.TrimSpace(body), "\n")...)
		}
		dt.record("--partitioned backfill", version(dt.deltaCommit("commit", "--partitioned", src, "--run-id", "backfill")))
		for i := range dt.steps {
			if dt.steps[i].version != int64(i) {
				t.Fatalf("step %q is version %d, want %d (one version per change)", dt.steps[i].step, dt.steps[i].version, i)
			}
		}
		dt.check("after the commits", true)

		// A publish has nothing left to do.
		var pub map[string]any
		if err := json.Unmarshal([]byte(dt.run("publish", "--delta", "--json")), &pub); err != nil {
			t.Fatal(err)
		}
		if pub["delta_version"] != float64(5) || pub["delta_published"] != true {
			t.Fatalf("publish --delta: %v, want version 5 unchanged", pub)
		}

		// gc with nothing of its own kept: the files the Delta versions
		// within delta.deletedFileRetentionDuration name stay, so time
		// travel still reads every version.
		dt.run("gc", "--keep", "0", "--min-age", "0", "--commit-window", "0", "--orphan-age", "0", "--snapshot-retention", "0")
		dt.check("after gc", false)

		// A user's VACUUM without retention (delta-rs, its default lite
		// mode): it would delete the files of retired generations (the
		// tombstones), but it spares every path under a top-level `_`
		// folder, where pswap's generations lie (_pswap/p/): it deletes
		// nothing, and time travel still reads every version.
		var deleted []string
		if err := call(t, map[string]any{"engine": "deltars", "op": "vacuum", "table": dt.root}, &deleted); err != nil {
			t.Fatalf("delta-rs vacuum: %v", err)
		}
		if len(deleted) != 0 {
			t.Errorf("delta-rs vacuum deleted %v: nothing under _pswap/ was expected", deleted)
		}
		dt.check("after a user's VACUUM", false)
		if out := dt.run("verify"); !strings.Contains(out, "ok") {
			t.Errorf("pswap verify after VACUUM: %s", out)
		}
		// delta-rs's full mode lists the whole table and deletes what the
		// log does not name outside a top-level `_` folder (dry run): of
		// pswap's, nothing (only the Iceberg metadata, derived state).
		if err := call(t, map[string]any{"engine": "deltars", "op": "vacuum", "table": dt.root, "full": true, "dry_run": true}, &deleted); err != nil {
			t.Fatalf("delta-rs vacuum full dry run: %v", err)
		}
		for _, d := range deleted {
			if strings.Contains(d, "/"+layout.MetaDir+"/") || strings.Contains(d, "/"+layout.PartitionsRoot) {
				t.Errorf("delta-rs vacuum(full=True) would delete %s, pswap's own state: update the README and the layout", d)
			}
		}
	})
}

// TestDeltaConcurrentCommits: processes committing to different
// partitions at once each publish a Delta version; every one is visible.
func TestDeltaConcurrentCommits(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		tb.run("commit", "--partition", "dt=2026-11-01", "--delta", tb.write("seed.csv", "order_id,city,amount\n0,x,0.5\n"))
		const n = 10 // version 10 is a checkpoint's
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			in := tb.write(fmt.Sprintf("c%d.csv", i), fmt.Sprintf("order_id,city,amount\n%d,c%d,%d.5\n", i+1, i, i))
			wg.Go(func() {
				cmd := exec.Command(pswapBin(t), "commit", "--partition", fmt.Sprintf("dt=2026-11-%02d", i+2), "--delta", "--table", tb.url, in)
				cmd.Env = append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true")
				if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "warning") {
					errs[i] = fmt.Errorf("%v: %s", err, out)
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var ans struct {
			Version int64            `json:"version"`
			Rows    []map[string]any `json:"rows"`
		}
		if err := call(t, map[string]any{"engine": "deltars", "op": "scan", "table": tb.root}, &ans); err != nil {
			t.Fatal(err)
		}
		days := map[string]bool{}
		for _, r := range ans.Rows {
			days[r["dt"].(string)] = true
		}
		if ans.Version != n || len(ans.Rows) != n+1 || len(days) != n+1 {
			t.Fatalf("version %d with %d rows in %d partitions, want %d, %d, %d", ans.Version, len(ans.Rows), len(days), n, n+1, n+1)
		}
		// Version 10 came with pswap's Parquet checkpoint: every reader
		// reads the table from it alone, without the entries before it.
		if tb.store == "file" {
			for v := range 10 {
				if err := os.Remove(filepath.Join(tb.root, "_delta_log", fmt.Sprintf("%020d.json", v))); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, r := range [][2]string{{"deltars", "scan"}, {"polars", "scan"}, {"duckdb", "delta_scan"}} {
			dt := &deltaTable{table: tb}
			rows, err := dt.read(r[0], r[1], -1)
			if err != nil || len(rows) != n+1 {
				t.Errorf("%s from the checkpoint: %d rows, want %d: %v", r[0], len(rows), n+1, err)
			}
		}
	})
}
