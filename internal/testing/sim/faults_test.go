package sim

import (
	"strings"
	"testing"
)

// The operators' faults happen and are repaired: over the first 150
// seeds, manifests and hints are lost, and the reconciles after them write
// a manifest anew (a new version) or point the hint at the latest version
// again (or write a new version, and the hint with it). Without this the checks of what holds after a repair
// (I7-repair) would pass by never running.
func TestLossFaultsHappen(t *testing.T) {
	var lostManifests, repaired, lostHints, hintsFixed int
	for seed := uint64(1); seed <= 150; seed++ {
		r := Run(Scenario(seed))
		if r.Violation != nil {
			t.Fatalf("seed %d: %v", seed, r.Violation)
		}
		lost := false // the repair's loss deleted a manifest (it starts once the loss ends)
		for _, o := range r.Outcomes {
			name, out, _ := strings.Cut(o, ": ")
			switch {
			case strings.HasPrefix(name, "lose-mf"):
				lost = strings.HasPrefix(out, "deleted metadata/pswap-")
				if lost {
					lostManifests++
				}
			case strings.HasPrefix(name, "repair") && lost && strings.Contains(out, "[v"):
				repaired++
			case strings.HasPrefix(name, "lose-hint") && strings.Contains(out, "deleted metadata/version-hint.text"):
				lostHints++
			case strings.HasPrefix(name, "rehint") && (strings.Contains(out, "(hint was 0)") || strings.HasPrefix(out, "[v")):
				// The hint fixed on a view up to date, or written with a
				// new version (the reconcile found something to write).
				hintsFixed++
			}
		}
	}
	t.Logf("%d manifests lost, %d repaired by a new version; %d hints lost, %d put back by a reconcile", lostManifests, repaired, lostHints, hintsFixed)
	if lostManifests < 5 || repaired < 3 || lostHints < 20 || hintsFixed < 5 {
		t.Fatalf("too few faults or repairs to test them: %d manifests lost, %d repaired; %d hints lost, %d put back",
			lostManifests, repaired, lostHints, hintsFixed)
	}
}
