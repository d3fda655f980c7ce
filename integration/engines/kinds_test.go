package engines

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pswap/pswap/partition"
)

// TestCSV: three days from CSV, one replaced, one re-run as a retry.
func TestCSV(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		data := filepath.Join(repoRoot(), "examples", "data")
		for _, d := range []string{"2026-11-27", "2026-11-28", "2026-11-29"} {
			tb.run("commit", "--partition", "dt="+d, "--run-id", "daily-"+d, filepath.Join(data, "sales", d+".csv"))
			tb.record("commit " + d)
		}
		tb.run("commit", "--partition", "dt=2026-11-28", "--run-id", "fix-2026-11-28", filepath.Join(data, "sales-corrected"))
		tb.record("replace 2026-11-28")
		// A retry of a run that committed: a no-op, no new snapshot.
		tb.run("commit", "--partition", "dt=2026-11-29", "--run-id", "daily-2026-11-29", filepath.Join(data, "sales", "2026-11-29.csv"))
		if n := len(tb.snaps); tb.record("retry 2026-11-29").snapshotID != tb.snaps[n-1].snapshotID || len(tb.snaps) != n {
			t.Fatalf("a same-run retry made a new snapshot")
		}
		tb.checkEngines("dt")
	})
}

// TestEscapedPartitionValues: a two-column layout whose string column
// holds values that need escaping in a folder name.
func TestEscapedPartitionValues(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		regions := []string{"us east", "50%", "zürich", "x:y", "a#b"}
		for i, r := range regions {
			in := tb.write(fmt.Sprintf("r%d.csv", i), fmt.Sprintf("id,amount\n%d,%d.5\n%d,%d.25\n", i, i, i+100, i))
			tb.run("commit", "--partition", "dt=2026-11-29/region="+escape(r), in)
			tb.record("commit " + r)
		}
		tb.checkEngines("region")
	})
}

// escape is Hive's escaping of a partition value (partition.Escape).
func escape(v string) string { return partition.Escape(v) }

// TestDuckDBParquetPartitioned: DuckDB's PARTITION_BY output, with the
// types engines write (decimal, date, timestamps with and without zone, a
// nanosecond timestamp, list, struct, map), committed with commit
// --partitioned, then a second load replacing one day.
func TestDuckDBParquetPartitioned(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		query := func(seed int) string {
			return fmt.Sprintf(`SELECT i AS id,
				CAST(i * 1.25 + %[1]d AS DECIMAL(12,2)) AS price,
				DATE '2026-01-01' + CAST(i AS INTEGER) AS day,
				TIMESTAMP '2026-11-29 10:00:00' + INTERVAL (i) MINUTE AS local_ts,
				TIMESTAMPTZ '2026-11-29 10:00:00+00' + INTERVAL (i * 7) SECOND AS ts,
				CAST(TIMESTAMP '2026-11-29 10:00:00.123456' + INTERVAL (i) SECOND AS TIMESTAMP_NS) AS ns_ts,
				[i, i + %[1]d] AS tags,
				{'a': i, 'b': 'x' || i} AS info,
				MAP {'k' || i: i * 2} AS attrs,
				'2026-11-2' || (7 + i %% 3) AS dt
				FROM range(30) t(i)`, seed)
		}
		out := filepath.Join(tb.dir, "duck1")
		tb.duckWrite(query(0), out, "FORMAT parquet, PARTITION_BY (dt)")
		tb.run("commit", "--partitioned", out)
		tb.record("partitioned load")
		out2 := filepath.Join(tb.dir, "duck2")
		tb.duckWrite(query(5)+" WHERE i % 3 = 1", out2, "FORMAT parquet, PARTITION_BY (dt)")
		tb.run("commit", "--partitioned", out2)
		tb.record("partitioned replace")
		tb.checkEngines("dt")
	})
}

// TestLifecycle: JSON Lines with nested values, a staged commit, a column
// added with --evolve-schema, a rollback, and gc with snapshot expiry;
// Spark's metadata tables agree with pswap's listings.
func TestLifecycle(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		day := func(d string, n int, extra string) string {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, `{"id": %d, "amount": %d.5, "tags": ["t%d", "u"], "who": {"name": "n%d", "age": %d}%s}`+"\n", i, i, i%3, i, 20+i, extra)
			}
			return b.String()
		}
		tb.run("commit", "--partition", "dt=2026-11-27", tb.write("d27.jsonl", day("27", 5, "")))
		tb.record("jsonl 27")
		gen := strings.TrimSpace(tb.run("stage", "-q", "--partition", "dt=2026-11-28", tb.write("d28.jsonl", day("28", 7, ""))))
		tb.run("commit", "--partition", "dt=2026-11-28", "--staged", gen)
		tb.record("staged 28")
		tb.run("commit", "--partition", "dt=2026-11-28", "--evolve-schema", tb.write("d28b.jsonl", day("28", 4, `, "note": "late"`)))
		tb.record("evolved 28")
		tb.run("rollback", "--partition", "dt=2026-11-28", "--to", gen)
		tb.record("rollback 28")
		tb.checkEngines("dt")
		tb.checkSparkMetadata()
		tb.checkChangelog()
		// gc keeps what the retained snapshots name; after it the current
		// snapshot and every retained one still read.
		tb.run("gc", "--keep", "0", "--min-age", "0s", "--snapshot-retention", "1h")
		tb.checkEngines("dt")
		tb.checkLoggedVersions()
		// An expiry down to the current snapshot takes every version
		// whose current snapshot it removes out of the log, and deletes
		// it: what the log still names reads whole.
		tb.run("gc", "--keep", "0", "--min-age", "0s", "--snapshot-retention", "0")
		if n := tb.checkLoggedVersions(); n != 2 {
			tb.t.Errorf("after gc --snapshot-retention 0 the metadata log holds %d versions, want 2 (the last publish, the expiry's)", n)
		}
	})
}

// checkLoggedVersions reads the latest version's metadata log as Java
// Iceberg does (Spark's metadata_log_entries, which ends with the latest
// version itself) and scans every version it names with DuckDB: each must
// read whole, to the rows of the snapshot that was current in it. It
// returns how many versions the log names.
func (tb *table) checkLoggedVersions() int {
	tb.t.Helper()
	var pub struct {
		Metadata string `json:"metadata_location"`
	}
	if err := json.Unmarshal([]byte(tb.run("publish", "--json")), &pub); err != nil {
		tb.t.Fatal(err)
	}
	req := tb.request("spark", "meta", snapState{metadata: pub.Metadata})
	req["meta"] = "metadata_log_entries"
	var entries []map[string]any
	if err := call(tb.t, req, &entries); err != nil {
		tb.t.Fatalf("spark: metadata_log_entries: %v", err)
	}
	for _, e := range entries {
		file, snap := fmt.Sprint(e["file"]), fmt.Sprint(e["latest_snapshot_id"])
		i := slices.IndexFunc(tb.snaps, func(s snapState) bool { return fmt.Sprint(s.snapshotID) == snap })
		if i < 0 {
			tb.t.Errorf("the metadata log names %s, current snapshot %s, which no step recorded", file, snap)
			continue
		}
		var rows []map[string]any
		sql := fmt.Sprintf("SELECT * FROM iceberg_scan('%s')", strings.ReplaceAll(strings.TrimPrefix(file, "file://"), "'", "''"))
		if err := call(tb.t, map[string]any{"engine": "duckdb", "op": "sql", "sql": sql}, &rows); err != nil {
			tb.t.Errorf("duckdb: the logged version %s: %v", file, err)
			continue
		}
		sameRows(tb.t, "duckdb: the logged version "+file, canonRows(tb.t, rows), tb.snaps[i].rows)
	}
	return len(entries)
}

// checkSparkMetadata compares Spark's metadata tables with pswap's
// listings: one snapshot per recorded change, the current files, one row
// per partition with its record count.
func (tb *table) checkSparkMetadata() {
	tb.t.Helper()
	cur := tb.snaps[len(tb.snaps)-1]
	meta := func(name string) []map[string]any {
		req := tb.request("spark", "meta", cur)
		req["meta"] = name
		var rows []map[string]any
		if err := call(tb.t, req, &rows); err != nil {
			tb.t.Fatalf("spark: %s: %v", name, err)
		}
		return rows
	}
	snaps := meta("snapshots")
	ids := map[string]bool{}
	for _, r := range snaps {
		ids[fmt.Sprint(r["snapshot_id"])] = true
	}
	for _, s := range tb.snaps {
		if !ids[fmt.Sprint(s.snapshotID)] {
			tb.t.Errorf("spark: snapshots lacks %d (%s): %v", s.snapshotID, s.step, snaps)
		}
	}
	if h := meta("history"); len(h) != len(snaps) {
		tb.t.Errorf("spark: history has %d rows, snapshots %d", len(h), len(snaps))
	}
	var got, want []string
	for _, r := range meta("files") {
		got = append(got, fmt.Sprint(r["file_path"], " ", r["record_count"]))
	}
	perPart := map[string]int64{}
	for _, f := range cur.files {
		want = append(want, fmt.Sprint(asWritten(f.URI), " ", f.Rows))
		perPart[f.Partition] += f.Rows
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		tb.t.Errorf("spark: files\n  %v\nwant (pswap files)\n  %v", got, want)
	}
	parts := meta("partitions")
	if len(parts) != len(perPart) {
		tb.t.Errorf("spark: partitions has %d rows, pswap ls %d: %v", len(parts), len(perPart), parts)
	}
	for _, r := range parts {
		p, _ := r["partition"].(map[string]any)
		key := fmt.Sprintf("dt=%v", p["dt"])
		if fmt.Sprint(r["record_count"]) != fmt.Sprint(perPart[key]) {
			tb.t.Errorf("spark: partitions says %s has %v rows, pswap %d", key, r["record_count"], perPart[key])
		}
	}
}

// checkChangelog reads, with Java Iceberg's changelog scan, the changes
// from each recorded snapshot to the next: the files it reports inserted
// and deleted must be exactly those that pswap's listings gained and lost
// (before pswap recorded deletions, a replace showed inserts only).
func (tb *table) checkChangelog() {
	tb.t.Helper()
	cur := tb.snaps[len(tb.snaps)-1]
	for i := 1; i < len(tb.snaps); i++ {
		prev, next := tb.snaps[i-1], tb.snaps[i]
		if prev.snapshotID == next.snapshotID {
			continue
		}
		req := tb.request("spark", "changes", cur)
		req["from"], req["to"] = prev.snapshotID, next.snapshotID
		var got struct{ INSERT, DELETE []string }
		if err := call(tb.t, req, &got); err != nil {
			tb.t.Fatalf("spark: changes %s -> %s: %v", prev.step, next.step, err)
		}
		ins, del := netChange(got.INSERT, got.DELETE)
		wantIns, wantDel := netChange(filePaths(next.files), filePaths(prev.files))
		if !slices.Equal(ins, wantIns) || !slices.Equal(del, wantDel) {
			tb.t.Errorf("spark: changes %s -> %s:\n  inserted %v\n  deleted %v\nwant (pswap files)\n  inserted %v\n  deleted %v",
				prev.step, next.step, ins, del, wantIns, wantDel)
		}
	}
}

func filePaths(files []fileEntry) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, asWritten(f.URI))
	}
	return out
}

// netChange is what a went to b: the paths only in a, and those only in
// b, each sorted.
func netChange(a, b []string) (onlyA, onlyB []string) {
	for _, p := range a {
		if !slices.Contains(b, p) {
			onlyA = append(onlyA, p)
		}
	}
	for _, p := range b {
		if !slices.Contains(a, p) {
			onlyB = append(onlyB, p)
		}
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	return onlyA, onlyB
}

// TestTypedPartitionColumns: an hourly table (dt=2006-01-02/hr=15) whose
// partition columns table.json declares as date and int is published with
// those types, so that typed filters type-check and prune in every engine
// (before, both were strings: dt = DATE '...' and hr = 13 failed).
func TestTypedPartitionColumns(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		for i, iv := range []string{"2026-11-29T12:00:00Z/PT1H", "2026-11-29T13:00:00Z/PT1H", "2026-11-30T13:00:00Z/PT1H"} {
			in := tb.write(fmt.Sprintf("h%d.csv", i), fmt.Sprintf("id,amount\n%d,1.5\n%d,2.5\n", i, i+10))
			tb.run("commit", "--interval", iv, "--grain", "hour", in)
			tb.record(iv)
		}
		tb.checkEngines("hr")
		cur := tb.snaps[len(tb.snaps)-1]
		for _, engine := range engineNames {
			req := tb.request(engine, "scan", cur)
			req["filter"] = "dt = DATE '2026-11-29' AND hr = 13"
			if engine == "pyiceberg" {
				req["filter"] = "dt = '2026-11-29' AND hr = 13"
			}
			var rows []map[string]any
			if err := call(t, req, &rows); err != nil {
				t.Errorf("%s: WHERE %s: %v", engine, req["filter"], err)
				continue
			}
			if len(rows) != 2 || rows[0]["dt"] != "2026-11-29" || rows[0]["hr"] != "13" {
				t.Errorf("%s: WHERE %s: %v, want the 2 rows of dt=2026-11-29/hr=13", engine, req["filter"], rows)
			}
		}
	})
}

// TestSparkParquetPartitioned: what Spark's partitionBy("dt") writes
// (part-*.c000.snappy.parquet, _SUCCESS, .crc files; decimals, dates,
// timestamps, arrays and structs in Spark's encodings) committed with
// commit --partitioned, read back exactly by every engine.
func TestSparkParquetPartitioned(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		out := filepath.Join(tb.dir, "spark-out")
		query := `SELECT id, CAST(id * 1.5 AS DECIMAL(10,2)) AS price, DATE_ADD(DATE '2026-01-01', CAST(id AS INT)) AS day,
			TIMESTAMP '2026-11-29 10:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id AS INT)) AS ts,
			array(id, id * 2) AS tags, named_struct('a', id, 'b', concat('x', id)) AS info,
			concat('2026-11-2', CAST(7 + id % 3 AS STRING)) AS dt FROM range(24)`
		if err := call(t, map[string]any{"engine": "spark", "op": "write_parquet", "sql": query, "partition_by": []string{"dt"}, "path": out}, nil); err != nil {
			t.Fatalf("spark write: %v", err)
		}
		tb.run("commit", "--partitioned", out)
		tb.record("spark partitionBy")
		tb.checkEngines("dt")
	})
}

// TestParquetWithFieldIDs: Parquet whose columns carry field ids (as an
// Iceberg engine writes them, or pyarrow with field_id metadata). Ids
// that agree with the table's are read as they are; ids that disagree
// (here swapped) would make Java Iceberg and PyIceberg read the columns
// by the file's ids, swapped or NULL: such a file is refused at commit,
// naming the column, and nothing is committed.
func TestParquetWithFieldIDs(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		tb.run("commit", "--partition", "dt=2026-11-27", tb.write("a.csv", "id,amount\n1,1.5\n2,2.5\n"))
		tb.record("csv")
		write := func(name string, idID, amountID int) string {
			p := filepath.Join(tb.dir, "in", name)
			script := fmt.Sprintf(`import pyarrow as pa, pyarrow.parquet as pq
s = pa.schema([pa.field("id", pa.int64(), metadata={"PARQUET:field_id": "%d"}), pa.field("amount", pa.float64(), metadata={"PARQUET:field_id": "%d"})])
pq.write_table(pa.table({"id": [7, 8], "amount": [7.5, 8.5]}, schema=s), %q)
`, idID, amountID, p)
			if err := call(t, map[string]any{"engine": "python", "op": "exec", "code": script}, nil); err != nil {
				t.Fatal(err)
			}
			return p
		}
		tb.run("commit", "--partition", "dt=2026-11-28", write("same.parquet", 1, 2))
		tb.record("parquet with the table's ids")
		tb.checkEngines("dt")
		_, err := tb.try("commit", "--partition", "dt=2026-11-29", write("swapped.parquet", 2, 1))
		if err == nil || !strings.Contains(err.Error(), "field id") {
			t.Fatalf("a Parquet file whose field ids disagree with the table's: %v, want a refusal naming the field id", err)
		}
	})
}
