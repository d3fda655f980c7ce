package sim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/race"
)

// envInt reads a non-negative integer setting, or def.
func envInt(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// defaultSeeds is the number of seeds a seed loop runs when its variable is
// not set: full, or short with -short, or an eighth of full under the race
// detector, where a seed costs about 3.5 times the CPU. The seeds run pswap's
// same code paths, only in other orders of requests, which the scheduler
// makes one at a time: an eighth of them is the race detector's share (the
// package's largest CPU cost in CI), and scripts/test.sh runs this package
// without -race as well, every seed.
func defaultSeeds(full, short uint64) uint64 {
	switch {
	case testing.Short():
		return short
	case race.Enabled:
		return max(full/8, 1)
	}
	return full
}

// TestSeeds runs PSWAP_SIM_SEEDS seeds (default 200, an eighth under -race,
// 40 with -short) from PSWAP_SIM_SEED (default 1). A failing seed is shrunk
// and its trace printed; add it to regressions below once the bug is fixed.
func TestSeeds(t *testing.T) {
	n := envInt(t, "PSWAP_SIM_SEEDS", defaultSeeds(200, 40))
	first := envInt(t, "PSWAP_SIM_SEED", 1)
	start := time.Now()
	var steps, faults, checks, iceChecks, reports, failed, cold int
	for seed := first; seed < first+n; seed++ {
		cfg := Scenario(seed)
		r := Run(cfg)
		cold += r.ColdManifests
		steps += r.Steps
		faults += r.FaultCount()
		checks += r.Checks
		iceChecks += r.IceChecks
		reports += r.Reports
		failed += reportViolation(t, seed, cfg, r, failed)
	}
	t.Logf("%d seeds from %d in %s: %d steps (%.0f/seed), %d faults (%.1f/seed), %d store checks, %d Iceberg checks, %d reports checked, %d cold manifests written, %d failed",
		n, first, time.Since(start).Round(time.Millisecond), steps, float64(steps)/float64(n), faults, float64(faults)/float64(n), checks, iceChecks, reports, cold, failed)
	// Some seeds' partitions are in two months: their publishes merge the
	// older one into the cold manifest.
	if n >= 40 && cold == 0 {
		t.Errorf("no seed wrote a cold manifest")
	}
}

// regressions are seeds that once broke an invariant, with what they found.
// They are seeds of Scenario as it is: a change to Scenario, or to the
// requests pswap's code makes, changes what a seed runs, so re-derive them
// now and then (put the fixed bug back in, find its seeds). The fix's own
// regression test (swap/staged_concurrent_test.go) does not drift.
var regressions = []struct {
	seed uint64
	note string
}{
	// A CommitStaged refused as stale (or a no-op, or out of rebases)
	// deleted the staged generation's data, which a concurrent CommitStaged
	// of the same generation had made current (swap: cleanup of keepData).
	{3, "CommitStaged deleted the data its twin committed (I5)"},
	{58, "CommitStaged deleted the data its twin committed (I5)"},
	{80, "CommitStaged deleted the data its twin committed (I5)"},
	{90, "CommitStaged deleted the data its twin committed (I5)"},
	{172, "CommitStaged deleted the data its twin committed (I2)"},
	// Not a bug: twin committers of one staged generation, and a commit on
	// top before the second read back: it reports superseded, like its
	// twin's swap, which it cannot tell from its own (found by the soak).
	{102309, "twin CommitStaged reports superseded for its twin's swap"},
	// No version hint (two publishes too slow to write it, an expiry
	// whose hint PUT got a 503), and the sweep deleted v1: every reader
	// probed from v1 and found nothing (lakehouse: the expiry keeps the
	// versions a probe steps through while the hint lags).
	{29978312357481, "the expiry broke the chain of versions a probe follows (I6-ice)"},
	// table.json appeared while the table's first publish was between
	// its manifest and its version, and the attempt ran past MaxElapsed:
	// the next attempt published dt as a date but reused the manifest
	// written with dt a string, and every later publish failed to carry
	// its entries (lakehouse: a manifest's name says its shape).
	{3967, "a manifest reused under another partition type (I6-ice)"},
	// Not a bug: an operator deleted a group's manifest and a publish
	// carried it on before any reconcile, which the checks after every
	// step excuse; the check of a new version did not (sim's checker).
	{281, "a version carrying a manifest an operator deleted (checker)"},
	{563, "a version carrying a manifest an operator deleted (checker)"},
	{3523, "a version carrying a manifest an operator deleted (checker)"},
	{7533, "a version carrying a manifest an operator deleted (checker)"},
}

func TestRegressions(t *testing.T) {
	for _, rg := range regressions {
		if r := Run(Scenario(rg.seed)); r.Violation != nil {
			t.Errorf("seed %d (%s): %v\n%s", rg.seed, rg.note, r.Violation, r.Format())
		}
	}
}

// TestSeedsWithViews runs PSWAP_SIM_VIEWS_SEEDS seeds (default 100, an
// eighth under -race, 40 with -short) from PSWAP_SIM_SEED (default 1) of Scenario with a views
// actor added (WithViews): the Delta view turned on, off and on again
// while the others commit, publish and collect, and for half the seeds a
// writer that evolves the schema (I10-views, besides every other check).
func TestSeedsWithViews(t *testing.T) {
	n := envInt(t, "PSWAP_SIM_VIEWS_SEEDS", defaultSeeds(100, 40))
	first := envInt(t, "PSWAP_SIM_SEED", 1)
	start := time.Now()
	var runs, steps, faults, failed, switched, evolved, deltaOn, switches, versions int
	for seed := first; seed < first+n; seed++ {
		cfg := WithViews(Scenario(seed))
		if len(cfg.Views) == 0 {
			continue
		}
		runs++
		r := Run(cfg)
		steps += r.Steps
		faults += r.FaultCount()
		for _, o := range r.Outcomes {
			switch {
			case strings.HasPrefix(o, "views") && strings.Contains(o, ": done"):
				switched++
			}
		}
		for i, ws := range cfg.Writers {
			for _, o := range r.Outcomes {
				if ws.Evolve && strings.HasPrefix(o, fmt.Sprintf("w%d(", i+1)) && strings.Contains(o, "committed") {
					evolved++
				}
			}
		}
		if r.DeltaOn {
			deltaOn++
		}
		switches += r.ViewSwitches
		versions += r.DeltaVersions
		failed += reportViolation(t, seed, cfg, r, failed)
	}
	t.Logf("%d seeds from %d (%d with a views actor) in %s: %d steps, %d faults, %d views changes recorded (%d switches reported done), %d Delta versions written, %d evolving commits, %d runs ended with Delta on, %d failed",
		n, first, runs, time.Since(start).Round(time.Millisecond), steps, faults, switches, switched, versions, evolved, deltaOn, failed)
}

// viewsRegressions are seeds of WithViews(Scenario(seed)) that once broke
// an invariant (see regressions about re-deriving them).
var viewsRegressions = []struct {
	seed uint64
	note string
}{
	// The views pipeline ran its drivers, and the Delta publisher its
	// log and table.json reads, from goroutines of their own, not through
	// internal/overlap: one actor made two requests at once (internal/views
	// run, internal/deltalog run, catchUp and reconcilePlan).
	{1, "a publish of the Iceberg and Delta views made two requests at once (sim)"},
	{5, "a Delta publish read its log beside the Iceberg metadata at once (sim)"},
	// A new Delta log's metaData id came from uuid.NewString, not the
	// environment's source: two runs of a seed wrote other bytes.
	{22, "a Delta log's version 0 differed between two runs of the seed (TestDeterministicWithViews)"},
	// Not a bug: a publish wrote the published field ids back into a
	// table.json created after the table's first publish, which had given
	// its partition column the id table.json gave a column ("note" 4 to
	// 6, "dt" 5 to 4), and the check took a column with another id for a
	// column lost (sim's checker: a column is its name).
	{85, "a publish's id write-back renumbered a column (checker)"},
	// A reconcile that found a group manifest lost (an operator's
	// deletion) wrote it anew from pointers it had listed before it read
	// the version, and dropped a partition that a commit created and
	// published in between (TestSeedsWithViews, seeds from 900000).
	{901434, "a reconcile's repair of a lost manifest dropped a partition created after its listing"},
}

func TestViewsRegressions(t *testing.T) {
	for _, rg := range viewsRegressions {
		if r := Run(WithViews(Scenario(rg.seed))); r.Violation != nil {
			t.Errorf("seed %d (%s): %v\n%s", rg.seed, rg.note, r.Violation, r.Format())
		}
	}
}

// reportViolation fails the test with a run's violation, if it has one
// (the first three with a shrunk trace, the rest by their message, as
// shrinking takes time), and returns 1 for a violation, else 0; failed
// is the count of earlier ones.
func reportViolation(t *testing.T, seed uint64, cfg Config, r *Result, failed int) int {
	t.Helper()
	if r.Violation == nil {
		return 0
	}
	if failed >= 3 {
		t.Errorf("seed %d: %v", seed, r.Violation)
		return 1
	}
	_, small := Shrink(cfg, 150)
	t.Errorf("seed %d: %v\nshrunk trace:\n%s", seed, r.Violation, small.Format())
	return 1
}
