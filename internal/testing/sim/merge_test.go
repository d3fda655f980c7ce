package sim

import (
	"strings"
	"testing"
	"time"
)

// TestMergeSeeds runs PSWAP_SIM_MERGE_SEEDS seeds (default 60, an eighth
// under -race, 20 with -short) of MergeScenario: merging actors racing
// replacing writers, rollbacks and GC, with faults (lost replies among them) and kills. Every
// merge swap must be derived from the generation it replaced
// (I9-merge: no lost update), besides I1-I5.
func TestMergeSeeds(t *testing.T) {
	n := envInt(t, "PSWAP_SIM_MERGE_SEEDS", defaultSeeds(60, 20))
	first := envInt(t, "PSWAP_SIM_SEED", 1)
	start := time.Now()
	var steps, faults, checks, failed, merges int
	outcomes := map[string]int{}
	for seed := first; seed < first+n; seed++ {
		cfg := MergeScenario(seed)
		r := Run(cfg)
		steps += r.Steps
		faults += r.FaultCount()
		checks += r.Checks
		merges += len(cfg.Mergers)
		for _, o := range r.Outcomes {
			if len(o) > 1 && o[0] == 'm' {
				k := mergeOutcomeKind(o)
				outcomes[k]++
				if k == "failed" && outcomes[k] <= 5 {
					t.Logf("seed %d: %s", seed, o)
				}
			}
		}
		failed += reportViolation(t, seed, cfg, r, failed)
	}
	t.Logf("%d merge seeds from %d in %s: %d steps, %d faults, %d checks, %d mergers: %v; %d failed",
		n, first, time.Since(start).Round(time.Millisecond), steps, faults, checks, merges, outcomes, failed)
	// (The race detector's eighth of the seeds need not show every outcome.)
	if n >= 20 && (outcomes["merged"] == 0 || outcomes["rebased"] == 0) {
		t.Errorf("the seeds never merged, or never rebased after a conflict: %v", outcomes)
	}
}

// mergeOutcomeKind classifies a merger's outcome line for the summary.
func mergeOutcomeKind(o string) string {
	switch {
	case strings.Contains(o, "merged:") && !strings.Contains(o, "(0 rebases)"):
		return "rebased"
	case strings.Contains(o, "merged:"):
		return "merged"
	case strings.Contains(o, "same-run"):
		return "same-run"
	case strings.Contains(o, "identical"):
		return "identical"
	case strings.Contains(o, "killed"):
		return "killed"
	case strings.Contains(o, "unknown"):
		return "unknown"
	}
	return "failed"
}
