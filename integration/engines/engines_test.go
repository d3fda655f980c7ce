package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testenv"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopReader()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestEngineVersions logs the versions the suite ran with.
func TestEngineVersions(t *testing.T) {
	var v map[string]string
	if err := call(t, map[string]any{"op": "versions"}, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"duckdb", "pyiceberg", "pyspark"} {
		if v[k] == "" {
			t.Errorf("no version for %s: %v", k, v)
		}
	}
	t.Logf("engines: %v", v)
}

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
		// gc keeps what the retained snapshots name; after it the current
		// snapshot and every retained one still read.
		tb.run("gc", "--keep", "0", "--min-age", "0s", "--snapshot-retention", "1h")
		tb.checkEngines("dt")
	})
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

// TestReadmeSnippets runs the README's engine snippets (each a python block
// after a "<!-- snippet: NAME -->" line) as a user would, each in a Python
// process of its own, on the CSV table of the quick start: each prints the
// rows of dt=2026-11-28, which must be what pswap says.
func TestReadmeSnippets(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippets := map[string]string{}
	for _, part := range strings.Split(string(readme), "<!-- snippet: ")[1:] {
		name, rest, _ := strings.Cut(part, " -->")
		_, code, ok := strings.Cut(rest, "```python\n")
		code, _, ok2 := strings.Cut(code, "```")
		if !ok || !ok2 {
			t.Fatalf("README: snippet %s has no python block", name)
		}
		snippets[name] = code
	}
	if len(snippets) != 3 {
		t.Fatalf("README has %d engine snippets, want pyiceberg, duckdb and spark", len(snippets))
	}
	dir, err := enginesDir()
	if err != nil {
		t.Fatal(err)
	}
	tb := &table{t: t, store: "file", dir: t.TempDir()}
	tb.url = filepath.Join(tb.dir, "sales")
	tb.root = tb.url
	data := filepath.Join(repoRoot(), "examples", "data")
	for _, d := range []string{"2026-11-27", "2026-11-28"} {
		tb.run("commit", "--partition", "dt="+d, filepath.Join(data, "sales", d+".csv"))
	}
	tb.run("commit", "--partition", "dt=2026-11-28", filepath.Join(data, "sales-corrected"))
	cur := tb.record("load")
	var want int64
	for _, f := range cur.files {
		if f.Partition == "dt=2026-11-28" {
			want += f.Rows
		}
	}
	home := duckHome(t)
	py := filepath.Join(dir, "venv", "bin", "python")
	var jars []string
	entries, _ := os.ReadDir(filepath.Join(dir, "jars"))
	for _, e := range entries {
		jars = append(jars, filepath.Join(dir, "jars", e.Name()))
	}
	for _, name := range []string{"pyiceberg", "duckdb", "spark"} {
		t.Run(name, func(t *testing.T) {
			prelude := fmt.Sprintf("table = %q\nmetadata = %q\njars = %q\n", tb.root, cur.metadata, strings.Join(jars, ","))
			cmd := exec.Command(py, "-c", prelude+snippets[name])
			cmd.Env = append(os.Environ(), "HOME="+home, "TZ=UTC")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, tail(stderr.String(), 3000))
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if got := lines[len(lines)-1]; got != fmt.Sprint(want) {
				t.Errorf("the README's %s snippet printed %q, want %d (the rows pswap lists for dt=2026-11-28)", name, got, want)
			}
		})
	}
}

// TestForeignWriter: a user appends rows to a pswap table with Spark (a
// path table: Spark writes the next vN.metadata.json and the hint). The
// next publish must neither drop that snapshot's data silently nor carry
// it: it refuses, naming the snapshot and what to do, and writes nothing;
// the commit itself stands.
func TestForeignWriter(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "sales")
	tb := &table{t: t, store: "file", url: root, root: root, dir: dir}
	tb.run("commit", "--partition", "dt=2026-11-27", tb.write("a.csv", "id,amount\n1,1.5\n2,2.5\n"))
	before := tb.record("commit 27")
	req := tb.request("spark", "sql", before)
	req["sql"] = "SELECT 1"
	var rows []map[string]any
	if err := call(t, req, &rows); err != nil {
		t.Fatal(err)
	}
	req = tb.request("spark", "append", before)
	req["sql"] = "SELECT 9 AS id, 9.5D AS amount, DATE '2026-11-27' AS dt"
	if err := call(t, req, nil); err != nil {
		t.Fatalf("spark append: %v", err)
	}
	out, err := tb.try("commit", "--partition", "dt=2026-11-28", "--json", tb.write("b.csv", "id,amount\n3,3.5\n"))
	if err != nil {
		t.Fatalf("the commit must stand when the publish is refused: %v", err)
	}
	var res struct {
		Published bool `json:"published"`
	}
	json.Unmarshal([]byte(out), &res)
	if res.Published {
		t.Fatalf("the commit published over Spark's snapshot: %s", out)
	}
	_, err = tb.try("publish")
	if err == nil || !strings.Contains(err.Error(), "changed by another writer") {
		t.Fatalf("pswap publish after a foreign snapshot: %v, want a refusal naming the other writer", err)
	}
	t.Logf("refusal: %v", err)
}

// TestSparkMaintenance: Spark's own maintenance run by a user on a pswap
// table. remove_orphan_files (the action behind the procedure, with a
// cut-off in the future) skips pswap's hidden _pswap folders: it deletes
// nothing pswap needs, and the table reads, verifies and commits as before.
// expire_snapshots removes the files of retired generations that only old
// snapshots name, which `rollback --to` of those generations then misses:
// the README says to leave expiry to pswap gc, and this test keeps that
// statement true.
func TestSparkMaintenance(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		data := filepath.Join(repoRoot(), "examples", "data")
		for _, d := range []string{"2026-11-27", "2026-11-28"} {
			tb.run("commit", "--partition", "dt="+d, filepath.Join(data, "sales", d+".csv"))
			tb.record("commit " + d)
		}
		first := strings.TrimSpace(tb.run("show", "--partition", "dt=2026-11-28", "--json"))
		tb.run("commit", "--partition", "dt=2026-11-28", filepath.Join(data, "sales-corrected"))
		cur := tb.record("replace 2026-11-28")

		var orphans []string
		if err := call(t, tb.request("spark", "orphans", cur), &orphans); err != nil {
			t.Fatalf("spark remove_orphan_files: %v", err)
		}
		for _, o := range orphans {
			if strings.Contains(o, "/_pswap/") || !strings.Contains(o, "/metadata/") {
				t.Errorf("remove_orphan_files deleted %s, which pswap needs", o)
			}
		}
		t.Logf("remove_orphan_files deleted %d file(s): %v", len(orphans), orphans)
		tb.run("verify")
		tb.checkEngines("dt")
		tb.run("commit", "--partition", "dt=2026-11-29", filepath.Join(data, "sales", "2026-11-29.csv"))
		tb.record("commit after orphans")
		tb.checkEngines("dt")

		var exp map[string]int64
		if err := call(t, tb.request("spark", "expire", tb.snaps[len(tb.snaps)-1]), &exp); err != nil {
			t.Fatalf("spark expire_snapshots: %v", err)
		}
		t.Logf("expire_snapshots: %v", exp)
		if exp["deleted_data_files"] != 1 {
			t.Errorf("expire_snapshots deleted %d data files, want 1 (the replaced generation of dt=2026-11-28): the README's warning is out of date", exp["deleted_data_files"])
		}
		var shown struct {
			Generation string `json:"generation"`
		}
		json.Unmarshal([]byte(first), &shown)
		if _, err := tb.try("rollback", "--partition", "dt=2026-11-28", "--to", shown.Generation); err == nil {
			t.Errorf("rollback to a generation whose files expire_snapshots deleted succeeded")
		}
		tb.run("verify")
	})
}

// duckHome returns a home folder in which DuckDB finds the extensions of
// the engines' packages as if INSTALLed (~/.duckdb/extensions/<version>/
// <platform>), so that a user's SQL (INSTALL httpfs; LOAD httpfs; LOAD
// iceberg) runs as it is, without a download.
func duckHome(t testing.TB) string {
	t.Helper()
	dir, err := enginesDir()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	setup := `import duckdb, importlib, os, glob, sys
plat = duckdb.execute("PRAGMA platform").fetchone()[0]
v = duckdb.__version__
dst = os.path.join(sys.argv[1], ".duckdb", "extensions", v if v.startswith("v") else "v" + v, plat)
os.makedirs(dst)
for name in ("iceberg", "avro", "httpfs", "aws"):
    m = importlib.import_module("duckdb_extension_" + name)
    for f in glob.glob(os.path.join(os.path.dirname(m.__file__), "extensions", "*", "*.duckdb_extension")):
        os.symlink(f, os.path.join(dst, os.path.basename(f)))
`
	py := filepath.Join(dir, "venv", "bin", "python")
	if out, err := exec.Command(py, "-c", setup, home).CombinedOutput(); err != nil {
		t.Fatalf("install the packaged DuckDB extensions: %v\n%s", err, out)
	}
	return home
}

// TestFilesDuckDBOverS3: the SQL of `pswap files --format duckdb` on an
// s3:// table runs in DuckDB (httpfs, the credential chain from the
// environment) against MinIO to exactly the rows pswap lists, and never
// holds the secret.
func TestFilesDuckDBOverS3(t *testing.T) {
	if !testenv.S3Enabled() {
		t.Skip("S3 tests need MinIO: run scripts/test.sh")
	}
	url := testenv.S3URL(t)
	tb := &table{t: t, store: "minio", url: url, root: url, dir: t.TempDir()}
	data := filepath.Join(repoRoot(), "examples", "data")
	for _, d := range []string{"2026-11-27", "2026-11-28", "2026-11-29"} {
		tb.run("commit", "--partition", "dt="+d, filepath.Join(data, "sales", d+".csv"))
	}
	cur := tb.record("three days")
	sql := tb.run("files", "--format", "duckdb")
	if secret := os.Getenv("AWS_SECRET_ACCESS_KEY"); secret == "" || strings.Contains(sql, secret) {
		t.Fatalf("files --format duckdb printed the secret key (or there is none to test with)")
	}
	dir, err := enginesDir()
	if err != nil {
		t.Fatal(err)
	}
	run := `import duckdb, json, sys
con = duckdb.connect()
stmts = [s for s in sys.stdin.read().split(";") if s.strip()]
for s in stmts[:-1]:
    con.execute(s)
rows = con.execute(stmts[-1]).fetch_arrow_table().to_pylist()
print(json.dumps([{k: str(v) for k, v in r.items()} for r in rows]))
`
	cmd := exec.Command(filepath.Join(dir, "venv", "bin", "python"), "-c", run)
	cmd.Env = append(os.Environ(), "HOME="+duckHome(t), "TZ=UTC")
	cmd.Stdin = strings.NewReader(sql)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB running pswap files --format duckdb: %v\n%s\nSQL:\n%s", err, tail(stderr.String(), 2000), sql)
	}
	var rows []map[string]string
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	var want int
	for _, f := range cur.files {
		want += int(f.Rows)
	}
	perDay := map[string]int{}
	for _, r := range rows {
		perDay[r["dt"]]++
	}
	if len(rows) != want || len(cur.rows) != want || len(perDay) != 3 {
		t.Fatalf("DuckDB read %d rows over %d days (%v), want %d over 3", len(rows), len(perDay), perDay, want)
	}
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

// TestRepairedMetadataReads: the latest metadata version truncated (as a
// crashed copy or a hand edit leaves it): every engine fails on it; pswap
// publish repairs it (a new version from the pointers and the version
// before), and every engine reads the table exactly again.
func TestRepairedMetadataReads(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		data := filepath.Join(repoRoot(), "examples", "data")
		for _, d := range []string{"2026-11-27", "2026-11-28"} {
			tb.run("commit", "--partition", "dt="+d, filepath.Join(data, "sales", d+".csv"))
			tb.record("commit " + d)
		}
		truncateLatest(t, tb)
		var pub struct {
			Repairs []string `json:"repairs"`
		}
		if err := json.Unmarshal([]byte(tb.run("publish", "--json")), &pub); err != nil || len(pub.Repairs) != 1 {
			t.Fatalf("pswap publish over a truncated version: %+v, %v; want one repair", pub, err)
		}
		tb.snaps = tb.snaps[:1] // the truncated version's snapshot is gone from the history
		tb.record("repaired")
		tb.checkEngines("dt")
	})
}

// truncateLatest cuts the table's latest metadata version in half.
func truncateLatest(t *testing.T, tb *table) {
	t.Helper()
	cur := tb.snaps[len(tb.snaps)-1]
	st, err := pswap.OpenStore(context.Background(), tb.url, pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := "metadata/" + path.Base(cur.metadata)
	data, _, err := store.ReadAll(context.Background(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), key, data[:len(data)/2], store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
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
