package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The attempt's identity in the audit: from Airflow's environment (the
// run id too), from Dagster's, and from flags, which win over either.
func TestAuditIdentity(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "sales")
	csv := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(csv, []byte("id,amount\n1,1.5\n2,2.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	airflow := map[string]string{"AIRFLOW_CTX_DAG_ID": "sales_daily", "AIRFLOW_CTX_TASK_ID": "load",
		"AIRFLOW_CTX_EXECUTION_DATE": "2026-11-27T00:00:00+00:00", "AIRFLOW_CTX_DAG_RUN_ID": "scheduled__2026-11-27"}
	dagster := map[string]string{"DAGSTER_RUN_ID": "9f1c", "DAGSTER_JOB_NAME": "sales_job"}
	for _, c := range []struct {
		day  string
		env  map[string]string
		args []string
		want string // run_id job task logical_date job_run_id
	}{
		{"dt=2026-11-27", airflow, nil, "sales_daily/scheduled__2026-11-27 sales_daily load 2026-11-27T00:00:00+00:00 scheduled__2026-11-27"},
		{"dt=2026-11-28", dagster, []string{"--run-id", "d/1"}, "d/1 sales_job   9f1c"},
		{"dt=2026-11-29", airflow, []string{"--job", "backfill", "--task", "fix", "--logical-date", "2026-11-29"},
			"sales_daily/scheduled__2026-11-27 backfill fix 2026-11-29 scheduled__2026-11-27"},
	} {
		args := append([]string{"commit", "--table", table, "--partition", c.day, csv}, c.args...)
		if code, out, errOut := invoke(t, c.env, "", args...); code != exitOK {
			t.Fatalf("commit %s: exit %d %s %s", c.day, code, out, errOut)
		}
		code, out, errOut := invoke(t, nil, "", "audit", "--table", table, "--partition", c.day, "--format", "json")
		if code != exitOK {
			t.Fatalf("audit: exit %d %s %s", code, out, errOut)
		}
		var doc struct {
			Rows []struct {
				RunID       string `json:"run_id"`
				Status      string `json:"status"`
				Job         string `json:"job"`
				Task        string `json:"task"`
				LogicalDate string `json:"logical_date"`
				JobRunID    string `json:"job_run_id"`
			} `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Rows) != 1 {
			t.Fatalf("audit %s: %v %s", c.day, err, out)
		}
		r := doc.Rows[0]
		if got := r.RunID + " " + r.Job + " " + r.Task + " " + r.LogicalDate + " " + r.JobRunID; got != c.want || r.Status != "succeeded" {
			t.Errorf("%s: %q (%s), want %q (succeeded)", c.day, got, r.Status, c.want)
		}
	}
	if code, _, errOut := invoke(t, nil, "", "commit", "--table", table, "--partition", "dt=2026-11-30", "--job", "a\x01b", csv); code != exitUsage {
		t.Errorf("--job with a control character: exit %d (%s), want a usage error", code, errOut)
	}
}
