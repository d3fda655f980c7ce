package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/manifest"
)

// The appenders' and mergers' shared checks (rebasing.go) flag what they
// promise to, under the invariant each is given.
func TestRebasingChecks(t *testing.T) {
	const part = "dt=2026-11-29"
	violation := func(f func(w *World, a *actor)) *Violation {
		w := newWorld(Config{})
		a := &actor{w: w, name: "ap1"}
		f(w, a)
		return w.failure
	}
	expect := func(name string, v *Violation, inv string, says ...string) {
		t.Helper()
		if v == nil || v.Invariant != inv {
			t.Errorf("%s: %v, want a violation of %s", name, v, inv)
			return
		}
		for _, s := range says {
			if !strings.Contains(v.Detail, s) {
				t.Errorf("%s: %q does not say %q", name, v.Detail, s)
			}
		}
	}
	swapped := func(w *World, a *actor, gens ...string) {
		for i, g := range gens {
			w.truth(part).hist = append(w.truth(part).hist, histEntry{gen: g, actor: a, step: i + 1})
		}
	}

	expect("two swaps", violation(func(w *World, a *actor) {
		swapped(w, a, "g1", "g2")
		w.ownSwaps(a, part, "append")
	}), "I3", "swapped 2 times in one append", "g1", "g2")
	if v := violation(func(w *World, a *actor) { swapped(w, a, "g1"); w.ownSwaps(a, part, "merge") }); v != nil {
		t.Errorf("one swap: %v", v)
	}

	unknown := fmt.Errorf("commit: %w", pswap.ErrOutcomeUnknown)
	var out string
	if v := violation(func(w *World, a *actor) {
		swapped(w, a, "g1")
		out = w.failedReport(a, w.entriesBy(a, part), unknown)
	}); v != nil || !strings.HasPrefix(out, "outcome unknown: ") {
		t.Errorf("an unknown outcome that swapped: %q, %v; want no violation", out, v)
	}
	expect("a failure that swapped", violation(func(w *World, a *actor) {
		swapped(w, a, "g1")
		out = w.failedReport(a, w.entriesBy(a, part), errors.New("boom"))
	}), "I3", "reported a failure (boom)", "g1")
	if v := violation(func(w *World, a *actor) { out = w.failedReport(a, nil, errors.New("boom")) }); v != nil || out != "failed: boom" {
		t.Errorf("a failure that did not swap: %q, %v", out, v)
	}

	m := &manifest.Manifest{Generation: "g2"}
	rows := func(parent []Row) ([]Row, string) { return parent, "" }
	expect("unreadable parent", violation(func(w *World, a *actor) {
		w.observeRows("I9-merge", "merged into", "merge", "a lost update", part, &histEntry{gen: "g1"}, m, rows)
	}), "I9-merge", "merged into g1, whose rows cannot be read")
	expect("the caller's violation", violation(func(w *World, a *actor) {
		w.observeRows("I9-append", "appended to", "append", "a loss", part, nil, m, func([]Row) ([]Row, string) { return nil, "held its rows: a duplicate" })
	}), "I9-append", "held its rows: a duplicate")
	expect("unreadable generation", violation(func(w *World, a *actor) {
		w.observeRows("I9-append", "appended to", "append", "a loss", part, nil, m, rows)
	}), "I9-append", "swapped in append g2, whose rows cannot be read")
}
