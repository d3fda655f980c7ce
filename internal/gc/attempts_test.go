package gc_test

import (
	"testing"
	"time"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store/memstore"
)

// TestAttemptRecords: an attempt record (the audit's run id, identity and
// start of an attempt) goes with its generation: a committed one's when GC
// collects the generation, kept with it otherwise; one of an attempt that
// never committed (a no-op, a failed or a dead attempt) with its orphan
// group, once all of it is older than the orphan age. The request count
// of a partition does not change: the records are in its one listing.
func TestAttemptRecords(t *testing.T) {
	w := newWarp(memstore.New())
	const part = "dt=2026-11-29"
	gens := commitN(t, w, part, 4)
	noop, dead, failed := manifest.NewGenerationID(), manifest.NewGenerationID(), manifest.NewGenerationID()
	put := func(gen, status, found string) {
		t.Helper()
		a := audit.Attempt{Partition: part, Generation: gen, RunID: "daily/" + gen[:8], StartedAt: time.Now(), Status: status, Found: found}
		if status != audit.StatusStarted {
			a.FinishedAt = a.StartedAt
		}
		if err := audit.PutAttempt(ctx, w, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range gens {
		put(g, audit.StatusStarted, "")
	}
	put(noop, audit.StatusNoOp, gens[0])
	put(dead, audit.StatusStarted, "")
	stage(t, w, layout.DataPrefix(part, dead), 1, "dead")
	put(failed, audit.StatusFailed, "")
	// Young: every record stays (the retired generations too: MinAge).
	mustGC(t, w, part, gc.Options{})
	for _, gen := range append([]string{noop, dead, failed}, gens...) {
		if !exists(t, w, layout.AttemptKey(part, gen)) {
			t.Fatalf("a young attempt record of %s was removed", gen)
		}
	}
	w.advance(gc.DefaultOrphanAge + gc.DefaultMinAge + time.Hour)
	mustGC(t, w, part, gc.Options{})
	// Keep 1: the current generation and its parent stay, with their
	// records; the two older ones go; the old no-op's, failed and dead
	// attempts' records go with their groups.
	for gen, want := range map[string]bool{gens[0]: false, gens[1]: false, gens[2]: true, gens[3]: true, noop: false, dead: false, failed: false} {
		if got := exists(t, w, layout.AttemptKey(part, gen)); got != want {
			t.Errorf("attempt record of %s: there %v, want %v", gen, got, want)
		}
	}
	if n := len(dataKeys(t, w, part, dead)); n != 0 {
		t.Errorf("the dead attempt's %d data files are left", n)
	}
}
