package sim

import (
	"testing"
	"time"
)

// TestLegacySeeds runs the seeds whose tables start in the legacy layout
// (Config.LegacyGens), PSWAP_SIM_SEEDS of them (default 200, an eighth
// under -race, 40 with -short): the writers, GC and the migrators move their
// partitions while every other actor runs, and every invariant holds.
func TestLegacySeeds(t *testing.T) {
	n := envInt(t, "PSWAP_SIM_SEEDS", defaultSeeds(200, 40))
	first := envInt(t, "PSWAP_SIM_SEED", 1)
	start := time.Now()
	var ran uint64
	migrated, failed := 0, 0
	for seed := first; ran < n && seed < first+20*n; seed++ {
		cfg := Scenario(seed)
		if cfg.LegacyGens == 0 {
			continue
		}
		ran++
		r := Run(cfg)
		for _, o := range r.Outcomes {
			if len(o) > 2 && o[:2] == "mg" && contains(o, "migrated") {
				migrated++
			}
		}
		failed += reportViolation(t, seed, cfg, r, failed)
	}
	if ran == 0 {
		t.Fatal("no seed starts from the legacy layout")
	}
	t.Logf("%d legacy seeds from %d in %s: %d migrations by a migrator (the others by writers or GC), %d failed",
		ran, first, time.Since(start).Round(time.Millisecond), migrated, failed)
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
