package swap_test

import (
	"testing"
	"time"

	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// A rollback without a run id reads the pointer and checks the target (its
// manifest, then the listing of its files) at once: 6 requests, 5 one after
// another. With a run id it reads the pointer first, as a same-run no-op
// costs only that read. Either way its result carries the manifest it
// wrote, for the publish.
func TestRollbackReadsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		runID string
		seq   int
	}{{"", 5}, {"rb-1", 6}} {
		// The first of three attempts that shows it: storetest.FirstShown.
		type run struct {
			mem  *memstore.Store
			lat  *storetest.Latency
			a, r swap.Result
		}
		part := "dt=2026-11-29"
		got := storetest.FirstShown(func() run {
			mem := memstore.New()
			a := mustCommit(t, mem, part, "a", swap.Options{})
			mustCommit(t, mem, part, "b", swap.Options{})
			lat := storetest.NewLatency(mem, 20*time.Millisecond)
			r, err := swap.Rollback(ctx, lat, part, a.Generation, swap.Options{RunID: tc.runID})
			if err != nil || !r.Changed {
				t.Fatalf("rollback: %+v %v", r, err)
			}
			return run{mem, lat, a, r}
		}, func(x run) bool { return len(x.lat.Spans()) == 6 && x.lat.Sequential() == tc.seq })
		mem, lat, a, r := got.mem, got.lat, got.a, got.r
		if n, seq := len(lat.Spans()), lat.Sequential(); n != 6 || seq != tc.seq {
			t.Fatalf("run id %q: %d requests, %d one after another; want 6, %d:\n%s", tc.runID, n, seq, tc.seq, lat.Timeline())
		}
		snap := checkInvariants(t, mem, part)
		if m := r.Manifest; m == nil || m.Generation != r.Generation || m.RollbackOf != a.Generation || m.DataGen() != a.Generation ||
			m.ContentChecksum != snap.Manifest.ContentChecksum || len(m.Files) != len(snap.Manifest.Files) {
			t.Fatalf("result's manifest %+v, want the one current (%+v)", r.Manifest, snap.Manifest)
		}
	}
}

// A commit's result carries the manifest it swapped in; a no-op's none.
func TestResultManifest(t *testing.T) {
	mem := memstore.New()
	part := "dt=2026-11-29"
	r := mustCommit(t, mem, part, "a", swap.Options{})
	if r.Manifest == nil || r.Manifest.Generation != r.Generation || r.Manifest.ContentChecksum != mustManifest(t, mem, part, r.Generation).ContentChecksum {
		t.Fatalf("commit's manifest %+v", r.Manifest)
	}
	again := mustCommit(t, mem, part, "a", swap.Options{})
	if again.Changed || again.Manifest != nil {
		t.Fatalf("no-op: %+v", again)
	}
}
