package lakehouse_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// A reconcile whose listing gets a 503 on one pointer GET retries that GET
// alone: one request more than without the fault, not a second listing of
// every pointer.
func TestReconcileRetriesOnePointerReadAlone(t *testing.T) {
	base := memstore.New(memstore.Options{})
	for i := range 10 {
		commit(t, base, fmt.Sprintf("dt=2026-11-%02d", i+1), 3, "x", swap.Options{})
	}
	publish(t, base, commit(t, base, "dt=2026-11-01", 4, "y", swap.Options{OnConflict: swap.Overwrite}))
	commit(t, base, "dt=2026-11-05", 9, "z", swap.Options{OnConflict: swap.Overwrite}) // not published
	failing := layout.PointerKey("dt=2026-11-07")
	run := func(fault bool) (int, map[string]int, int) {
		st := clone(t, base)
		cs := storetest.NewCounting(storetest.NewFaulty(st, func(c storetest.Call) storetest.Fault {
			if fault && c.Op == "get" && c.Key == failing && c.N == 1 {
				return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
			}
			return storetest.Fault{}
		}))
		waits := 0
		r, err := lakehouse.Publish(env.With(ctx, &env.Env{Timer: func(context.Context, time.Duration) error { waits++; return nil }}), cs, lakehouse.Options{})
		if err != nil || !r.Changed || r.Partitions != 10 {
			t.Fatalf("reconcile (503: %v): %+v %v", fault, r, err)
		}
		want := map[string]int64{}
		for i := range 10 {
			want[fmt.Sprintf("dt=2026-11-%02d", i+1)] = 3
		}
		want["dt=2026-11-01"], want["dt=2026-11-05"] = 4, 9
		if got, _ := icebergRows(t, st, r.MetadataLocation); !maps.Equal(got, want) {
			t.Fatalf("reconcile (503: %v): readers see %v, want %v", fault, got, want)
		}
		return cs.Total(), cs.Counts(), waits
	}
	clean, cleanCounts, _ := run(false)
	flaky, flakyCounts, waits := run(true)
	t.Logf("reconcile of 10 partitions: %d requests, %d with one 503 on a pointer GET", clean, flaky)
	if flaky != clean+1 || flakyCounts["get"] != cleanCounts["get"]+1 || flakyCounts["list"] != cleanCounts["list"] || waits != 1 {
		t.Fatalf("one 503 on a pointer GET: %d requests %v (%d waits), without it %d %v: want exactly one more GET",
			flaky, flakyCounts, waits, clean, cleanCounts)
	}
}
