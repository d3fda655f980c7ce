package gc_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// A reservation (`pswap stage --reserve`) that was never committed, with or
// without files an engine wrote into it, is an orphan like any staged
// generation: kept until the orphan age (plus the commit window) has
// passed, then removed whole, record included; its commit then fails
// cleanly rather than committing a half-collected generation.
func TestReservationOrphanedOnlyAfterOrphanAge(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		st := newStore(t)
		cur := mustCommit(t, st, part, "current").Generation
		empty, err := swap.Reserve(ctx, st, part, swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		written, err := swap.Reserve(ctx, st, part, swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, written.Prefix+"part-0.parquet", []byte("engine output"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(slices.Values([]string{empty.Generation, written.Generation}))
		for _, age := range []time.Duration{0, gc.DefaultOrphanAge, gc.DefaultOrphanAge + gc.DefaultCommitWindow - time.Minute} {
			st.advance(age - time.Duration(st.off.Load()))
			r := mustGC(t, st, part, gc.Options{})
			if r.Objects != 0 || !slices.Equal(r.OrphansKept, want) {
				t.Fatalf("at age %s: %+v", age, r)
			}
		}
		st.advance(2 * time.Minute)
		r := mustGC(t, st, part, gc.Options{})
		if !slices.Equal(r.Orphans, want) || r.Objects != 3 {
			t.Fatalf("old reservations: %+v", r)
		}
		for _, k := range []string{layout.StagedKey(part, empty.Generation), layout.StagedKey(part, written.Generation), written.Prefix + "part-0.parquet"} {
			if exists(t, st, k) {
				t.Errorf("%s survived GC", k)
			}
		}
		if _, err := swap.CommitStaged(ctx, st, part, written.Generation, swap.Options{}, nil); !errors.Is(err, swap.ErrGenerationNotFound) {
			t.Fatalf("commit of a collected reservation: %v", err)
		}
		if genState(t, st, part, cur) != "whole" {
			t.Fatal("current generation damaged")
		}
	})
}
