package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/faultproxy"
)

// The two questions of the seeds' audit, as one SQL query each on the
// audit table (`pswap audit --publish`), read by DuckDB as the view audit.
const (
	// Which day of this backfill died? Every attempt of the backfill's
	// DAG that did not end well (started: killed or still running;
	// failed; abandoned), with its logical date and run id.
	auditQueryDied = `SELECT logical_date, partition, run_id, status
FROM audit
WHERE job = 'sales_backfill' AND status NOT IN ('succeeded', 'no-op')
ORDER BY started_at`
	// Did every partition of the last 30 days load? The days without a
	// succeeded attempt (none: yes). The README's version counts back
	// from current_date; this one from the backfill's end.
	auditQueryMissing = `SELECT strftime(d, 'dt=%Y-%m-%d') AS missing
FROM range(DATE '2026-12-01' - INTERVAL 30 DAY, DATE '2026-12-01', INTERVAL 1 DAY) t(d)
WHERE strftime(d, 'dt=%Y-%m-%d') NOT IN (SELECT partition FROM audit WHERE status = 'succeeded')
ORDER BY missing`
)

// TestAuditKilledBackfill: an Airflow backfill of the 30 days of November,
// one process per day with Airflow's task environment, where the process
// of 2026-11-17 is killed (SIGKILL) while it uploads (on MinIO, while its
// manifest PUT is held; on a file table, once its first file and its
// attempt record landed), and 2026-11-05 is retried after it succeeded (a
// no-op). Then, on the audit table:
//   - "which day died?" answers 2026-11-17, with its run id, status
//     started (it may be running: nothing tells it died yet);
//   - "did every day load?" answers: all but dt=2026-11-17;
//   - the retry's no-op is a row pointing at the day's commit.
//
// The killed day is retried (the same run): the dead attempt is then
// failed ("a later attempt of its run ended"), and every day loaded.
func TestAuditKilledBackfill(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		airflow := func(day string) []string {
			return []string{"AIRFLOW_CTX_DAG_ID=sales_backfill", "AIRFLOW_CTX_TASK_ID=load_day",
				"AIRFLOW_CTX_LOGICAL_DATE=" + day + "T00:00:00+00:00", "AIRFLOW_CTX_DAG_RUN_ID=backfill__" + day}
		}
		const killed = "2026-11-17"
		var killedDir string
		for d := 1; d <= 30; d++ {
			day := fmt.Sprintf("2026-11-%02d", d)
			if day == killed {
				killedDir = tb.bigDay(day)
				tb.killAttempt(killedDir, day, airflow(day))
				continue
			}
			in := tb.write(day+".csv", fmt.Sprintf("order_id,amount\n%d,1.5\n%d,2.5\n", d*10, d*10+1))
			tb.runEnv(airflow(day), "commit", "--interval", day+"/P1D", in)
		}
		retry := tb.runEnv(airflow("2026-11-05"), "commit", "--interval", "2026-11-05/P1D", "--json", tb.write("2026-11-05.csv", "order_id,amount\n50,1.5\n51,2.5\n"))
		if !strings.Contains(retry, `"same-run"`) {
			t.Fatalf("the retry of 2026-11-05: %s, want a same-run no-op", retry)
		}

		t.Logf("pswap audit --partition dt=%s:\n%s", killed, tb.run("audit", "--partition", "dt="+killed))
		rows := tb.auditRows()
		var noops []auditRow
		for _, r := range rows {
			if r["status"] == "no-op" {
				noops = append(noops, r)
			}
		}
		if len(noops) != 1 || noops[0]["partition"] != "dt=2026-11-05" || noops[0]["run_id"] != "sales_backfill/backfill__2026-11-05" ||
			noops[0]["noop_of"] == "" || noops[0]["job"] != "sales_backfill" || noops[0]["task"] != "load_day" {
			t.Errorf("no-op rows %v, want the retry of dt=2026-11-05, pointing at its commit", noops)
		}

		tb.auditView()
		died := tb.auditQuery(auditQueryDied)
		want := "logical_date               partition      run_id                               status\n" +
			"2026-11-17T00:00:00+00:00  dt=2026-11-17  sales_backfill/backfill__2026-11-17  started\n"
		if died != want {
			t.Errorf("which day died?\n%s\nwant\n%s", died, want)
		}
		if got, want := tb.auditQuery(auditQueryMissing), "missing\ndt=2026-11-17\n"; got != want {
			t.Errorf("did every day load?\n%s\nwant\n%s", got, want)
		}

		// The retry of the killed day: it loads, and the dead attempt is
		// then known to have died.
		tb.runEnv(airflow(killed), "commit", "--interval", killed+"/P1D", killedDir)
		t.Logf("after the retry, pswap audit --partition dt=%s:\n%s", killed, tb.run("audit", "--partition", "dt="+killed))
		tb.auditView()
		want = "logical_date               partition      run_id                               status\n" +
			"2026-11-17T00:00:00+00:00  dt=2026-11-17  sales_backfill/backfill__2026-11-17  failed\n"
		if died := tb.auditQuery(auditQueryDied); died != want {
			t.Errorf("which day died, after its retry?\n%s\nwant\n%s", died, want)
		}
		if got, want := tb.auditQuery(auditQueryMissing), "missing\n"; got != want {
			t.Errorf("did every day load, after the retry?\n%s\nwant\n%s", got, want)
		}
	})
}

// runEnv is run with more environment variables.
func (tb *table) runEnv(env []string, args ...string) string {
	tb.t.Helper()
	cmd := exec.Command(pswapBin(tb.t), append(args, "--table", tb.url)...)
	cmd.Env = append(append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.t.Fatalf("pswap %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// bigDay writes a day's input folder of three Parquet files of 150,000
// rows (uploaded as they are: a kill finds the day halfway).
func (tb *table) bigDay(day string) string {
	tb.t.Helper()
	dir := filepath.Join(tb.dir, "big", day)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	for i := range 3 {
		q := fmt.Sprintf(`SELECT (%d * 1000000 + r)::BIGINT AS order_id, (r %% 1000) / 4.0 AS amount FROM range(150000) t(r)`, i)
		tb.duckWrite(q, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), "FORMAT parquet")
	}
	return dir
}

// killAttempt runs the day's commit and kills it (SIGKILL) mid-upload:
// on MinIO its manifest PUT is held by a proxy until the kill; on a file
// table the kill comes once its first data file and its attempt record
// are in place.
func (tb *table) killAttempt(dir, day string, env []string) {
	tb.t.Helper()
	part := "dt=" + day
	cmd := exec.Command(pswapBin(tb.t), "commit", "--interval", day+"/P1D", dir, "--table", tb.url)
	cmd.Env = append(append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true"), env...)
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
			root := filepath.Join(tb.root, filepath.FromSlash(layout.MetaPrefix(part)))
			for {
				data, _ := filepath.Glob(filepath.Join(root, "gen", "*", "*.parquet"))
				rec, _ := filepath.Glob(filepath.Join(root, "attempts", "*.json"))
				if len(data) > 0 && len(rec) > 0 {
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
		tb.t.Fatalf("the commit of %s ended (%v) before its kill:\n%s", day, err, stderr.String())
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		tb.t.Fatalf("the commit of %s never reached its upload:\n%s", day, stderr.String())
	}
	if _, err := tb.try("show", "--partition", part); err == nil {
		tb.t.Fatalf("%s committed before the kill: the test needs the kill first (bigger inputs?)", part)
	}
}

// auditRows returns `pswap audit --format json`'s rows.
func (tb *table) auditRows() []auditRow {
	tb.t.Helper()
	var doc struct {
		Rows []auditRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(tb.run("audit", "--format", "json")), &doc); err != nil {
		tb.t.Fatal(err)
	}
	return doc.Rows
}

// auditView publishes the audit table and makes DuckDB's view audit of
// it.
func (tb *table) auditView() {
	tb.t.Helper()
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
}

// auditQuery runs a query on the view audit with DuckDB and returns its
// rows as aligned text (renderRows).
func (tb *table) auditQuery(q string) string {
	tb.t.Helper()
	var got []map[string]any
	if err := call(tb.t, map[string]any{"engine": "duckdb", "op": "sql", "sql": q}, &got); err != nil {
		tb.t.Fatalf("%s: %v", q, err)
	}
	if len(got) == 0 {
		// renderRows prints no header without rows: the column's name.
		_, after, _ := strings.Cut(strings.ToLower(q), " as ")
		name, _, _ := strings.Cut(after, "\n")
		return name + "\n"
	}
	return renderRows(q, got)
}
