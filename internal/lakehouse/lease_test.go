package lakehouse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// noMarkersNorLease fails t if a fold marker or the lease is left.
func noMarkersNorLease(t *testing.T, st store.Store) {
	t.Helper()
	for a, err := range st.List(ctx, layout.FoldPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("fold marker %s left behind", a.Key)
	}
	if _, err := st.Stat(ctx, layout.LeaseKey); err == nil {
		t.Errorf("the lease is left behind")
	}
}

// holdsAll fails t unless the latest version records each commit at its
// sequence number or past it.
func holdsAll(t *testing.T, st store.Store, rs ...swap.Result) {
	t.Helper()
	_, v, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		seq, ok, err := lakehouse.RecordedSeq(ctx, st, v, r.Partition)
		if err != nil || !ok || seq < r.Seq {
			t.Errorf("version %d holds %s at %d (%v, %v), want %d", v, r.Partition, seq, ok, err, r.Seq)
		}
	}
}

// TestLeaseBurst: 32 publishers of distinct partitions at once under the
// publish lease. Each either wrote a version that holds its commit or
// returned pending; once all have returned, the latest version holds every
// commit, and neither a marker nor the lease is left. The burst writes
// few versions, and a publish makes few requests (logged).
func TestLeaseBurst(t *testing.T) {
	const n = 32
	mem, rs, versions, wall := burstOn(t, publishedTable(t, 4), n, lakehouse.Options{})
	pending, led := 0, 0
	for i, r := range rs {
		part := fmt.Sprintf("dt=2026-%02d-%02d", i/28+3, i%28+1)
		switch {
		case r.Pending:
			pending++
			if r.LeaseHolder == "" {
				t.Errorf("publish %d: pending without a holder", i)
			}
		default:
			led++
			if _, ok, err := lakehouse.RecordedSeq(ctx, mem, r.Version, part); err != nil || !ok {
				t.Errorf("publish %d: not pending, and its version %d does not hold %s (%v)", i, r.Version, part, err)
			}
		}
	}
	t.Logf("%d publishers: %d pending, %d led, %d versions, %v on a 20 ms store", n, pending, led, versions, wall)
	if pending == 0 || versions > n/4 {
		t.Errorf("%d pending, %d versions: the lease did not group the burst", pending, versions)
	}
	got := checkReaders(t, mem)
	if len(got) != 4+n {
		t.Errorf("%d partitions in the view, want %d", len(got), 4+n)
	}
	noMarkersNorLease(t, mem)
}

// deleteHook runs hook (once) before the delete of key.
type deleteHook struct {
	store.Store
	key  string
	mu   sync.Mutex
	hook func()
}

func (d *deleteHook) Delete(ctx context.Context, key string) error {
	if key == d.key {
		d.mu.Lock()
		f := d.hook
		d.hook = nil
		d.mu.Unlock()
		if f != nil {
			f()
		}
	}
	return d.Store.Delete(ctx, key)
}

// TestLeaseFinalList: a publisher that finds the lease live just before
// its holder releases it (its marker written, its read of the lease
// before the holder's DELETE) returns pending, and the holder's LIST after
// the release finds its marker: the holder folds it before it returns.
// One that comes after the release (before the holder's LIST) takes the
// lease itself and leads. Each takes the lease's path because it lost the
// race for a version (a lone publisher does not: TestRequestsPerPublish).
func TestLeaseFinalList(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("after the release: %v", late), func(t *testing.T) {
			mem := publishedTable(t, 2)
			a := commit(t, mem, "dt=2026-03-01", 3, "a", swap.Options{})
			b := commit(t, mem, "dt=2026-03-02", 4, "b", swap.Options{})
			rivals := []swap.Result{
				commit(t, mem, "dt=2026-03-03", 5, "c", swap.Options{}),
				commit(t, mem, "dt=2026-03-04", 6, "d", swap.Options{}),
			}
			var rb lakehouse.Result
			var errB error
			follower := func() {
				st := loseRace(t, mem, rivals[1])
				rb, errB = lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: b.Partition, Generation: b.Generation, Seq: b.Seq, SwappedAt: b.SwappedAt}, lakehouse.Options{})
			}
			var st store.Store = loseRace(t, mem, rivals[0])
			if late {
				// Between the holder's DELETE and its LIST after it (the
				// holder lists the markers in its own attempt too, having
				// lost a race: fold.go).
				lh := &listHook{Store: st, prefix: layout.FoldPrefix, hook: follower, armed: &atomic.Bool{}}
				st = &deleteHook{Store: lh, key: layout.LeaseKey, hook: func() { lh.armed.Store(true) }}
			} else {
				st = &deleteHook{Store: st, key: layout.LeaseKey, hook: follower}
			}
			ra, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: a.Partition, Generation: a.Generation, Seq: a.Seq, SwappedAt: a.SwappedAt}, lakehouse.Options{})
			if err != nil || ra.Pending || !ra.Changed || ra.Rebases == 0 {
				t.Fatalf("holder: %+v %v", ra, err)
			}
			if errB != nil || rb.Pending == late {
				t.Fatalf("follower: %+v %v, want pending %v", rb, errB, !late)
			}
			if !late && ra.FoldedOthers != 1 {
				t.Errorf("holder: %+v, want the follower's commit folded", ra)
			}
			holdsAll(t, mem, append(rivals, a, b)...)
			noMarkersNorLease(t, mem)
			checkReaders(t, mem)
		})
	}
}

// loseRace wraps st so that a publish through it loses the race for its
// first version: right before its first PUT of a version, rival's commit
// is published (in line, WaitForView) straight to st.
func loseRace(t *testing.T, st store.Store, rival swap.Result) store.Store {
	return &putHook{Store: st, match: func(key string) bool {
		_, ok := lakehouse.VersionOfKey(key)
		return ok
	}, hook: func() {
		r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: rival.Partition, Generation: rival.Generation, Seq: rival.Seq}, lakehouse.Options{WaitForView: true})
		if err != nil || !r.Changed {
			t.Errorf("rival publish: %+v %v", r, err)
		}
	}}
}

// putHook runs hook (once) before the first PUT of a key that match takes
// (after it, with after).
type putHook struct {
	store.Store
	match func(string) bool
	once  sync.Once
	hook  func()
	after bool
}

// Now is the wrapped store's clock (store.Clock).
func (h *putHook) Now(ctx context.Context) (time.Time, error) { return store.Now(ctx, h.Store) }

func (h *putHook) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	if !h.match(key) {
		return h.Store.Put(ctx, key, data, opts)
	}
	if !h.after {
		h.once.Do(h.hook)
		return h.Store.Put(ctx, key, data, opts)
	}
	a, err := h.Store.Put(ctx, key, data, opts)
	h.once.Do(h.hook)
	return a, err
}

// listHook runs hook (once) before the first listing of prefix (once
// armed, if armed is not nil).
type listHook struct {
	store.Store
	prefix string
	once   sync.Once
	hook   func()
	armed  *atomic.Bool
}

func (l *listHook) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	if prefix == l.prefix && (l.armed == nil || l.armed.Load()) {
		l.once.Do(l.hook)
	}
	return l.Store.List(ctx, prefix)
}

// TestLeaseOfKilledHolder: a holder killed mid-lease leaves the lease
// and a pending commit's marker. A lone publisher of the next commit
// publishes it on its own (the lease is for contention only), and `pswap
// publish` (Publish) reflects the pending one and deletes its marker. One
// that loses a race while the lease lives is pending too; once the lease
// has expired (on the store's clock), it takes the lease over and folds
// the markers it finds.
func TestLeaseOfKilledHolder(t *testing.T) {
	for _, tc := range []struct {
		name          string
		race, expired bool
	}{{"lone", false, false}, {"race, lease live", true, false}, {"race, lease expired", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			mem, clk := clockedTable(t, time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
			// The killed holder's lease, and the marker of a commit that
			// was pending on it.
			a := commit(t, mem, "dt=2026-03-01", 3, "a", swap.Options{})
			for k, v := range map[string]string{
				layout.LeaseKey:                    `{"holder":"killed","version":1,"seconds":20}`,
				layout.FoldKey(a.Partition, a.Seq): "",
			} {
				if _, err := mem.Put(ctx, k, []byte(v), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.expired {
				clk.Add(21 * time.Second)
			} else {
				clk.Add(5 * time.Second)
			}
			b := commit(t, mem, "dt=2026-03-02", 4, "b", swap.Options{})
			rival := commit(t, mem, "dt=2026-03-03", 5, "c", swap.Options{})
			var st store.Store = mem
			if tc.race {
				st = loseRace(t, mem, rival)
			}
			rb, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: b.Partition, Generation: b.Generation, Seq: b.Seq}, lakehouse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !tc.race:
				if rb.Pending || !rb.Changed || rb.FoldedOthers != 0 {
					t.Fatalf("lone: %+v, want its own version, nothing folded", rb)
				}
				if _, err := mem.Stat(ctx, layout.FoldKey(a.Partition, a.Seq)); err != nil {
					t.Fatalf("the pending commit's marker: %v, want it left for a reconcile", err)
				}
			case !tc.expired:
				if !rb.Pending || rb.LeaseHolder != "killed" || rb.Version != 1 {
					t.Fatalf("under a live lease: %+v, want pending on the killed holder's v1", rb)
				}
			default:
				if rb.Pending || !rb.Changed || rb.FoldedOthers != 1 {
					t.Fatalf("after the lease expired: %+v, want the lease taken over and the marker folded", rb)
				}
			}
			if !tc.expired {
				r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
				if err != nil || !r.Changed {
					t.Fatalf("publish: %+v %v", r, err)
				}
				if err := mem.Delete(ctx, layout.LeaseKey); err != nil { // it expires; nothing else reads it here
					t.Fatal(err)
				}
			}
			if tc.race {
				holdsAll(t, mem, a, b, rival)
			} else {
				holdsAll(t, mem, a, b)
			}
			noMarkersNorLease(t, mem)
			checkReaders(t, mem)
		})
	}
}

// TestLeaseWaitForView: WaitForView publishes in line even under a live
// lease: the commit is in the version it reports.
func TestLeaseWaitForView(t *testing.T) {
	mem := publishedTable(t, 2)
	if _, err := mem.Put(ctx, layout.LeaseKey, []byte(`{"holder":"other","version":1,"seconds":20}`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	a := commit(t, mem, "dt=2026-03-01", 3, "a", swap.Options{})
	r, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: a.Partition, Generation: a.Generation, Seq: a.Seq}, lakehouse.Options{WaitForView: true})
	if err != nil || r.Pending || !r.Changed {
		t.Fatalf("%+v %v", r, err)
	}
	holdsAll(t, mem, a)
	if !strings.HasSuffix(r.MetadataLocation, lakehouse.MetadataKey(r.Version)) {
		t.Errorf("location %s, version %d", r.MetadataLocation, r.Version)
	}
}

// currentSummary is the summary of the latest version's current snapshot.
func currentSummary(t *testing.T, st store.Store) map[string]string {
	t.Helper()
	_, v, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := store.ReadAll(ctx, st, lakehouse.MetadataKey(v))
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Current   int64 `json:"current-snapshot-id"`
		Snapshots []struct {
			ID      int64             `json:"snapshot-id"`
			Summary map[string]string `json:"summary"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(data, &md); err != nil {
		t.Fatal(err)
	}
	for _, s := range md.Snapshots {
		if s.ID == md.Current {
			return s.Summary
		}
	}
	t.Fatalf("v%d has no current snapshot", v)
	return nil
}

// TestLeaseBurstSignal: a lease holder's version that folds another
// commit names the holder in its snapshot's summary (pswap.lease), and a
// publish whose prefetch reads that version within the lease's length
// takes the lease's path at once: under a live lease it is pending after
// the prefetch's hint and version (no manifest list), its marker and the
// lease's GET; with the lease released it takes it and leads. A lone
// publisher's version names no holder.
func TestLeaseBurstSignal(t *testing.T) {
	mem := publishedTable(t, 2)
	a := commit(t, mem, "dt=2026-03-01", 3, "a", swap.Options{})
	if r, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: a.Partition, Generation: a.Generation, Seq: a.Seq, SwappedAt: a.SwappedAt}, lakehouse.Options{}); err != nil || !r.Changed {
		t.Fatalf("lone: %+v %v", r, err)
	}
	if h := currentSummary(t, mem)["pswap.lease"]; h != "" {
		t.Fatalf("a lone publisher's version names the lease holder %q", h)
	}
	for i, live := range []bool{true, false} {
		t.Run(fmt.Sprintf("lease live %v", live), func(t *testing.T) {
			// A holder (it lost a race) folds a follower pending on it.
			day := func(d int) string { return fmt.Sprintf("dt=2026-03-%02d", 10*i+d) }
			b := commit(t, mem, day(2), 4, "b", swap.Options{})
			c := commit(t, mem, day(3), 5, "c", swap.Options{})
			rival := commit(t, mem, day(4), 6, "d", swap.Options{})
			follower := func() {
				if r, err := lakehouse.PublishCommit(ctx, loseRace(t, mem, rival), lakehouse.Commit{Partition: c.Partition, Generation: c.Generation, Seq: c.Seq}, lakehouse.Options{}); err != nil || !r.Pending {
					t.Errorf("follower: %+v %v, want pending", r, err)
				}
			}
			rival0 := commit(t, mem, day(5), 7, "e", swap.Options{})
			// The holder takes the lease (after its lost race), then the
			// follower loses its race and finds the lease live.
			lh := &putHook{Store: loseRace(t, mem, rival0), match: func(key string) bool { return key == layout.LeaseKey }, hook: follower, after: true}
			rb, err := lakehouse.PublishCommit(ctx, lh, lakehouse.Commit{Partition: b.Partition, Generation: b.Generation, Seq: b.Seq}, lakehouse.Options{})
			if err != nil || rb.Pending || rb.FoldedOthers == 0 {
				t.Fatalf("holder: %+v %v, want the follower folded", rb, err)
			}
			if h := currentSummary(t, mem)["pswap.lease"]; h == "" {
				t.Fatalf("the holder's version that folded another commit names no holder: %v", currentSummary(t, mem))
			}
			holdsAll(t, mem, a, b, c, rival, rival0)
			noMarkersNorLease(t, mem)

			if live {
				if _, err := mem.Put(ctx, layout.LeaseKey, []byte(`{"holder":"other","version":1,"seconds":20}`), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			d := commit(t, mem, day(6), 3, "f", swap.Options{})
			cs := storetest.NewCounting(mem)
			pf := lakehouse.StartPrefetch(env.With(ctx, &env.Env{Order: env.InOrder}), cs, lakehouse.Options{}, d.Partition)
			r, err := lakehouse.PublishCommit(ctx, cs, lakehouse.Commit{Partition: d.Partition, Generation: d.Generation, Seq: d.Seq, SwappedAt: d.SwappedAt}, lakehouse.Options{Prefetch: pf})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v: %d requests %v", r, cs.Total(), cs.Counts())
			if live {
				// The hint, the version; the marker; the lease.
				if !r.Pending || r.LeaseHolder != "other" || !maps.Equal(cs.Counts(), map[string]int{"get": 3, "put": 1}) {
					t.Fatalf("under a live lease after a burst: %+v, requests %v, want pending after 3 GETs and the marker", r, cs.Counts())
				}
				if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
					t.Fatal(err)
				}
				if err := mem.Delete(ctx, layout.LeaseKey); err != nil {
					t.Fatal(err)
				}
			} else if r.Pending || !r.Changed || cs.Counts()["put-if-none-match"] != 4 || cs.Counts()["delete"]+cs.Counts()["delete-many"] != 2 {
				// Its marker, then the lease taken (put-if-none-match)
				// and released (delete), the marker deleted (beside the
				// release, in a batch with those its version settled).
				t.Fatalf("after a burst, the lease released: %+v, requests %v, want it taken and the commit published", r, cs.Counts())
			}
			holdsAll(t, mem, d)
			noMarkersNorLease(t, mem)
			checkReaders(t, mem)
		})
	}
}

// TestLeaseSweptAfterBurst: the markers a killed holder left are folded by
// the next commit after its lease expired, even a lone one (which publishes
// optimistically, never touching the lease), when the version it starts from
// ends a burst (names a lease holder, older than the lease's length). The
// sweep costs that one commit the lease's path; the commit after it is
// optimistic again. Before, a lone writer left the markers for the next
// contended publish or `pswap publish`.
func TestLeaseSweptAfterBurst(t *testing.T) {
	mem, clk := clockedTable(t, time.Now().UTC())
	advance := clk.Add
	fctx := env.With(ctx, &env.Env{Clock: clk.Now})
	leftover := func(holder string, r swap.Result) {
		t.Helper()
		for k, v := range map[string]string{
			layout.LeaseKey:                    `{"holder":"` + holder + `","version":1,"seconds":20}`,
			layout.FoldKey(r.Partition, r.Seq): "",
		} {
			if _, err := mem.Put(ctx, k, []byte(v), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish := func(st store.Store, r swap.Result) lakehouse.Result {
		t.Helper()
		res, err := lakehouse.PublishCommit(fctx, st, lakehouse.Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq}, lakehouse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// A burst: a holder that lost a race takes over a killed holder's
	// expired lease and folds the commit pending on it.
	a := commit(t, mem, "dt=2026-03-01", 3, "a", swap.Options{})
	leftover("killed", a)
	advance(21 * time.Second)
	b := commit(t, mem, "dt=2026-03-02", 4, "b", swap.Options{})
	rival := commit(t, mem, "dt=2026-03-03", 5, "c", swap.Options{})
	if r := publish(loseRace(t, mem, rival), b); r.Pending || r.FoldedOthers != 1 {
		t.Fatalf("the burst's holder: %+v, want the pending commit folded", r)
	}
	if currentSummary(t, mem)["pswap.lease"] == "" {
		t.Fatalf("the burst's last version names no holder: %v", currentSummary(t, mem))
	}

	// Its next holder is killed with a commit pending on it; the lease
	// expires; a lone commit comes.
	c := commit(t, mem, "dt=2026-03-04", 3, "d", swap.Options{})
	leftover("killed again", c)
	advance(21 * time.Second)
	d := commit(t, mem, "dt=2026-03-05", 4, "e", swap.Options{})
	if r := publish(mem, d); r.Pending || !r.Changed || r.FoldedOthers != 1 {
		t.Fatalf("the lone commit after the burst: %+v, want the killed holder's pending commit swept", r)
	}
	holdsAll(t, mem, a, b, rival, c, d)
	noMarkersNorLease(t, mem)

	// The sweep's version folded a commit, so it names its holder: the next
	// commit sweeps once more (nothing left), and its version, folding
	// nothing, ends the signal: the commit after it never touches the lease.
	advance(21 * time.Second)
	e := commit(t, mem, "dt=2026-03-06", 3, "f", swap.Options{})
	if r := publish(mem, e); r.Pending || !r.Changed || r.FoldedOthers != 0 {
		t.Fatalf("the commit after the sweep: %+v", r)
	}
	if h := currentSummary(t, mem)["pswap.lease"]; h != "" {
		t.Fatalf("a version that folded nothing names the holder %q", h)
	}
	f := commit(t, mem, "dt=2026-03-07", 4, "g", swap.Options{})
	cs := storetest.NewCounting(mem)
	if r := publish(cs, f); r.Pending || !r.Changed {
		t.Fatalf("a lone commit after the signal ended: %+v", r)
	}
	if n := cs.Counts()["delete"]; n != 0 {
		t.Fatalf("a lone commit after the signal ended took the lease (%d deletes): %v", n, cs.Counts())
	}
	holdsAll(t, mem, a, b, rival, c, d, e, f)
	noMarkersNorLease(t, mem)
	checkReaders(t, mem)
}

// TestLeaseTakeOverFoldsHolderCommit: a holder announces no marker for its
// own commit (it holds the lease), so a holder killed before its version
// left that commit out of the view until a reconcile; the lease now names
// it, and the publisher that takes the expired lease over folds it with the
// commits that were pending on the holder.
func TestLeaseTakeOverFoldsHolderCommit(t *testing.T) {
	mem, clk := clockedTable(t, time.Now().UTC())
	h := commit(t, mem, "dt=2026-03-01", 3, "h", swap.Options{}) // the killed holder's own
	a := commit(t, mem, "dt=2026-03-02", 4, "a", swap.Options{}) // pending on it
	body := fmt.Sprintf(`{"holder":"killed","version":1,"seconds":20,"partition":%q,"seq":%d}`, h.Partition, h.Seq)
	for k, v := range map[string]string{layout.LeaseKey: body, layout.FoldKey(a.Partition, a.Seq): ""} {
		if _, err := mem.Put(ctx, k, []byte(v), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(21 * time.Second)
	b := commit(t, mem, "dt=2026-03-03", 5, "b", swap.Options{})
	rival := commit(t, mem, "dt=2026-03-04", 6, "c", swap.Options{})
	r, err := lakehouse.PublishCommit(ctx, loseRace(t, mem, rival), lakehouse.Commit{Partition: b.Partition, Generation: b.Generation, Seq: b.Seq}, lakehouse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Pending || r.FoldedOthers != 2 {
		t.Fatalf("the take-over: %+v, want the pending commit and the killed holder's own folded", r)
	}
	holdsAll(t, mem, h, a, b, rival)
	noMarkersNorLease(t, mem)
	checkReaders(t, mem)
}

// TestLeaseTakeOverHolderNewerInOwnPartition: the killed holder's own
// commit is of the taker's partition, and newer (it replaced the taker's
// generation after the taker's swap). The taker publishes its own commit
// from SwappedAt, without reading its pointer: unless it announces the
// holder's commit too, its version shows the older generation, and the
// newer one waits for the next reconcile. The view must end at the
// holder's sequence number; a holder's older commit of the same partition
// (the taker's newer) must not be announced (nothing to fold).
func TestLeaseTakeOverHolderNewerInOwnPartition(t *testing.T) {
	for _, holderNewer := range []bool{true, false} {
		t.Run(fmt.Sprintf("holder newer %v", holderNewer), func(t *testing.T) {
			mem, clk := clockedTable(t, time.Now().UTC())
			first := commit(t, mem, "dt=2026-03-03", 3, "first", swap.Options{})
			second := commit(t, mem, "dt=2026-03-03", 4, "second", swap.Options{})
			holder, taker := second, first
			if !holderNewer {
				holder, taker = first, second
			}
			body := fmt.Sprintf(`{"holder":"killed","version":1,"seconds":20,"partition":%q,"seq":%d}`, holder.Partition, holder.Seq)
			if _, err := mem.Put(ctx, layout.LeaseKey, []byte(body), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			clk.Add(21 * time.Second)
			rival := commit(t, mem, "dt=2026-03-04", 6, "c", swap.Options{})
			r, err := lakehouse.PublishCommit(ctx, loseRace(t, mem, rival), lakehouse.Commit{Partition: taker.Partition, Generation: taker.Generation, Seq: taker.Seq, SwappedAt: time.Now()}, lakehouse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", r)
			want := 0
			if holderNewer {
				want = 1
			}
			if r.Pending || r.FoldedOthers != want {
				t.Fatalf("the take-over: %+v, want it published with %d folded", r, want)
			}
			holdsAll(t, mem, second, rival)
			noMarkersNorLease(t, mem)
		})
	}
}

// TestLeaseFirstPrefetch: a LeaseFirst publish under a live lease is
// pending after its marker and the lease's GET (2 requests): its prefetch
// reads nothing. Before, the prefetch read the lease (and, found free as
// it is when a burst starts, the hint, the version and its list), and the
// publish tried to create the lease before its marker: 3 under a live
// lease found by the prefetch, 7 in a burst that starts together. With
// the lease free, it holds it and publishes.
func TestLeaseFirstPrefetch(t *testing.T) {
	for _, live := range []bool{true, false} {
		t.Run(fmt.Sprintf("lease live %v", live), func(t *testing.T) {
			mem := publishedTable(t, 2)
			if live {
				if _, err := mem.Put(ctx, layout.LeaseKey, []byte(`{"holder":"other","version":1,"seconds":20}`), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			d := commit(t, mem, "dt=2026-03-01", 3, "d", swap.Options{})
			cs := storetest.NewCounting(mem)
			opts := lakehouse.Options{LeaseFirst: true}
			opts.Prefetch = lakehouse.StartPrefetch(env.With(ctx, &env.Env{Order: env.InOrder}), cs, opts, d.Partition)
			r, err := lakehouse.PublishCommit(ctx, cs, lakehouse.Commit{Partition: d.Partition, Generation: d.Generation, Seq: d.Seq, SwappedAt: d.SwappedAt}, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v: %d requests %v", r, cs.Total(), cs.Counts())
			if live {
				if !r.Pending || r.LeaseHolder != "other" || !maps.Equal(cs.Counts(), map[string]int{"get": 1, "put": 1}) {
					t.Fatalf("under a live lease: %+v, requests %v, want pending after the marker and the lease's GET", r, cs.Counts())
				}
				return
			}
			if r.Pending || !r.Changed {
				t.Fatalf("with the lease free: %+v, want it held and the commit published", r)
			}
			holdsAll(t, mem, d)
			noMarkersNorLease(t, mem)
		})
	}
}

// clockedTable returns a memory store on a testClock (determinism_test.go) starting at start,
// holding a table of two partitions published (on the real clock), and
// the clock.
func clockedTable(t *testing.T, start time.Time) (*memstore.Store, *testClock) {
	t.Helper()
	clk := &testClock{t: start}
	mem := memstore.New(memstore.Options{Now: clk.Now})
	for i := range 2 {
		commit(t, mem, fmt.Sprintf("dt=2026-01-%02d", i+1), 3, "x", swap.Options{})
	}
	if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
		t.Fatal(err)
	}
	return mem, clk
}
