package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Appends (pswap commit --append) as the engines see them: every Iceberg
// snapshot of an append is an `append` snapshot that adds only the run's
// files (Java Iceberg's changelog scan reports no deletions), every Delta
// version of one holds only `add` actions, and Spark, PyIceberg, DuckDB,
// delta-rs and Polars read exactly the rows pswap's files hold, at every
// snapshot and version. Spark structured streaming (trigger
// availableNow, a checkpoint kept across the steps) on the Iceberg table
// and on the Delta log sees each run's rows once: a re-run of a run adds
// nothing, and the streams' rows add up to the table's.
func TestAppendViews(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		dt := &deltaTable{table: tb, parts: map[string][]map[string]any{}, cols: []string{"amount", "city", "dt", "order_id"}}
		part := "dt=2026-11-29"
		appendCSV := func(run string, lines ...string) map[string]any {
			in := tb.write(run+".csv", "order_id,city,amount\n"+strings.Join(lines, "\n")+"\n")
			doc := dt.deltaCommit("commit", "--partition", part, "--append", "--run-id", run, in)
			if doc["outcome"] == "committed" {
				dt.parts[part] = append(dt.parts[part], csvRows("2026-11-29", lines...)...)
			}
			return doc
		}
		version := func(doc map[string]any) int64 { return int64(doc["delta_version"].(float64)) }
		streams := tb.store == "file" // Spark's Delta reads no S3 here (see reader.py)
		var icebergSeen, deltaSeen []map[string]any
		stream := func() {
			if !streams {
				return
			}
			icebergSeen = append(icebergSeen, tb.sparkStream("iceberg")...)
			deltaSeen = append(deltaSeen, tb.sparkStream("delta")...)
		}

		first := appendCSV("hour-13", "1,Lisbon,12.5", "2,Porto,7.25")
		dt.record("append hour-13", version(first))
		tb.record("append hour-13")
		stream()
		dt.record("append hour-14", version(appendCSV("hour-14", "3,Faro,3", "4,Faro,4.5")))
		tb.record("append hour-14")
		again := appendCSV("hour-13", "1,Lisbon,12.5", "2,Porto,7.25")
		if again["outcome"] != "same-run" || again["run_generation"] != first["generation"] {
			t.Fatalf("re-run of hour-13: %v", again)
		}
		dt.record("append hour-15", version(appendCSV("hour-15", "5,Braga,5", "1,Lisbon,12.5")))
		tb.record("append hour-15")
		stream()
		for i := range dt.steps {
			if dt.steps[i].version != int64(i) {
				t.Fatalf("step %q is Delta version %d, want %d (one version per append, none for the re-run)", dt.steps[i].step, dt.steps[i].version, i)
			}
		}

		tb.checkEngines("dt")
		tb.checkChangelog() // inserts only: the files pswap's listing gained
		dt.check("after the appends", true)
		tb.checkAppendSnapshots()
		if tb.store == "file" {
			checkAddOnlyLog(t, tb.root)
		}
		if streams {
			cur := tb.snaps[len(tb.snaps)-1]
			var ice []map[string]any
			if err := call(t, tb.request("spark", "scan", cur), &ice); err != nil {
				t.Fatal(err)
			}
			sameRows(t, "Spark streaming on Iceberg, all micro-batches", canonRows(t, icebergSeen), canonRows(t, ice))
			delta, err := dt.read("spark", "delta_scan", -1)
			if err != nil {
				t.Fatal(err)
			}
			sameRows(t, "Spark streaming on Delta, all micro-batches", canonRows(t, deltaSeen), delta)
			t.Logf("streaming: Iceberg %d rows, Delta %d rows over 2 triggers, each run's rows once", len(icebergSeen), len(deltaSeen))
		}
	})
}

// checkAppendSnapshots reads the snapshots with Spark's metadata table:
// every one is an append that deletes nothing.
func (tb *table) checkAppendSnapshots() {
	tb.t.Helper()
	req := tb.request("spark", "meta", tb.snaps[len(tb.snaps)-1])
	req["meta"] = "snapshots"
	var rows []map[string]any
	if err := call(tb.t, req, &rows); err != nil {
		tb.t.Fatalf("spark: snapshots: %v", err)
	}
	if len(rows) != len(tb.snaps) {
		tb.t.Errorf("spark: %d snapshots, want %d", len(rows), len(tb.snaps))
	}
	for _, r := range rows {
		sum, _ := r["summary"].(map[string]any)
		if r["operation"] != "append" || fmt.Sprint(sum["deleted-data-files"]) != "0" {
			tb.t.Errorf("spark: snapshot %v is %v (summary %v), want an append deleting nothing", r["snapshot_id"], r["operation"], sum)
		}
	}
}

// checkAddOnlyLog reads the Delta log's versions: after version 0, each
// holds commitInfo (mode Append), a txn of its run and add actions only.
func checkAddOnlyLog(t *testing.T, root string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "_delta_log", "*.json"))
	if err != nil || len(names) < 3 {
		t.Fatalf("Delta log: %v %v", names, err)
	}
	slices.Sort(names)
	for _, n := range names[1:] {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		adds := 0
		for l := range strings.Lines(string(data)) {
			var a map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatal(err)
			}
			for k, v := range a {
				switch k {
				case "add":
					adds++
				case "commitInfo":
					if !strings.Contains(string(v), `"mode":"Append"`) {
						t.Errorf("%s: commitInfo %s, want mode Append", filepath.Base(n), v)
					}
				case "txn":
				default:
					t.Errorf("%s: a %s action in an append's version", filepath.Base(n), k)
				}
			}
		}
		if adds != 1 {
			t.Errorf("%s: %d adds, want the run's one file", filepath.Base(n), adds)
		}
	}
}

// sparkStream runs Spark structured streaming on the table (format
// "iceberg" or "delta") with trigger availableNow and a checkpoint kept
// across calls, and returns the rows of this call's micro-batches: what
// a streaming job that follows the table sees since its last trigger.
func (tb *table) sparkStream(format string) []map[string]any {
	tb.t.Helper()
	ckpt := filepath.Join(tb.dir, "stream-"+format)
	out := filepath.Join(tb.dir, "stream-"+format+".json")
	code := fmt.Sprintf(`
import __main__, json
s = __main__.spark()
rows = []
def batch(df, epoch):
    rows.extend(__main__.rows_of(df.toArrow()))
q = (s.readStream.format(%q).load(%q).writeStream.foreachBatch(batch)
     .option("checkpointLocation", %q).trigger(availableNow=True).start())
q.awaitTermination()
with open(%q, "w") as f:
    json.dump(rows, f)
`, format, tb.root, ckpt, out)
	if err := call(tb.t, map[string]any{"engine": "python", "op": "exec", "code": code}, nil); err != nil {
		tb.t.Fatalf("Spark streaming on %s: %v", format, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		tb.t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(data, &rows); err != nil {
		tb.t.Fatal(err)
	}
	return rows
}
