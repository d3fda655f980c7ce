package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// TestGCUnderFaults runs `pswap gc` through the fault proxy (lost replies,
// 5xx, 409, resets, delays on every request: listings, manifest reads,
// pointer re-reads, batch deletes) on a table full of retired generations
// and old orphans. A collection may fail, but never deletes what it must
// not: after every run the invariants hold and no current or kept
// generation lost a file. Repeated runs converge: once one succeeds,
// exactly the current and one retired generation are left per partition,
// and no orphan.
func TestGCUnderFaults(t *testing.T) {
	t.Parallel()
	remoteEnvs(t, testGCUnderFaults)
}

func testGCUnderFaults(t *testing.T, e *tableEnv) {
	rng := newRand(t)
	parts := []string{"dt=2026-09-01", "dt=2026-09-02", "dt=2026-09-03"}
	gens := scale(4, 12)
	for _, p := range parts {
		// Orphans: staged, never committed.
		for i := range 2 {
			txn, err := swap.Begin(ctx, e.st, p, swap.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.st.Put(ctx, txn.DataPrefix()+fmt.Sprintf("part-%05d.parquet", i), []byte("orphan"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range gens {
		for _, p := range parts {
			mustCommitRows(t, e.st, p, 2+i, fmt.Sprintf("%s-%d", p, i), pswap.CommitOptions{RunID: fmt.Sprintf("g%d", i)})
		}
	}
	before := e.check(t, checkOpts{expect: parts})
	// The orphans must be older than GC's clock slack (2s) plus the tiny
	// orphan age, and the retired generations older than the min-age that
	// pswap gc adds for what Iceberg snapshots may name (the time since it
	// asked, plus the same 2s slack): no writer runs from here on.
	time.Sleep(5 * time.Second)

	faultMix(e, 0.2, rng.Uint64())
	var runs, failed int
	for {
		runs++
		r := startProc(t, e.gcCmd(t, time.Millisecond)).wait()
		e.proxy.SetRule(nil)
		e.proxy.WaitIdle(30 * time.Second)
		state := e.check(t, checkOpts{expect: parts})
		for _, p := range parts {
			if state[p] == nil || state[p].gen() != before[p].gen() {
				violation(t, "I5", "gc run %d changed the current generation of %s", runs, p)
			}
		}
		if r.code == 0 {
			break
		}
		failed++
		if r.code != 1 {
			t.Fatalf("gc run %d: exit %d: %s", runs, r.code, r.stderr)
		}
		if runs == 30 {
			t.Fatalf("gc never succeeded through faults in %d runs; last: %s", runs, r.stderr)
		}
		faultMix(e, 0.2, rng.Uint64())
	}
	// Converged: current + one retired generation each, no orphan.
	state := e.check(t, checkOpts{expect: parts, duck: true})
	for _, p := range parts {
		kept := 0
		for _, h := range state[p].hist {
			if !h.Collected {
				kept++
			}
		}
		if kept != 2 {
			t.Errorf("%s: %d generations kept after a successful gc, want 2", p, kept)
		}
	}
	orphans := 0
	for a, err := range e.st.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := layout.PartitionOf(a.Key); ok && pathKind(a.Key) == layout.KindData {
			_, gen := layout.Classify(p, a.Key)
			if !state[p].inHistory(gen) {
				orphans++
			}
		}
	}
	if orphans != 0 {
		t.Errorf("%d data files of uncommitted generations left after a successful gc", orphans)
	}
	totals.faults.Add(e.proxy.Injected())
	totals.requests.Add(e.proxy.Requests())
	t.Logf("gc through faults: %d runs (%d failed cleanly) until one succeeded, %d faults over %d requests %v; nothing current or kept was ever lost",
		runs, failed, e.proxy.Injected(), e.proxy.Requests(), e.proxy.Counts())
}
