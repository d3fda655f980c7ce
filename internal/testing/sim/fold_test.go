package sim

import (
	"strings"
	"testing"
	"time"
)

// TestFoldSeeds runs PSWAP_SIM_FOLD_SEEDS seeds (default 60, an eighth
// under -race, 20 with -short) of FoldScenario: bursts of publishers of
// distinct partitions that fold each other's commits, with GC, readers, faults and kills. No
// invariant may break, and (60 seeds or more) the seeds must exercise
// both sides of folding: a version that carried other commits, and a
// publisher that returned another's version.
func TestFoldSeeds(t *testing.T) {
	n := envInt(t, "PSWAP_SIM_FOLD_SEEDS", defaultSeeds(60, 20))
	first := envInt(t, "PSWAP_SIM_SEED", 1)
	start := time.Now()
	var steps, faults, iceChecks, failed, published, folded, carrying, cold, coldSeeds, pending int
	for seed := first; seed < first+n; seed++ {
		cfg := FoldScenario(seed)
		r := Run(cfg)
		steps += r.Steps
		faults += r.FaultCount()
		iceChecks += r.IceChecks
		if cold += r.ColdManifests; r.ColdManifests > 0 {
			coldSeeds++
		}
		for _, o := range r.Outcomes {
			if strings.HasPrefix(o, "pub:") && strings.Contains(o, ": pending") {
				pending++
			}
			if !strings.HasPrefix(o, "pub:") || !strings.Contains(o, ": published") {
				continue
			}
			published++
			switch {
			case strings.Contains(o, "folded into another's version"):
				folded++
			case strings.Contains(o, " others"):
				carrying++
			}
		}
		failed += reportViolation(t, seed, cfg, r, failed)
	}
	t.Logf("%d fold seeds from %d in %s: %d steps, %d faults, %d Iceberg checks; %d publications, %d pending on the publish lease's holder, %d folded into another's version, %d versions carrying others; %d cold manifests written in %d seeds; %d failed",
		n, first, time.Since(start).Round(time.Millisecond), steps, faults, iceChecks, published, pending, folded, carrying, cold, coldSeeds, failed)
	// The seeds whose days span several months merge the older ones into
	// the cold manifest, under faults and kills.
	if n >= 20 && cold == 0 {
		t.Errorf("no seed wrote a cold manifest")
	}
	// 60 seeds fold both ways (8 carrying, 11 folded from seed 1); fewer
	// may not.
	if n >= 60 && (folded+pending == 0 || carrying == 0) {
		t.Errorf("the seeds never folded (%d folded, %d pending, %d carrying)", folded, pending, carrying)
	}
}
