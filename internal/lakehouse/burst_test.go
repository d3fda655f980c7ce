package lakehouse_test

import (
	"context"
	"fmt"
	"slices"
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

// staggered is what a staggered burst did (staggeredBurst).
type staggered struct {
	rs       []lakehouse.Result
	versions int
	total    int            // requests of the publishes and their prefetches
	byClass  map[string]int // by what they touched (spanClass) and op
	// tail is from the start of the last publish to the return of the
	// last one (the holder's, most often).
	tail     time.Duration
	timeline string
}

// staggeredBurst runs n writers of distinct partitions as the bench's
// processes do, on a store of 20 ms round trips: writer i starts its
// prefetch at i*gap (with opts), "commits" for 150 ms, then publishes
// (PublishCommit with opts and its prefetch), as `pswap commit` does after
// its pointer PUT. The commits themselves are made before the clock runs.
func staggeredBurst(t *testing.T, mem *memstore.Store, n int, gap time.Duration, opts lakehouse.Options) staggered {
	t.Helper()
	cs, before := burstCommits(t, mem, n)
	out := staggered{rs: make([]lakehouse.Result, n), byClass: map[string]int{}}
	synctest.Test(t, func(t *testing.T) {
		lat := storetest.NewLatency(mem, 20*time.Millisecond)
		start := time.Now()
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			lastStart time.Duration
		)
		for i := range n {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * gap)
				o := opts
				o.Prefetch = lakehouse.StartPrefetch(context.Background(), lat, opts, cs[i].Partition)
				time.Sleep(150 * time.Millisecond)
				mu.Lock()
				lastStart = max(lastStart, time.Since(start))
				mu.Unlock()
				c := cs[i]
				c.SwappedAt = time.Now()
				r, err := lakehouse.PublishCommit(context.Background(), lat, c, o)
				if err != nil {
					t.Errorf("publish %s: %v", c.Partition, err)
				}
				out.rs[i] = r
			})
		}
		wg.Wait()
		out.tail = time.Since(start) - lastStart
		var b strings.Builder
		for _, s := range lat.Spans() {
			out.total++
			out.byClass[spanClass(s.Key)+" "+s.Op]++
			b.WriteString(s.String())
			b.WriteByte('\n')
		}
		out.timeline = b.String()
	})
	_, after, err := lakehouse.Latest(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	out.versions = after - before
	return out
}

// spanClass names what a request touched, by its key.
func spanClass(key string) string {
	switch {
	case key == layout.LeaseKey:
		return "lease"
	case strings.HasPrefix(key, layout.FoldPrefix):
		return "marker"
	case key == lakehouse.VersionHintKey:
		return "hint"
	case strings.HasSuffix(key, ".metadata.json"):
		return "version"
	case strings.Contains(key, "/snap-"):
		return "list"
	case strings.HasPrefix(key, lakehouse.MetadataPrefix):
		return "manifest"
	case strings.HasSuffix(key, "pointer.json"):
		return "pointer"
	case strings.Contains(key, "/manifests/"):
		return "gen-manifest"
	}
	return "other"
}

func (s staggered) String() string {
	keys := make([]string, 0, len(s.byClass))
	for k := range s.byClass {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s:%d", k, s.byClass[k])
	}
	return fmt.Sprintf("%d requests (%.1f a publish), %d versions, tail %v;%s", s.total, float64(s.total)/float64(len(s.rs)), s.versions, s.tail, b.String())
}

// TestLeaseStaggeredBurst: 32 writers with --lease-first whose publishes
// start 25 ms apart (a burst as the bench's processes make it, not all at
// the same instant), each with its prefetch. Every commit is in the view
// once all have returned, no marker nor lease is left, and the burst costs
// few requests a publish beyond the pending ones' three, few versions,
// and a short tail after the last publish starts.
func TestLeaseStaggeredBurst(t *testing.T) {
	const n = 32
	mem := publishedTable(t, 4)
	s := staggeredBurst(t, mem, n, 25*time.Millisecond, lakehouse.Options{LeaseFirst: true})
	t.Logf("%d writers 25 ms apart, --lease-first: %v", n, s)
	if testing.Verbose() {
		t.Logf("timeline:\n%s", s.timeline)
	}
	pending := 0
	for _, r := range s.rs {
		if r.Pending {
			pending++
		}
	}
	if pending < n/2 {
		t.Errorf("%d of %d pending: the lease did not group the burst", pending, n)
	}
	if got := checkReaders(t, mem); len(got) != 4+n {
		t.Errorf("%d partitions in the view, want %d", len(got), 4+n)
	}
	noMarkersNorLease(t, mem)
}

// keyCounter counts the requests of each operation on the keys match
// takes.
type keyCounter struct {
	store.Store
	match func(string) bool
	mu    sync.Mutex
	n     map[string]int
}

func (k *keyCounter) add(op, key string) {
	if k.match(key) {
		k.mu.Lock()
		k.n[op]++
		k.mu.Unlock()
	}
}

func (k *keyCounter) Now(ctx context.Context) (time.Time, error) { return store.Now(ctx, k.Store) }

func (k *keyCounter) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	k.add("put", key)
	return k.Store.Put(ctx, key, data, opts)
}

func (k *keyCounter) Delete(ctx context.Context, key string) error {
	k.add("delete", key)
	return k.Store.Delete(ctx, key)
}

// TestLeaseHolderClearsWhatItFolds: a publisher that lost a race, took
// the lease and folded the commits pending on it into its own version
// deletes their markers once that version is written, as a holder's
// later rounds do. Before, it left them: its listing after the release
// found them, and it took the lease again, read the version it had just
// written (hint, version, list, and the group manifest once a marker) to
// find them all reflected, and deleted them only then: a second lease and
// 4+N reads at the end of every burst whose holder came by a lost race.
func TestLeaseHolderClearsWhatItFolds(t *testing.T) {
	mem := publishedTable(t, 2)
	a := commit(t, mem, "dt=2026-03-01", 3, "a", swap.Options{})
	rival := commit(t, mem, "dt=2026-03-02", 3, "r", swap.Options{})
	var pend []swap.Result
	for i := range 3 {
		c := commit(t, mem, fmt.Sprintf("dt=2026-03-%02d", 10+i), 3, "p", swap.Options{})
		if _, err := mem.Put(ctx, layout.FoldKey(c.Partition, c.Seq), nil, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		pend = append(pend, c)
	}
	kc := &keyCounter{Store: loseRace(t, mem, rival), match: func(key string) bool { return key == layout.LeaseKey }, n: map[string]int{}}
	r, err := lakehouse.PublishCommit(ctx, kc, lakehouse.Commit{Partition: a.Partition, Generation: a.Generation, Seq: a.Seq}, lakehouse.Options{})
	if err != nil || r.Pending || r.FoldedOthers != len(pend) {
		t.Fatalf("holder: %+v %v, want the %d pending commits folded", r, err, len(pend))
	}
	holdsAll(t, mem, append(pend, a, rival)...)
	noMarkersNorLease(t, mem)
	if kc.n["put"] != 1 || kc.n["delete"] != 1 {
		t.Errorf("the lease written %d times and deleted %d, want once each: the holder went round again for markers its own version settled", kc.n["put"], kc.n["delete"])
	}
}

// TestOptimisticBurst: 32 writers without --lease-first, each with its
// prefetch, whose publishes start at once (a fan-out) or 25 ms apart:
// each writes its version optimistically, the losers take the lease's
// path (their marker, then the lease: pending after two requests under a
// live holder). Every commit is in the view once all have returned, and
// no marker nor lease is left.
func TestOptimisticBurst(t *testing.T) {
	const n = 32
	for _, gap := range []time.Duration{0, 25 * time.Millisecond} {
		t.Run(fmt.Sprintf("gap %v", gap), func(t *testing.T) {
			mem := publishedTable(t, 4)
			s := staggeredBurst(t, mem, n, gap, lakehouse.Options{})
			t.Logf("%d writers %v apart, optimistic: %v", n, gap, s)
			if got := checkReaders(t, mem); len(got) != 4+n {
				t.Errorf("%d partitions in the view, want %d", len(got), 4+n)
			}
			noMarkersNorLease(t, mem)
		})
	}
}
