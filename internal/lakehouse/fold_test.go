package lakehouse_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// burst publishes n commits of distinct partitions at once on a table of
// 4 partitions, on a store of 20 ms round trips (synctest's clock), and
// returns the results, the versions the burst wrote and its time. Every
// publish waits for its view (WaitForView): folding in line, without the
// publish lease (lease_test.go has the burst under the lease).
func burst(t *testing.T, n int) (*memstore.Store, []lakehouse.Result, int, time.Duration) {
	t.Helper()
	return burstOn(t, publishedTable(t, 4), n, lakehouse.Options{WaitForView: true})
}

// TestFoldBurst: 32 publishers of distinct partitions at once. Those that
// lose the race for a version announce their commit and are carried by the
// next version's writer, so the burst writes far fewer versions than
// commits; every publish that returns has its commit in the version it
// reports, and the final version holds every partition with no marker
// left behind.
func TestFoldBurst(t *testing.T) {
	const n = 32
	mem, rs, versions, wall := burst(t, n)
	folded, others, rebases := 0, 0, 0
	for _, r := range rs {
		rebases += r.Rebases
		if r.Folded {
			folded++
		}
		others += r.FoldedOthers
		if r.Changed == r.Folded {
			t.Errorf("result %+v: a publish either wrote its version or was folded", r)
		}
	}
	t.Logf("%d publishers: %d versions written, %d folded into another's version, %d commits carried by others' versions, %d rebases, %v on a 20 ms store",
		n, versions, folded, others, rebases, wall)
	checkReaders(t, mem)
	if versions > n/2 {
		t.Errorf("the burst wrote %d versions for %d commits: publishers did not fold", versions, n)
	}
	if folded == 0 || others < folded {
		t.Errorf("%d publishes folded, %d commits carried: want some, carried at least as many as folded", folded, others)
	}
	for a, err := range mem.List(ctx, layout.FoldPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("fold marker %s left behind", a.Key)
	}
	// Each publish's reported version holds its commit (or a newer one).
	for i, r := range rs {
		if r.Version <= 0 {
			t.Errorf("publish %d reported no version", i)
		}
	}
}

// TestFoldPassesOverStaleMarkers: a marker whose commit a version already
// reflects (its owner killed before deleting it), and one whose partition
// has no pointer, fold nothing and fail nothing; once older than 10
// minutes on the store's clock, a leader deletes them.
func TestFoldPassesOverStaleMarkers(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now().Add(-time.Hour)
	mem := memstore.New(memstore.Options{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }})
	for i := range 3 {
		commit(t, mem, fmt.Sprintf("dt=2026-01-%02d", i+1), 3, "x", swap.Options{})
	}
	if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		layout.FoldKey("dt=2026-01-01", 1),    // reflected
		layout.FoldKey("dt=2026-09-09", 7),    // no pointer
		layout.FoldPrefix + "not-a-partition", // not a marker
	} {
		if _, err := mem.Put(ctx, k, nil, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	clock = clock.Add(11 * time.Minute) // the burst's markers are that much newer
	mu.Unlock()
	_, rs, versions, _ := burstOn(t, mem, 8, lakehouse.Options{WaitForView: true})
	checkReaders(t, mem)
	for a, err := range mem.List(ctx, layout.FoldPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		if a.Key != layout.FoldPrefix+"not-a-partition" {
			t.Errorf("marker %s left behind", a.Key)
		}
	}
	for _, r := range rs {
		if r.FoldedOthers > 8 {
			t.Errorf("a version folded %d commits, more than the burst's", r.FoldedOthers)
		}
	}
	if versions > 8 {
		t.Errorf("%d versions for 8 commits", versions)
	}
}

// burstCommits commits n distinct partitions from dt=2026-03-01 on (3 to
// 7 files each), as a burst's writers do before they publish, and returns
// their commits with their manifests, and the table's latest version
// before any of them publishes.
func burstCommits(t *testing.T, mem *memstore.Store, n int) ([]lakehouse.Commit, int) {
	t.Helper()
	cs := make([]lakehouse.Commit, n)
	for i := range n {
		part := fmt.Sprintf("dt=2026-%02d-%02d", i/28+3, i%28+1)
		res := commit(t, mem, part, 3+i%5, "f", swap.Options{})
		m, err := swap.ReadManifest(ctx, mem, res.Partition, res.Generation)
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = lakehouse.Commit{Partition: part, Generation: res.Generation, Seq: res.Seq, Manifest: m}
	}
	_, before, err := lakehouse.Latest(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	return cs, before
}

// burstOn is burst on a given table, of partitions from dt=2026-03-01 on.
func burstOn(t *testing.T, mem *memstore.Store, n int, opts lakehouse.Options) (*memstore.Store, []lakehouse.Result, int, time.Duration) {
	t.Helper()
	cs, before := burstCommits(t, mem, n)
	rs := make([]lakehouse.Result, n)
	var wall time.Duration
	synctest.Test(t, func(t *testing.T) {
		cnt := storetest.NewCounting(storetest.NewLatency(mem, 20*time.Millisecond))
		st := store.Store(cnt)
		defer func() {
			t.Logf("%d publishers at once: %d requests, %.1f a publish %v", n, cnt.Total(), float64(cnt.Total())/float64(n), cnt.Counts())
		}()
		start := time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r, err := lakehouse.PublishCommit(context.Background(), st, cs[i], opts)
				if err != nil {
					t.Errorf("publish %s: %v", cs[i].Partition, err)
				}
				rs[i] = r
			})
		}
		wg.Wait()
		wall = time.Since(start)
	})
	_, after, err := lakehouse.Latest(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	return mem, rs, after - before, wall
}

// TestFoldLeaderGone: a publisher that lost a race finds a commit it must
// wait for (a marker with a lower key whose commit no version reflects:
// its publisher was killed after announcing it). When no version comes
// within the wait, it writes its own, folding that commit too; it never
// reports a version without its commit.
func TestFoldLeaderGone(t *testing.T) {
	mem := publishedTable(t, 2)
	a := commit(t, mem, "dt=2026-03-01", 3, "a", swap.Options{}) // the killed publisher's commit
	b := commit(t, mem, "dt=2026-03-02", 4, "b", swap.Options{})
	if _, err := mem.Put(ctx, layout.FoldKey(a.Partition, a.Seq), nil, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// b's first version PUT is refused as if another publisher had won.
	st := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "put" && strings.HasSuffix(c.Key, ".metadata.json") && c.N == 1 {
			return storetest.Fault{Before: store.ErrPrecondition}
		}
		return storetest.Fault{}
	})
	var r lakehouse.Result
	var err error
	synctest.Test(t, func(t *testing.T) {
		r, err = lakehouse.PublishCommit(context.Background(), st, lakehouse.Commit{Partition: b.Partition, Generation: b.Generation, Seq: b.Seq}, lakehouse.Options{WaitForView: true})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.FoldedOthers != 1 {
		t.Errorf("result %+v: want a version of its own that folded the killed publisher's commit", r)
	}
	for _, part := range []string{a.Partition, b.Partition} {
		if _, ok, err := lakehouse.RecordedSeq(ctx, mem, r.Version, part); err != nil || !ok {
			t.Errorf("version %d does not hold %s (%v)", r.Version, part, err)
		}
	}
	checkReaders(t, mem)
}

// TestFoldSnapshotSummary: a version that folded other commits says so in
// its snapshot's summary, with the commit of the publisher that wrote it
// and every partition it carried.
func TestFoldSnapshotSummary(t *testing.T) {
	mem, rs, _, _ := burst(t, 6)
	loc, _, err := lakehouse.Latest(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rs {
		if r.FoldedOthers == 0 {
			continue
		}
		found = true
		data, _, err := store.ReadAll(ctx, mem, strings.TrimPrefix(r.MetadataLocation, mem.URI("")))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"pswap.operation":"fold"`, `"pswap.generation":`, `"pswap.partitions":`} {
			if !strings.Contains(strings.ReplaceAll(string(data), " ", ""), want) {
				t.Errorf("%s: the snapshot's summary lacks %s", r.MetadataLocation, want)
			}
		}
	}
	if !found {
		t.Fatalf("no version folded others (latest %s)", loc)
	}
}
