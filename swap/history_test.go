package swap_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// A run id that committed is a no-op when it runs again, whatever committed
// since: a retry of the daily run after a backfill keeps the backfill.
func TestSameRunAcrossHistory(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		r1 := mustCommit(t, st, part, "daily rows", swap.Options{RunID: "daily/2026-11-29"})
		b1 := mustCommit(t, st, part, "corrected rows", swap.Options{RunID: "backfill/2026-11-29"})
		if !b1.Changed || b1.Generation == r1.Generation {
			t.Fatalf("backfill: %+v", b1)
		}

		// r1 again: a no-op, b1's data stays current, nothing is staged.
		txn, err := swap.Begin(ctx, st, part, swap.Options{RunID: "daily/2026-11-29"})
		if err != nil {
			t.Fatal(err)
		}
		if !txn.AlreadyCommitted() {
			t.Fatal("AlreadyCommitted = false for a run that committed before the backfill")
		}
		again, err := txn.Commit(ctx, stage(t, txn, 2, "daily rows"))
		if err != nil {
			t.Fatal(err)
		}
		if again.Changed || again.Outcome != swap.SameRun || again.Generation != b1.Generation ||
			again.Rows != b1.Rows || again.Files != b1.Files || again.Files != 2 {
			t.Fatalf("daily run again after the backfill: %+v, want a no-op naming %s", again, b1.Generation)
		}
		snap := checkInvariants(t, st, part)
		if snap.Pointer.Generation != b1.Generation || snap.Manifest.ContentChecksum != mustManifest(t, st, part, b1.Generation).ContentChecksum {
			t.Fatalf("current is %s, want the backfill %s", snap.Pointer.Generation, b1.Generation)
		}
		if gens := dataGens(t, st, part); len(gens) != 2 || !gens[r1.Generation] || !gens[b1.Generation] {
			t.Fatalf("the no-op left data generations %v", gens)
		}

		// b1 again: a no-op too.
		if r := mustCommit(t, st, part, "corrected rows v2", swap.Options{RunID: "backfill/2026-11-29"}); r.Changed || r.Outcome != swap.SameRun || r.Generation != b1.Generation {
			t.Fatalf("backfill again: %+v", r)
		}

		// Force commits r1 again.
		forced := mustCommit(t, st, part, "daily rows", swap.Options{RunID: "daily/2026-11-29", Force: true})
		if !forced.Changed || forced.Outcome != swap.Committed || forced.Generation == b1.Generation {
			t.Fatalf("forced re-run: %+v", forced)
		}
		snap = checkInvariants(t, st, part)
		if snap.Pointer.Generation != forced.Generation || len(snap.Pointer.History) != 3 ||
			snap.Pointer.History[1].Generation != b1.Generation || snap.Pointer.History[2].Generation != r1.Generation ||
			snap.Pointer.HistoryTruncated {
			t.Fatalf("pointer after the forced commit: %+v", snap.Pointer)
		}

		// A rollback with a run id obeys the same rule; without one it never
		// is a same-run no-op.
		rb, err := swap.Rollback(ctx, st, part, b1.Generation, swap.Options{RunID: "ops/rollback-1"})
		if err != nil || !rb.Changed {
			t.Fatalf("rollback: %+v %v", rb, err)
		}
		mustCommit(t, st, part, "later", swap.Options{RunID: "daily/2026-11-30-fix"})
		rb2, err := swap.Rollback(ctx, st, part, b1.Generation, swap.Options{RunID: "ops/rollback-1"})
		if err != nil || rb2.Changed || rb2.Outcome != swap.SameRun || rb2.Files != 2 {
			t.Fatalf("the same rollback run again: %+v %v", rb2, err)
		}
		rb3, err := swap.Rollback(ctx, st, part, b1.Generation, swap.Options{})
		if err != nil || !rb3.Changed {
			t.Fatalf("a rollback without run id: %+v %v", rb3, err)
		}
		// The rollback's history entry names the data it reuses.
		snap = checkInvariants(t, st, part)
		if h := snap.Pointer.History[0]; h.DataGen() != b1.Generation || h.Generation == b1.Generation {
			t.Fatalf("rollback history entry %+v", h)
		}
	})
}

// The pointer remembers the last manifest.MaxHistory commits: a run id among
// them is a no-op, one beyond the bound commits again (documented), and the
// pointer says its history is truncated.
func TestHistoryBound(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		fast := swap.Options{}
		var gens []string
		for i := range manifest.MaxHistory {
			o := fast
			o.RunID = fmt.Sprintf("run-%03d", i)
			txn, err := swap.Begin(ctx, st, part, o)
			if err != nil {
				t.Fatal(err)
			}
			// One small file each: 100 commits stay fast on MinIO.
			r, err := txn.Commit(ctx, stage(t, txn, 1, o.RunID))
			if err != nil || !r.Changed {
				t.Fatalf("commit %d: %+v %v", i, r, err)
			}
			gens = append(gens, r.Generation)
		}
		b, err := swap.ReadPointer(ctx, st, part)
		if err != nil {
			t.Fatal(err)
		}
		p := b.Pointer
		if len(p.History) != manifest.MaxHistory || p.HistoryTruncated || p.History[manifest.MaxHistory-1].Generation != gens[0] {
			t.Fatalf("at the bound: %d entries, truncated %v", len(p.History), p.HistoryTruncated)
		}
		for i, e := range p.History {
			if want := gens[len(gens)-1-i]; e.Generation != want || e.RunID != fmt.Sprintf("run-%03d", len(gens)-1-i) {
				t.Fatalf("history[%d] = %+v, want %s", i, e, want)
			}
		}
		// At the bound the oldest run is still remembered.
		txn, err := swap.Begin(ctx, st, part, swap.Options{RunID: "run-000"})
		if err != nil {
			t.Fatal(err)
		}
		if !txn.AlreadyCommitted() {
			t.Fatal("the 100th newest commit's run id is not remembered")
		}
		if err := txn.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		// Commit 101: the oldest entry falls off.
		r := mustCommit(t, st, part, "run-100", swap.Options{RunID: "run-100"})
		b, err = swap.ReadPointer(ctx, st, part)
		if err != nil {
			t.Fatal(err)
		}
		p = b.Pointer
		if len(p.History) != manifest.MaxHistory || !p.HistoryTruncated || p.History[0].Generation != r.Generation ||
			p.History[manifest.MaxHistory-1].Generation != gens[1] {
			t.Fatalf("beyond the bound: %d entries, truncated %v, oldest %s", len(p.History), p.HistoryTruncated, p.History[len(p.History)-1].Generation)
		}
		// run-001 is still a no-op; run-000 is beyond the bound and commits.
		if r := mustCommit(t, st, part, "x", swap.Options{RunID: "run-001"}); r.Changed || r.Outcome != swap.SameRun {
			t.Fatalf("run-001 (oldest remembered): %+v", r)
		}
		if r := mustCommit(t, st, part, "y", swap.Options{RunID: "run-000"}); !r.Changed {
			t.Fatalf("run-000 (beyond the bound): %+v, want a commit", r)
		}
		checkInvariants(t, st, part)
	})
}

// The same-run check costs no request: Begin's GET is all a re-run of a
// committed run makes, and a commit still makes its three.
func TestSameRunRequestCount(t *testing.T) {
	cs := storetest.NewCounting(memstore.New())
	part := "dt=2026-11-29"
	mustCommit(t, cs, part, "daily", swap.Options{RunID: "daily"})
	mustCommit(t, cs, part, "backfill", swap.Options{RunID: "backfill"})
	cs.Reset()
	txn, err := swap.Begin(ctx, cs, part, swap.Options{RunID: "daily"})
	if err != nil {
		t.Fatal(err)
	}
	if !txn.AlreadyCommitted() {
		t.Fatal("not AlreadyCommitted")
	}
	r, err := txn.Commit(ctx, manifest.Content{})
	if err != nil || r.Outcome != swap.SameRun || r.Files != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	if got := cs.Counts(); got["get"] != 1 || cs.Total() != 1 {
		t.Fatalf("a same-run no-op made %v, want Begin's one GET", got)
	}
	txn, err = swap.Begin(ctx, cs, part, swap.Options{RunID: "new"})
	if err != nil {
		t.Fatal(err)
	}
	c := stage(t, txn, 3, "new")
	cs.Reset()
	if r, err := txn.Commit(ctx, c); err != nil || !r.Changed {
		t.Fatalf("%+v %v", r, err)
	}
	if got := cs.Counts(); got["put-if-none-match"] != 1 || got["put-if-match"] != 1 || cs.Total() != 2 {
		t.Fatalf("commit with history made %v, want one manifest PUT and one pointer PUT", got)
	}
}

// A commit of no rows is refused unless AllowEmpty, and changes nothing.
func TestEmptyCommitRefused(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		first := mustCommit(t, st, part, "data", swap.Options{})
		txn, err := swap.Begin(ctx, st, part, swap.Options{RunID: "empty"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := txn.Commit(ctx, manifest.Content{ContentChecksum: "test-sum:00000000000000000000000000000000"}); !errors.Is(err, swap.ErrEmptyCommit) {
			t.Fatalf("empty commit: %v, want ErrEmptyCommit", err)
		}
		if snap := checkInvariants(t, st, part); snap.Pointer.Generation != first.Generation || snap.Pointer.Rows == 0 {
			t.Fatal("a refused empty commit changed the partition")
		}
		txn, err = swap.Begin(ctx, st, part, swap.Options{RunID: "empty", AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := txn.Commit(ctx, manifest.Content{ContentChecksum: "test-sum:00000000000000000000000000000000"})
		if err != nil || !r.Changed || r.Rows != 0 || r.Files != 0 {
			t.Fatalf("allowed empty commit: %+v %v", r, err)
		}
		if snap := checkInvariants(t, st, part); snap.Pointer.Rows != 0 || len(snap.Files) != 0 {
			t.Fatal("the allowed empty commit is not current")
		}
	})
}

// Requests of a 1.0 pointer (no history) still work: its run id is checked
// as before, and the next commit starts a truncated history.
func TestLegacyPointer(t *testing.T) {
	st := memstore.New()
	part := "dt=2026-11-29"
	r1 := mustCommit(t, st, part, "a", swap.Options{RunID: "r1"})
	b, err := swap.ReadPointer(ctx, st, part)
	if err != nil {
		t.Fatal(err)
	}
	legacy := *b.Pointer
	legacy.History, legacy.HistoryTruncated, legacy.Files = nil, false, 0
	data, err := manifest.EncodePointer(&legacy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, layout.PointerKey(part), data, store.PutOptions{IfMatch: b.ETag}); err != nil {
		t.Fatal(err)
	}
	if r := mustCommit(t, st, part, "b", swap.Options{RunID: "r1"}); r.Changed || r.Outcome != swap.SameRun || r.Files != 2 || r.Generation != r1.Generation {
		t.Fatalf("same run on a 1.0 pointer: %+v", r)
	}
	r2 := mustCommit(t, st, part, "c", swap.Options{RunID: "r2"})
	b, err = swap.ReadPointer(ctx, st, part)
	if err != nil {
		t.Fatal(err)
	}
	if b.Pointer.Generation != r2.Generation || len(b.Pointer.History) != 1 || !b.Pointer.HistoryTruncated {
		t.Fatalf("pointer after a 1.0 base: %+v", b.Pointer)
	}
}
