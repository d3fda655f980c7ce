package sim

import (
	"strings"
	"testing"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/storetest"
)

// The simulated store has the semantics the conformance suite defines.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return NewStore() })
}

// The same seed gives the same run, step for step: every request, fault,
// outcome and simulated timestamp, generation ids and ETags included, and
// every byte of the Iceberg metadata the publishers wrote (Format's digest).
func TestDeterministic(t *testing.T) {
	published := 0
	for _, seed := range []uint64{1, 2, 3, 7, 11} {
		a, b := Run(Scenario(seed)), Run(Scenario(seed))
		ta, tb := a.Format(), b.Format()
		if ta != tb {
			la, lb := a.Trace, b.Trace
			for i := range min(len(la), len(lb)) {
				if la[i] != lb[i] {
					t.Fatalf("seed %d: runs differ at event %d:\n  %s\n  %s", seed, i, la[i], lb[i])
				}
			}
			t.Fatalf("seed %d: runs differ (%d vs %d events)", seed, len(la), len(lb))
		}
		if a.Steps < 20 {
			t.Fatalf("seed %d: only %d steps", seed, a.Steps)
		}
		if a.IceChecks > 0 && !strings.HasPrefix(a.Metadata, "0 objects") {
			published++
		}
	}
	if published < 2 {
		t.Fatalf("only %d of the seeds published Iceberg metadata", published)
	}
}

// The same seed with a views actor (WithViews) gives the same run too:
// every Delta log object the publishers wrote (its ETag in the trace, the
// metaData id drawn from the actor's source) and every table.json.
func TestDeterministicWithViews(t *testing.T) {
	wrote := 0
	for _, seed := range []uint64{1, 5, 7, 13, 22} {
		cfg := WithViews(Scenario(seed))
		a, b := Run(cfg), Run(cfg)
		la, lb := a.Trace, b.Trace
		for i := range min(len(la), len(lb)) {
			if la[i] != lb[i] {
				t.Fatalf("seed %d: runs differ at event %d:\n  %s\n  %s", seed, i, la[i], lb[i])
			}
		}
		if a.Format() != b.Format() {
			t.Fatalf("seed %d: runs differ (%d vs %d events)", seed, len(la), len(lb))
		}
		wrote += a.DeltaVersions
	}
	if wrote == 0 {
		t.Fatal("no seed wrote a Delta log version during its run")
	}
}
