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

// planted are seeds that catch each planted bug (found by TestPlantedFind
// on 400 seeds, 1,500 for the re-list): the checks must keep catching them. Like regressions, they
// are seeds of Scenario as it is.
var planted = []struct {
	plant Plant
	seeds []uint64
}{
	{PlantRollbackSkipReread, []uint64{92, 392}},
	{PlantGCSkipRelist, []uint64{507, 571}},
	{PlantWriterSkipGrace, []uint64{80, 139, 175}},
}

func TestPlantedCaught(t *testing.T) {
	for _, p := range planted {
		for _, seed := range p.seeds {
			c := Scenario(seed)
			c.Plant = p.plant
			r := Run(c)
			if r.Violation == nil {
				t.Errorf("%s: seed %d no longer catches it", p.plant, seed)
				continue
			}
			// And without the plant the same seed passes.
			if clean := Run(Scenario(seed)); clean.Violation != nil {
				t.Errorf("seed %d fails without the plant: %v", seed, clean.Violation)
			}
			t.Logf("%s, seed %d: %v", p.plant, seed, r.Violation)
		}
	}
}

// TestShow prints the shrunk trace of one seed: PSWAP_SIM_SHOW=<seed> or
// <seed>:<plant number>.
func TestShow(t *testing.T) {
	s := os.Getenv("PSWAP_SIM_SHOW")
	if s == "" {
		t.Skip("set PSWAP_SIM_SHOW=<seed>[:<plant>]")
	}
	var seed uint64
	var p Plant
	fmt.Sscanf(s, "%d:%d", &seed, &p)
	c := Scenario(seed)
	c.Plant = p
	_, r := Shrink(c, 200)
	t.Logf("plant %s:\n%s", p, r.Format())
}
