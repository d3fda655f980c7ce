package lakehouse_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
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

// putHook runs hook (once) before the first PUT of a key that match takes.
type putHook struct {
	store.Store
	match func(string) bool
	once  sync.Once
	hook  func()
}

// Now is the wrapped store's clock (store.Clock).
func (h *putHook) Now(ctx context.Context) (time.Time, error) { return store.Now(ctx, h.Store) }

func (h *putHook) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	if h.match(key) {
		h.once.Do(h.hook)
	}
	return h.Store.Put(ctx, key, data, opts)
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
			var mu sync.Mutex
			clock := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			mem := memstore.New(memstore.Options{Now: now})
			for i := range 2 {
				commit(t, mem, fmt.Sprintf("dt=2026-01-%02d", i+1), 3, "x", swap.Options{})
			}
			if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
				t.Fatal(err)
			}
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
			mu.Lock()
			if tc.expired {
				clock = clock.Add(21 * time.Second)
			} else {
				clock = clock.Add(5 * time.Second)
			}
			mu.Unlock()
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
