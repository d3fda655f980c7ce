package sim

import (
	"testing"
)

// TestSeedsGenerations runs the scenarios on a store whose version tokens
// are GCS generation numbers (Config.Generations): a rewrite of the same
// bytes, or a copy, gets a new token, where S3's ETag (the MD5) repeats.
// No invariant may depend on the tokens' repeating. PSWAP_SIM_SEEDS seeds
// (default 60, an eighth under -race, 20 with -short).
func TestSeedsGenerations(t *testing.T) {
	n := envInt(t, "PSWAP_SIM_SEEDS", defaultSeeds(60, 20))
	failed, steps := 0, 0
	for seed := uint64(1); seed <= n; seed++ {
		cfg := Scenario(seed)
		cfg.Generations = true
		r := Run(cfg)
		steps += r.Steps
		failed += reportViolation(t, seed, cfg, r, failed)
	}
	t.Logf("%d seeds with generation numbers: %d steps, %d failed", n, steps, failed)
}

// The store with generation numbers hands out a new token per write, even
// for the same bytes, and a new one to a copy.
func TestGenerationTokens(t *testing.T) {
	w := &World{cfg: Config{Generations: true}}
	a, b := w.nextGeneration(), w.nextGeneration()
	if a == b || len(a) != len(b) || a > b {
		t.Fatalf("generations %q then %q: want distinct and increasing", a, b)
	}
}
