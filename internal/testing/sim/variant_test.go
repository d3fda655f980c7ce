package sim

import (
	"os"
	"testing"
	"time"
)

// TestVariantShortMinAge runs the scenarios with GC's MinAge below the
// writers' commit window (PSWAP_SIM_VARIANT=short-min-age): outside what
// gc/doc.go assumes, to see what breaks.
func TestVariantShortMinAge(t *testing.T) {
	if os.Getenv("PSWAP_SIM_VARIANT") != "short-min-age" {
		t.Skip("set PSWAP_SIM_VARIANT=short-min-age")
	}
	failed := 0
	for seed := uint64(1); seed <= envInt(t, "PSWAP_SIM_SEEDS", 200); seed++ {
		c := Scenario(seed)
		c.GC.MinAge = time.Second
		if r := Run(c); r.Violation != nil {
			failed++
			if failed <= 2 {
				t.Logf("%s", r.Format())
			}
			t.Logf("seed %d: %v", seed, r.Violation)
		}
	}
	t.Logf("%d failed", failed)
}
