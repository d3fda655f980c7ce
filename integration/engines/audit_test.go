package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/faultproxy"
)

// auditRow is one row of `pswap audit --format json`, kept as decoded
// (numbers as float64, null as nil) for the comparison with the engines.
type auditRow = map[string]any

// TestAudit builds the example table's story on each store (the daily
// loads of examples/daily.sh, a retry, a backfill of one day, then a
// backfill of two missing days with `pswap commit --partitioned`, killed
// (SIGKILL, a real process) while its second partition uploads), and
// checks:
//   - `pswap audit` against `pswap history` of every partition, exactly;
//   - the killed attempt is there: an uncommitted attempt of the partition
//     that did not land, with the files it uploaded;
//   - the audit's Iceberg table (`pswap audit --publish`), read by DuckDB and
//     by PyIceberg, holds exactly the rows of `pswap audit --format json`;
//   - on MinIO, the README's three queries print what the README shows;
//   - the backfill re-run commits what the kill left out; the audit then
//     shows the dead attempt beside the commit, and matches history again.
func TestAudit(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		data := filepath.Join(repoRoot(), "examples", "data")
		for _, d := range []string{"2026-11-27", "2026-11-28", "2026-11-29"} {
			tb.run("commit", "--interval", d+"/P1D", "--run-id", "daily/"+d, filepath.Join(data, "sales", d+".csv"))
		}
		tb.run("commit", "--interval", "2026-11-28/P1D", "--run-id", "daily/2026-11-28", filepath.Join(data, "sales", "2026-11-28.csv"))
		tb.run("commit", "--interval", "2026-11-28/P1D", "--run-id", "backfill/2026-11-28", filepath.Join(data, "sales-corrected", "2026-11-28.csv"))

		src := tb.backfillInputs()
		args := []string{"commit", "--partitioned", src, "--run-id", "backfill/2026-12", "--parallel", "1", "--table", tb.url}
		files := tb.killBackfill(args, "dt=2026-12-01")

		rows := tb.auditAgainstHistory()
		var dead []auditRow
		for _, r := range rows {
			if r["kind"] == "staged" {
				dead = append(dead, r)
			}
		}
		if len(dead) != 1 || dead[0]["partition"] != "dt=2026-12-01" || dead[0]["state"] != "uncommitted" ||
			dead[0]["files"] != float64(files) || dead[0]["rows"] != nil || dead[0]["run_id"] != "backfill/2026-12/dt=2026-12-01" ||
			dead[0]["status"] != "started" {
			t.Fatalf("the killed backfill's attempts: %v, want one uncommitted (started) attempt of dt=2026-12-01 with its %d files and its run id (its attempt record), rows unknown", dead, files)
		}

		tb.checkAuditTable(rows)
		if tb.store == "minio" {
			tb.checkReadmeAuditQueries()
		}

		// The re-run: dt=2026-11-30 is a same-run no-op, dt=2026-12-01 commits.
		tb.run(args[:len(args)-2]...)
		rows = tb.auditAgainstHistory()
		states := map[string]int{}
		for _, r := range rows {
			if r["partition"] == "dt=2026-12-01" {
				states[fmt.Sprint(r["kind"], "/", r["state"])]++
			}
		}
		if want := map[string]int{"commit/current": 1, "staged/uncommitted": 1}; fmt.Sprint(states) != fmt.Sprint(want) {
			t.Errorf("dt=2026-12-01 after the re-run: %v, want %v", states, want)
		}
		tb.checkAuditTable(rows)
	})
}

// backfillInputs writes the backfill's folder: dt=2026-11-30 with a few
// rows, dt=2026-12-01 with three Parquet files of 150,000 rows (each
// uploaded as it is, so the kill finds the partition halfway).
func (tb *table) backfillInputs() string {
	tb.t.Helper()
	src := filepath.Join(tb.dir, "backfill")
	tb.write("../backfill/dt=2026-11-30/sales.csv", "order_id,sold_at,store,sku,quantity,amount\n"+
		"300001,2026-11-30T09:01:00Z,lisbon,SKU-1001,2,13.50\n300002,2026-11-30T10:15:00Z,berlin,SKU-1004,1,8.00\n"+
		"300003,2026-11-30T17:40:00Z,madrid,SKU-1002,3,21.75\n")
	dir := filepath.Join(src, "dt=2026-12-01")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	for i := range 3 {
		q := fmt.Sprintf(`SELECT (%d * 1000000 + r)::BIGINT AS order_id,
			TIMESTAMPTZ '2026-12-01 00:00:00+00' + to_microseconds(r * 250000) AS sold_at,
			md5(r::VARCHAR || '%d') AS store, 'SKU-' || (1000 + r %% 7)::VARCHAR AS sku,
			(1 + r %% 5)::BIGINT AS quantity, (r %% 1000) / 4.0 AS amount FROM range(150000) t(r)`, i, i)
		tb.duckWrite(q, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), "FORMAT parquet")
	}
	return src
}

// killBackfill runs the backfill and kills it (SIGKILL) once partition
// part has uploaded files but not committed; it returns how many files
// the dead attempt left. On MinIO the store's reply to that partition's
// manifest PUT is held by a proxy until the kill, so that the manifest
// never lands: deterministic. On a file table the kill comes as soon as
// the partition's first data file is in place, while the other two are
// still being checked and copied.
func (tb *table) killBackfill(args []string, part string) int {
	tb.t.Helper()
	cmd := exec.Command(pswapBin(tb.t), args...)
	cmd.Env = append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	held := make(chan struct{}, 1)
	if tb.store == "minio" {
		proxy, err := faultproxy.Start(os.Getenv("AWS_ENDPOINT_URL"))
		if err != nil {
			tb.t.Fatal(err)
		}
		tb.t.Cleanup(func() { proxy.Close() })
		proxy.SetDelay(5 * time.Minute)
		proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
			if r.IsPut() && strings.Contains(r.Path, "/"+layout.ManifestsPrefix(part)) {
				select {
				case held <- struct{}{}:
				default:
				}
				return faultproxy.Delay
			}
			return faultproxy.Pass
		})
		cmd.Env = append(cmd.Env, "AWS_ENDPOINT_URL="+proxy.URL)
	} else {
		go func() {
			for {
				if m, _ := filepath.Glob(filepath.Join(tb.root, filepath.FromSlash(layout.GenerationsPrefix(part)), "*", "*.parquet")); len(m) > 0 {
					held <- struct{}{}
					return
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
	}
	if err := cmd.Start(); err != nil {
		tb.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-held:
		if err := cmd.Process.Kill(); err != nil {
			tb.t.Fatal(err)
		}
		<-exited
	case err := <-exited:
		tb.t.Fatalf("the backfill ended (%v) before its kill:\n%s", err, stderr.String())
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		tb.t.Fatalf("the backfill never reached %s:\n%s", part, stderr.String())
	}
	if _, err := tb.try("show", "--partition", part); err == nil {
		tb.t.Fatalf("%s committed before the kill: the test needs the kill first (bigger inputs?)", part)
	}
	if tb.store == "file" {
		// The files of the attempt, the temporary file of the upload the
		// kill cut short included: the audit counts an unfinished upload
		// as one of the attempt's files.
		m, _ := filepath.Glob(filepath.Join(tb.root, filepath.FromSlash(layout.GenerationsPrefix(part)), "*", "*"))
		return len(m)
	}
	return 3
}

// auditAgainstHistory returns `pswap audit --format json` of the table,
// after checking its committed rows against `pswap history` of every
// partition: the same generations, with the same parent, run id, rows,
// bytes, files, times (in microseconds, Iceberg's unit), rollback, current
// and superseded-by.
func (tb *table) auditAgainstHistory() []auditRow {
	tb.t.Helper()
	var doc struct {
		Rows []auditRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(tb.run("audit", "--format", "json")), &doc); err != nil {
		tb.t.Fatal(err)
	}
	var ls struct {
		Partitions []struct {
			Partition string `json:"partition"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(tb.run("ls", "--json")), &ls); err != nil {
		tb.t.Fatal(err)
	}
	byGen := map[string]auditRow{}
	for _, r := range doc.Rows {
		byGen[r["generation"].(string)] = r
	}
	us := func(v any) string {
		ts, err := time.Parse(time.RFC3339Nano, v.(string))
		if err != nil {
			tb.t.Fatal(err)
		}
		return ts.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
	}
	committed := 0
	for _, p := range ls.Partitions {
		var h struct {
			Generations []map[string]any `json:"generations"`
		}
		if err := json.Unmarshal([]byte(tb.run("history", "--partition", p.Partition, "--json")), &h); err != nil {
			tb.t.Fatal(err)
		}
		for i, e := range h.Generations {
			committed++
			r := byGen[e["generation"].(string)]
			if r == nil {
				tb.t.Errorf("%s: history's %s has no audit row", p.Partition, e["generation"])
				continue
			}
			state, superseded := "superseded", ""
			if e["current"] == true {
				state = "current"
			} else {
				superseded = h.Generations[i-1]["generation"].(string)
			}
			want := fmt.Sprint(p.Partition, e["parent"], e["run_id"], e["rows"], e["bytes"], e["files"],
				us(e["created_at"]), us(e["committed_at"]), e["rollback_of"], state, superseded)
			got := fmt.Sprint(r["partition"], r["parent"], r["run_id"], r["rows"], r["bytes"], r["files"],
				us(r["created_at"]), us(r["committed_at"]), r["rollback_of"], r["state"], r["superseded_by"])
			if got != want {
				tb.t.Errorf("%s %s:\naudit   %s\nhistory %s", p.Partition, e["generation"], got, want)
			}
		}
	}
	noops := 0
	for _, r := range doc.Rows {
		if r["state"] == "no-op" {
			noops++ // a retry of a run that had committed: a row of its own
		}
	}
	if n := len(doc.Rows) - committed - noops; n != 1 {
		tb.t.Errorf("%d audit rows, %d of them in histories, %d no-ops: want exactly one more (the killed attempt)", len(doc.Rows), committed, noops)
	}
	return doc.Rows
}

// checkAuditTable publishes the audit table and reads it with DuckDB and
// PyIceberg: each must return exactly rows (every column; `day` the day of
// the row's partition).
func (tb *table) checkAuditTable(rows []auditRow) {
	tb.t.Helper()
	var pub struct {
		AuditTable string `json:"audit_table"`
		Metadata   string `json:"metadata_location"`
		Rows       int    `json:"rows"`
	}
	if err := json.Unmarshal([]byte(tb.run("audit", "--publish", "--json")), &pub); err != nil {
		tb.t.Fatal(err)
	}
	if pub.Rows != len(rows) || pub.AuditTable != tb.url+"__audit" {
		tb.t.Fatalf("audit --publish: %+v, want %d rows in %s__audit", pub, len(rows), tb.url)
	}
	want := make([]map[string]any, len(rows))
	for i, r := range rows {
		w := map[string]any{"day": strings.TrimPrefix(r["partition"].(string), "dt=")}
		for k, v := range r {
			switch v := v.(type) {
			case float64:
				w[k] = fmt.Sprint(int64(v))
			case string:
				w[k] = v
				if strings.HasSuffix(k, "_at") {
					ts, err := time.Parse(time.RFC3339Nano, v)
					if err != nil {
						tb.t.Fatal(err)
					}
					w[k] = ts.UTC().Format("2006-01-02T15:04:05.000000")
				}
			default:
				w[k] = v
			}
		}
		want[i] = w
	}
	wantRows := canonRows(tb.t, want)
	root := tb.url + "__audit"
	for _, engine := range []string{"duckdb", "pyiceberg"} {
		var got []map[string]any
		if err := call(tb.t, map[string]any{"engine": engine, "op": "scan", "table": root, "metadata": pub.Metadata}, &got); err != nil {
			tb.t.Fatalf("%s reading the audit table: %v", engine, err)
		}
		if g := canonRows(tb.t, got); !slices.Equal(g, wantRows) {
			tb.t.Errorf("%s read the audit table as\n%s\nwant (pswap audit --format json)\n%s", engine, strings.Join(g, "\n"), strings.Join(wantRows, "\n"))
		}
	}
}

// checkReadmeAuditQueries runs the README's audit queries (each a sql
// block after "<!-- audit-query: NAME -->") with DuckDB on the audit
// table, and compares what they return with the block after
// "<!-- audit-output: NAME -->".
func (tb *table) checkReadmeAuditQueries() {
	tb.t.Helper()
	queries, outputs := readmeSnippets(tb.t, "audit-query"), readmeSnippets(tb.t, "audit-output")
	if len(queries) != 3 || len(outputs) != 3 {
		tb.t.Fatalf("README: %d audit queries and %d outputs, want 3 of each", len(queries), len(outputs))
	}
	var pub struct {
		Metadata string `json:"metadata_location"`
	}
	if err := json.Unmarshal([]byte(tb.run("audit", "--publish", "--json")), &pub); err != nil {
		tb.t.Fatal(err)
	}
	view := fmt.Sprintf("CREATE OR REPLACE VIEW audit AS SELECT * FROM iceberg_scan('%s')", pub.Metadata)
	if err := call(tb.t, map[string]any{"engine": "duckdb", "op": "sql", "sql": view}, nil); err != nil {
		tb.t.Fatal(err)
	}
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var got []map[string]any
		if err := call(tb.t, map[string]any{"engine": "duckdb", "op": "sql", "sql": queries[name]}, &got); err != nil {
			tb.t.Fatalf("README audit query %s: %v", name, err)
		}
		text := renderRows(queries[name], got)
		if strings.TrimSpace(text) != strings.TrimSpace(outputs[name]) {
			tb.t.Errorf("README audit query %s printed\n%s\nthe README shows\n%s", name, text, outputs[name])
		}
	}
}

// renderRows prints rows as aligned columns, in the order the query's
// SELECT names them (a row's keys carry no order).
func renderRows(query string, rows []map[string]any) string {
	var cols []string
	if len(rows) > 0 {
		for k := range rows[0] {
			cols = append(cols, k)
		}
		sel := strings.ToLower(query)
		sort.Slice(cols, func(i, j int) bool { return colPos(sel, cols[i]) < colPos(sel, cols[j]) })
	}
	cells := [][]string{cols}
	for _, r := range rows {
		line := make([]string, len(cols))
		for i, c := range cols {
			if r[c] == nil {
				line[i] = "NULL"
			} else {
				line[i] = fmt.Sprint(r[c])
			}
		}
		cells = append(cells, line)
	}
	width := make([]int, len(cols))
	for _, l := range cells {
		for i, c := range l {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, l := range cells {
		for i, c := range l {
			if i == len(l)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s  ", width[i], c)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// colPos is where column c is named in the query's SELECT list (its
// alias, "AS c", or the name itself).
func colPos(sel, c string) int {
	if i := strings.Index(sel, " as "+c); i >= 0 {
		return i
	}
	if i := strings.Index(sel, c); i >= 0 {
		return i
	}
	return len(sel)
}
