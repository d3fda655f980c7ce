package orchestrators

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// dagsterRun is what dagster_runner.py records of one run.
type dagsterRun struct {
	RunID     string                    `json:"run_id"`
	RootRunID string                    `json:"root_run_id"`
	Partition string                    `json:"partition"`
	Status    string                    `json:"status"`
	Steps     map[string][]string       `json:"steps"`
	Assets    map[string]map[string]any `json:"assets"`
	Checks    map[string]bool           `json:"checks"`
	Errors    []string                  `json:"errors"`
}

// commit is the commit the sales asset recorded in its metadata, nil if it
// materialized nothing.
func (r dagsterRun) commit() *commitResult {
	m, ok := r.Assets["sales"]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(m)
	var c commitResult
	_ = json.Unmarshal(b, &c)
	c.Partition = "dt=" + r.Partition
	return &c
}

// TestDagster materializes the sales asset of examples/dagster/pswap_sales.py
// for the scenario's days, then re-executes the runs of the five days (a
// backfill run twice), in one Dagster process per store.
func TestDagster(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *scenario) {
		steps := s.schedule()
		runs, _ := orchestrate[dagsterRun](s, "dagster", "DAGSTER_HOME", "sales_job", steps)
		first := map[string]commitResult{}
		var errors []string
		for i, r := range runs {
			if c := r.commit(); c != nil && !steps[i].again {
				first[c.Partition] = *c
			}
			// The second pass re-executes the first's runs, in order.
			if p := i - len(s.firstPass()); p >= 0 && r.RootRunID != runs[p].RunID {
				t.Errorf("%s: re-execution's root run %q, want %q", r.Partition, r.RootRunID, runs[p].RunID)
			}
			checkDagsterRun(t, s, steps[i], r)
			errors = append(errors, r.Errors...)
		}
		// The gap check fails on the day after the bad one, twice.
		if got, want := fmt.Sprint(exitsSeen(strings.Join(errors, "\n"))), fmt.Sprint(s.wantExits(2)); got != want {
			t.Errorf("pswap failures Dagster recorded %s, want %s; the errors:\n%s", got, want, tail(strings.Join(errors, "\n"), 4000))
		}
		s.checkFaults()
		s.checkTable(first)
	})
}

// checkDagsterRun checks one run: the first pass commits every day but the
// bad and the conflicting one, retrying the flaky and the killed day; the
// second is a no-op everywhere.
func checkDagsterRun(t *testing.T, s *scenario, st step, r dagsterRun) {
	t.Helper()
	day, again := st.day, st.again
	tries := r.Steps["sales"]
	_, notified := r.Assets["sales_notification"]
	t.Logf("%s again=%v: %s, sales %v, notified %v, checks %v", day, again, r.Status, tries, notified, r.Checks)
	if r.Partition != day {
		t.Errorf("run of partition %q, want %s", r.Partition, day)
	}
	if day == badDay || day == conflictDay {
		if r.Status != "FAILURE" || fmt.Sprint(tries) != "[failure]" || notified {
			t.Errorf("%s: %s, sales %v, notified %v: want FAILURE after 1 try (never retried), no notification", day, r.Status, tries, notified)
		}
		return
	}
	wantTries := 1
	if !again {
		wantTries = s.loadTries(day)
	}
	if r.Status != "SUCCESS" || len(tries) != wantTries || tries[len(tries)-1] != "success" || notified == again {
		t.Errorf("%s: %s, sales %v, notified %v: want SUCCESS after %d tries, notified %v", day, r.Status, tries, notified, wantTries, !again)
	}
	if want := map[string]bool{"verified": true, "complete": day < badDay}; fmt.Sprint(r.Checks) != fmt.Sprint(want) {
		t.Errorf("%s: checks %v, want %v", day, r.Checks, want)
	}
	checkCommit(t, st, r.commit())
}
