package orchestrators

import (
	"fmt"
	"path/filepath"
	"testing"
)

// airflowRun is what airflow_runner.py records of one DAG run.
type airflowRun struct {
	RunID string        `json:"run_id"`
	Start string        `json:"start"`
	State string        `json:"state"`
	Tasks []airflowTask `json:"tasks"`
	Load  *commitResult `json:"load"`
}

type airflowTask struct {
	Task  string   `json:"task"`
	State string   `json:"state"`
	Tries []string `json:"tries"`
}

func (r airflowRun) task(id string) airflowTask {
	for _, ti := range r.Tasks {
		if ti.Task == id {
			return ti
		}
	}
	return airflowTask{Task: id, State: "missing"}
}

// TestAirflow runs examples/airflow/pswap_sales.py with Airflow's
// dag.test() (SQLite metadata database) for the scenario's days, then for
// the five days again (the same run ids: a backfill run twice), in one
// Airflow process per store.
func TestAirflow(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *scenario) {
		steps := s.schedule()
		runs, log := orchestrate[airflowRun](s, "airflow", "AIRFLOW_HOME", "pswap_sales", steps,
			"AIRFLOW__CORE__DAGS_FOLDER="+filepath.Join(repoRoot(), "examples", "airflow"), "AIRFLOW__CORE__LOAD_EXAMPLES=False")
		first := map[string]commitResult{}
		for i, r := range runs {
			if r.Load != nil && !steps[i].again {
				first[r.Load.Partition] = *r.Load
			}
			checkAirflowRun(t, s, steps[i], r)
		}
		// The gap check fails from the bad day on, in both passes.
		gaps := 4 + len(s.firstPass()) - len(days)
		if got, want := fmt.Sprint(exitsSeen(log)), fmt.Sprint(s.wantExits(gaps)); got != want {
			t.Errorf("pswap failures seen in Airflow's log %s, want %s", got, want)
		}
		s.checkFaults()
		s.checkTable(first)
	})
}

// checkAirflowRun checks one DAG run: the first pass commits every day but
// the bad and the conflicting one, retrying the flaky and the killed day;
// the second is a no-op everywhere.
func checkAirflowRun(t *testing.T, s *scenario, st step, r airflowRun) {
	t.Helper()
	day, again := st.day, st.again
	load, notify, gaps := r.task("load"), r.task("notify"), r.task("gap_check")
	t.Logf("%s again=%v: %s, load %s %v, notify %s, gap_check %s", day, again, r.State, load.State, load.Tries, notify.State, gaps.State)
	if r.Start != day+"T00:00:00+00:00" {
		t.Errorf("%s: the run's interval starts at %s", day, r.Start)
	}
	wantTries, wantNotify, wantGaps := 1, "success", "success"
	if !again {
		wantTries = s.loadTries(day)
	} else {
		wantNotify = "skipped"
	}
	if day >= badDay {
		wantGaps = "failed" // the bad day is missing from here on
	}
	if day == badDay || day == conflictDay {
		if load.State != "failed" || len(load.Tries) != 1 || notify.State != "upstream_failed" || gaps.State != wantGaps {
			t.Errorf("%s: load %s after %d tries, notify %s, gap_check %s: want failed after 1 try (never retried), upstream_failed, failed",
				day, load.State, len(load.Tries), notify.State, gaps.State)
		}
		return
	}
	if load.State != "success" || len(load.Tries) != wantTries || notify.State != wantNotify || gaps.State != wantGaps {
		t.Errorf("%s: load %s after %v, notify %s, gap_check %s: want success after %d tries, %s, %s",
			day, load.State, load.Tries, notify.State, gaps.State, wantTries, wantNotify, wantGaps)
	}
	checkCommit(t, st, r.Load)
	if c := r.Load; c != nil && c.RunID != "pswap_sales/"+r.RunID {
		t.Errorf("%s: committed by run %q, want pswap_sales/%s", day, c.RunID, r.RunID)
	}
}
