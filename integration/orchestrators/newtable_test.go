package orchestrators

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestDagsterNewTable materializes the Dagster example on a table whose
// first day comes after the partitions definition's start, as any table a
// user creates from the example does: the completeness check covers the
// table's days, from its first partition, so the first run's check passes
// (it failed before, checking from a start date hard-coded in the example
// with no data before the table existed), and a day missing between the
// table's first and the run's partition still fails it.
func TestDagsterNewTable(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Dagster takes a while to start")
	}
	t.Parallel()
	s := newScenario(t, "file")
	first, later := days[1], days[4] // the table begins on the second day; days 3 and 4 are gaps
	runs, _ := orchestrate[dagsterRun](s, "dagster", "DAGSTER_HOME", "sales_job", []step{{day: first}, {day: later}})
	for i, want := range []map[string]bool{
		{"verified": true, "complete": true},
		{"verified": true, "complete": false},
	} {
		r := runs[i]
		if r.Status != "SUCCESS" || fmt.Sprint(r.Checks) != fmt.Sprint(want) {
			t.Errorf("%s: %s, checks %v, want SUCCESS with %v; errors %q", r.Partition, r.Status, r.Checks, want, r.Errors)
		}
	}
}

// TestAirflowNewTable is TestDagsterNewTable for the Airflow example
// (catchup=False: a new DAG runs no day before its first load), whose
// gap_check also started at the DAG's hard-coded start date.
func TestAirflowNewTable(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Airflow takes a while to start")
	}
	t.Parallel()
	s := newScenario(t, "file")
	first, later := days[1], days[4]
	runs, _ := orchestrate[airflowRun](s, "airflow", "AIRFLOW_HOME", "pswap_sales", []step{{day: first}, {day: later}},
		"AIRFLOW__CORE__DAGS_FOLDER="+filepath.Join(repoRoot(), "examples", "airflow"), "AIRFLOW__CORE__LOAD_EXAMPLES=False")
	for i, want := range []string{"success", "failed"} {
		r := runs[i]
		if load, gaps := r.task("load"), r.task("gap_check"); load.State != "success" || gaps.State != want {
			t.Errorf("%s: load %s, gap_check %s, want load success, gap_check %s", r.Start, load.State, gaps.State, want)
		}
	}
}
