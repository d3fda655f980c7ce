package swap_test

import (
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// TestSwappedAt: a committed Result says when (the context's clock) the
// pointer PUT that made its generation current was sent: not after the
// PUT reached the store, not before the commit began; a no-op says
// nothing (zero).
func TestSwappedAt(t *testing.T) {
	var (
		mu    sync.Mutex
		clock = time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
		atPut time.Time
	)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second) // every reading a second later
		return clock
	}
	part := "dt=2026-12-01"
	st := storetest.NewFaulty(memstore.New(), func(c storetest.Call) storetest.Fault {
		if c.Op != "get" && c.Key == layout.PointerKey(part) {
			atPut = now()
		}
		return storetest.Fault{}
	})
	ectx := env.With(ctx, &env.Env{Clock: now})
	begin := now()
	txn, err := swap.Begin(ectx, st, part, swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := txn.Commit(ectx, stage(t, txn, 2, "a"))
	if err != nil || res.Outcome != swap.Committed {
		t.Fatalf("commit: %+v %v", res, err)
	}
	if res.SwappedAt.IsZero() || res.SwappedAt.Before(begin) || !res.SwappedAt.Before(atPut) {
		t.Fatalf("SwappedAt %v, want after the commit began (%v) and before the pointer's PUT reached the store (%v)", res.SwappedAt, begin, atPut)
	}
	// The same content again: identical, no swap.
	txn, err = swap.Begin(ectx, st, part, swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := txn.Commit(ectx, stage(t, txn, 2, "a"))
	if err != nil || again.Outcome != swap.Identical || !again.SwappedAt.IsZero() {
		t.Fatalf("the same content again: %+v %v, want identical without SwappedAt", again, err)
	}
}
