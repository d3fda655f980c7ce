package sim

import (
	"fmt"
	"os"
	"testing"
)

// TestPlantedFind measures how soon each planted bug is caught:
// PSWAP_SIM_PLANT_SEEDS seeds per bug (not run by default).
func TestPlantedFind(t *testing.T) {
	n := envInt(t, "PSWAP_SIM_PLANT_SEEDS", 0)
	if n == 0 {
		t.Skip("set PSWAP_SIM_PLANT_SEEDS to measure the planted bugs' detection")
	}
	plants := []Plant{PlantGCSkipReread, PlantRollbackSkipReread, PlantGCSkipRelist, PlantWriterSkipGrace}
	if s := os.Getenv("PSWAP_SIM_PLANT"); s != "" {
		var p Plant
		fmt.Sscan(s, &p)
		plants = []Plant{p}
	}
	for _, p := range plants {
		found, first := 0, uint64(0)
		var seeds []uint64
		for seed := uint64(1); seed <= n; seed++ {
			c := Scenario(seed)
			c.Plant = p
			if r := Run(c); r.Violation != nil {
				found++
				if first == 0 {
					first = seed
					if os.Getenv("PSWAP_SIM_TRACE") != "" {
						t.Logf("%s", r.Format())
					}
				}
				if len(seeds) < 10 {
					seeds = append(seeds, seed)
				}
			}
		}
		t.Logf("%s: caught by %d of %d seeds, first by seed %d; seeds %v", p, found, n, first, seeds)
	}
}
