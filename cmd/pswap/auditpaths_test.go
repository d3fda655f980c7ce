package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// auditRowsJSON runs pswap audit --format json on table and returns its rows.
func auditRowsJSON(t *testing.T, table string) []map[string]any {
	t.Helper()
	code, out, errOut := invoke(t, nil, "", "audit", "--table", table, "--format", "json")
	if code != exitOK {
		t.Fatalf("audit: exit %d %s %s", code, out, errOut)
	}
	var doc struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("audit: %v %s", err, out)
	}
	return doc.Rows
}

// TestAuditPaths: the attempt records of commit --partitioned (one batch
// record for the run), stage --reserve and rollback, read back with
// pswap audit under Airflow's environment: a partition of a backfill whose
// input is bad is a failed row with its run id and identity, its other
// partitions succeeded rows with them; a reservation whose engine never
// wrote or committed is a started row with the identity and the run id
// from the start (Airflow's dag_id/run_id by default, or --run-id: it had
// none until commit --staged); a rollback to a generation that is not
// there is a failed row with them.
func TestAuditPaths(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "sales")
	src := filepath.Join(dir, "out")
	for day, body := range map[string]string{"dt=2026-11-01": "id,amount\n1,1.5\n", "dt=2026-11-02": "id,amount\n2,2.5\n",
		"dt=2026-11-03": "id,amount\nnot-a-number,x\n"} {
		if err := os.MkdirAll(filepath.Join(src, day), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, day, "part-0.csv"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	airflow := map[string]string{"AIRFLOW_CTX_DAG_ID": "sales_backfill", "AIRFLOW_CTX_TASK_ID": "load",
		"AIRFLOW_CTX_LOGICAL_DATE": "2026-11-30T00:00:00+00:00", "AIRFLOW_CTX_DAG_RUN_ID": "backfill__1"}
	code, out, errOut := invoke(t, airflow, "", "commit", "--table", table, "--partitioned", src, "--run-id", "bf")
	if code == exitOK {
		t.Fatalf("a backfill with a bad partition: exit 0 %s", out)
	}
	status := func(rows []map[string]any) map[string]string {
		got := map[string]string{}
		for _, r := range rows {
			if r["job"] != "sales_backfill" || r["job_run_id"] != "backfill__1" {
				t.Errorf("a row without the run's identity: %v", r)
			}
			got[r["partition"].(string)+" "+r["run_id"].(string)] = r["status"].(string)
		}
		return got
	}
	got := status(auditRowsJSON(t, table))
	for k, want := range map[string]string{"dt=2026-11-01 bf/dt=2026-11-01": "succeeded", "dt=2026-11-02 bf/dt=2026-11-02": "succeeded",
		"dt=2026-11-03 bf/dt=2026-11-03": "failed"} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q (rows %v; backfill said %s %s)", k, got[k], want, got, out, errOut)
		}
	}

	if code, out, errOut := invoke(t, airflow, "", "stage", "--reserve", "--table", table, "--partition", "dt=2026-11-04"); code != exitOK {
		t.Fatalf("stage --reserve: exit %d %s %s", code, out, errOut)
	}
	if code, out, errOut := invoke(t, airflow, "", "stage", "--reserve", "--table", table, "--partition", "dt=2026-11-05",
		"--run-id", "spark-7", "--job", "spark_load", "--task", "write"); code != exitOK {
		t.Fatalf("stage --reserve --run-id: exit %d %s %s", code, out, errOut)
	}
	if code, out, errOut := invoke(t, airflow, "", "rollback", "--table", table, "--partition", "dt=2026-11-01", "--run-id", "undo",
		"--to", "01900000-0000-7000-8000-000000000001"); code == exitOK {
		t.Fatalf("rollback to a generation that is not there: exit 0 %s %s", out, errOut)
	}
	rows := auditRowsJSON(t, table)
	var flagged []map[string]any
	for i, r := range rows {
		if r["partition"] == "dt=2026-11-05" {
			flagged = append(flagged, r)
			rows = append(rows[:i:i], rows[i+1:]...)
			break
		}
	}
	got = status(rows)
	if got["dt=2026-11-04 sales_backfill/backfill__1"] != "started" || got["dt=2026-11-01 undo"] != "failed" {
		t.Errorf("the reservation's and the rollback's rows: %v, want the reservation started with Airflow's run id, the rollback failed", got)
	}
	if len(flagged) != 1 || flagged[0]["run_id"] != "spark-7" || flagged[0]["status"] != "started" || flagged[0]["job"] != "spark_load" ||
		flagged[0]["task"] != "write" || flagged[0]["job_run_id"] != "backfill__1" {
		t.Errorf("the reservation made with --run-id, --job and --task: %v", flagged)
	}
}
