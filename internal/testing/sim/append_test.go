package sim

import (
	"strings"
	"testing"
	"time"
)

// TestAppendSeeds runs PSWAP_SIM_APPEND_SEEDS seeds (default 60, an eighth
// under -race, 20 with -short) of AppendScenario: appending actors
// (retries of a killed or failed append of the same run, and second attempts racing the first)
// racing replacing writers, rollbacks and GC, with faults (lost replies
// among them) and kills. Every append swap holds its parent's rows and
// its run's, which its parent did not hold, and every acknowledged run's
// rows are in the generation that took them exactly once (I9-append),
// besides I1-I5.
func TestAppendSeeds(t *testing.T) {
	n := envInt(t, "PSWAP_SIM_APPEND_SEEDS", defaultSeeds(60, 20))
	first := envInt(t, "PSWAP_SIM_SEED", 1)
	start := time.Now()
	var steps, faults, checks, failed, appenders int
	outcomes := map[string]int{}
	for seed := first; seed < first+n; seed++ {
		cfg := AppendScenario(uint64(seed))
		r := Run(cfg)
		steps += r.Steps
		faults += r.FaultCount()
		checks += r.Checks
		appenders += len(cfg.Appenders)
		for _, o := range r.Outcomes {
			if strings.HasPrefix(o, "ap") {
				k := appendOutcomeKind(o)
				outcomes[k]++
				if k == "failed" && outcomes[k] <= 5 {
					t.Logf("seed %d: %s", seed, o)
				}
			}
		}
		failed += reportViolation(t, uint64(seed), cfg, r, failed)
	}
	t.Logf("%d append seeds from %d in %s: %d steps, %d faults, %d checks, %d appenders: %v; %d failed",
		n, first, time.Since(start).Round(time.Millisecond), steps, faults, checks, appenders, outcomes, failed)
	// (The race detector's eighth of the seeds need not show every outcome.)
	if n >= 20 && (outcomes["appended"] == 0 || outcomes["rebased"] == 0 || outcomes["same-run"] == 0) {
		t.Errorf("the seeds never appended, never rebased after a lost swap, or never re-ran a run: %v", outcomes)
	}
}

// appendOutcomeKind classifies an appender's outcome line for the summary.
func appendOutcomeKind(o string) string {
	switch {
	case strings.Contains(o, "appended:") && !strings.Contains(o, "(0 rebases)"):
		return "rebased"
	case strings.Contains(o, "appended:"):
		return "appended"
	case strings.Contains(o, "same-run"):
		return "same-run"
	case strings.Contains(o, "killed"):
		return "killed"
	case strings.Contains(o, "unknown"):
		return "unknown"
	}
	return "failed"
}
