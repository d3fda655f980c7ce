package orchestrators

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
	t.Parallel() // the orchestrators mostly wait: on retry delays and their own polling
	for _, store := range []string{"file", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			s := newScenario(t, store)
			steps := s.schedule()
			runs, log := s.airflow(scheduleDays(steps))
			if len(runs) != len(steps) {
				t.Fatalf("%d DAG runs recorded, want %d\n%s", len(runs), len(steps), tail(log, 4000))
			}
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
	c := r.Load
	switch {
	case c == nil:
		t.Errorf("%s: the load returned nothing", day)
	case c.Partition != "dt="+day || c.Rows != int64(dayRows[day]) || c.RunID != "pswap_sales/"+r.RunID:
		t.Errorf("%s: commit %+v, want dt=%s with %d rows by run pswap_sales/%s", day, c, day, dayRows[day], r.RunID)
	case !again && (!c.Changed || c.Outcome != "committed"):
		t.Errorf("%s: first commit %+v, want changed", day, c)
	case again && (c.Changed || c.Outcome != "same-run" || c.StagedGeneration != ""):
		t.Errorf("%s: the second run's commit %+v, want same-run, nothing uploaded", day, c)
	}
}

// airflow runs the example DAG for the days in one Airflow process and
// returns the runs it recorded and its log.
func (s *scenario) airflow(days []string) ([]airflowRun, string) {
	t := s.t
	results := filepath.Join(s.dir, "airflow-runs.jsonl")
	home := filepath.Join(s.dir, "airflow")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	dags := filepath.Join(repoRoot(), "examples", "airflow")
	args := append([]string{filepath.Join(repoRoot(), "integration", "orchestrators", "airflow_runner.py"),
		results, filepath.Join(dags, "pswap_sales.py"), "pswap_sales"}, days...)
	cmd := exec.Command(orchPython(t), args...)
	cmd.Env = append(s.env, "AIRFLOW_HOME="+home, "AIRFLOW__CORE__DAGS_FOLDER="+dags,
		"AIRFLOW__CORE__LOAD_EXAMPLES=False", "PYTHONDONTWRITEBYTECODE=1")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	err := cmd.Run()
	t.Logf("Airflow ran %d DAG runs in %s", len(days), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("Airflow: %v\n%s", err, tail(log.String(), 6000))
	}
	return readRuns[airflowRun](t, results, log.String()), log.String()
}

// tail is the end of a long log.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}
