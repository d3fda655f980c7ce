package lakehouse_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
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

// TestConcurrentWriters: 64 writers commit 64 partitions at once, each
// publishing right after its commit. No commit conflicts on its pointer,
// publishers that lose the race for the next version rebase, and the final
// metadata has every partition.
func TestConcurrentWriters(t *testing.T) {
	backends(t, func(t *testing.T, st store.Store) {
		n := 16
		if os.Getenv("PSWAP_STRESS") != "" {
			n = 64 // ~15s on file://, ~40s on MinIO
		}
		var (
			wg        sync.WaitGroup
			conflicts atomic.Int64
			rebases   atomic.Int64
			failed    atomic.Int64
		)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				part := fmt.Sprintf("dt=2026-10-%02d/hr=%02d", i%28+1, i/28)
				res, _, err := commitErr(st, part, 5+i, "w", swap.Options{RunID: fmt.Sprint("run-", i)})
				if errors.Is(err, swap.ErrConflict) {
					conflicts.Add(1)
					return
				}
				if err != nil {
					t.Errorf("commit %s: %v", part, err)
					return
				}
				r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: part, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
				rebases.Add(int64(r.Rebases))
				if err != nil {
					failed.Add(1)
					t.Errorf("publish %s: %v", part, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if conflicts.Load() != 0 {
			t.Fatalf("%d pointer conflicts between writers of different partitions", conflicts.Load())
		}
		got := checkReaders(t, st)
		if len(got) != n {
			t.Fatalf("final metadata has %d partitions, want %d", len(got), n)
		}
		loc, v, _ := lakehouse.Latest(ctx, st)
		t.Logf("%d writers: 0 pointer conflicts, %d publish rebases, %d failed publishes, final %s (version %d) has %d partitions",
			n, rebases.Load(), failed.Load(), loc, v, len(got))
	})
}

// TestRequestsPerPublish: a publish after a commit costs the same number of
// requests on a table of 10 partitions as on one of 50, and at most 8
// (issue 41): it reads the hint, the latest metadata, its manifest list
// and the manifest of the commit's group it replaces (its files recorded
// as deleted), and writes one manifest, one manifest list, the next
// metadata version and the hint. No footer: the commit's manifest records
// the column statistics. No pointer: the commit's own result says what it
// made current and when (Commit.SwappedAt). No publish lease: a lone
// writer publishes optimistically, and only one that loses the race for a
// version, or finds a burst in progress, takes the lease's path
// (lease.go). A caller without the swap's time (a commit not its own)
// reads the pointer: 9.
func TestRequestsPerPublish(t *testing.T) {
	for _, own := range []bool{true, false} {
		var counts []int
		for _, parts := range []int{10, 50} {
			mem := publishedTable(t, parts)
			res := commit(t, mem, "dt=2026-01-01", 9, "y", swap.Options{OnConflict: swap.Overwrite})
			m, err := swap.ReadManifest(ctx, mem, res.Partition, res.Generation)
			if err != nil {
				t.Fatal(err)
			}
			c := lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: m}
			if own {
				if res.SwappedAt.IsZero() {
					t.Fatalf("the commit's result has no SwappedAt: %+v", res)
				}
				c.SwappedAt = res.SwappedAt
			}
			st, reads := pointerReads(mem)
			r, err := lakehouse.PublishCommit(ctx, st, c, lakehouse.Options{})
			if err != nil || !r.Changed || r.Partitions != parts || r.Pending {
				t.Fatalf("publish: %+v, %v", r, err)
			}
			t.Logf("own %v, %d partitions: %d requests %v", own, parts, st.Total(), st.Counts())
			counts = append(counts, st.Total())
			want := map[string]int{"get": 4, "put-if-none-match": 3, "put-if-match": 1}
			if !own {
				want["get"]++
			}
			if !maps.Equal(st.Counts(), want) {
				t.Errorf("own %v, %d partitions: requests %v, want %v", own, parts, st.Counts(), want)
			}
			if n := reads()[res.Partition]; own && n != 0 {
				t.Errorf("the publish of a commit with its SwappedAt read the pointer %d times", n)
			}
			if got := checkReaders(t, mem); got["dt=2026-01-01"] != 9 {
				t.Fatalf("rows %v", got)
			}
		}
		want := 8
		if !own {
			want = 9
		}
		if counts[0] != counts[1] || counts[0] != want {
			t.Fatalf("own %v: requests per publish %v, want %d for both table sizes", own, counts, want)
		}
	}
}

// publishedTable is a table of parts partitions of 3 rows each, all
// published.
func publishedTable(t testing.TB, parts int) *memstore.Store {
	t.Helper()
	mem := memstore.New(memstore.Options{})
	for i := range parts {
		commit(t, mem, fmt.Sprintf("dt=2026-%02d-%02d", i/28+1, i%28+1), 3, "x", swap.Options{})
	}
	if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
		t.Fatal(err)
	}
	return mem
}

// pointerReads counts the GETs of every partition's pointer under a
// request-counting store.
func pointerReads(mem store.Store) (*storetest.Counting, func() map[string]int) {
	var (
		mu    sync.Mutex
		reads = map[string]int{}
	)
	f := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if part, ok := layout.PartitionOfPointerKey(c.Key); ok && c.Key == layout.PointerKey(part) && c.Op == "get" {
			mu.Lock()
			reads[part]++
			mu.Unlock()
		}
		return storetest.Fault{}
	})
	return storetest.NewCounting(f), func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(reads)
	}
}

// TestRequestsPerReconcile: a reconcile (Publish) reads each partition's
// pointer once, in the listing that finds the partitions (it read them all
// a second time): on a table of N partitions one of which changed, one
// listing page, N pointers, the hint, the version and its manifest list,
// the listing of the manifests (a missing or truncated one is written anew),
// the changed partition's manifest, every group's Iceberg manifest (what
// each records of its members; the changed partition's group's is the one
// it replaces, whose files the new one records as deleted: one manifest
// per month of partitions), then the four writes of a publish (no footer:
// the changed partition's manifest records its column statistics). An
// attempt that would land later than MaxElapsed after those reads still
// reads every pointer again, and publishes what is current then.
func TestRequestsPerReconcile(t *testing.T) {
	for _, parts := range []int{10, 50} {
		mem := publishedTable(t, parts)
		commit(t, mem, "dt=2026-01-01", 9, "y", swap.Options{OnConflict: swap.Overwrite}) // not published
		st, reads := pointerReads(mem)
		r, err := lakehouse.Publish(ctx, st, lakehouse.Options{})
		if err != nil || !r.Changed || r.Partitions != parts {
			t.Fatalf("reconcile: %+v, %v", r, err)
		}
		t.Logf("%d partitions: %d requests %v", parts, st.Total(), st.Counts())
		got := reads()
		if len(got) != parts {
			t.Fatalf("pointers of %d partitions read, want %d: %v", len(got), parts, got)
		}
		for part, n := range got {
			if n != 1 {
				t.Fatalf("pointer of %s read %d times, want once", part, n)
			}
		}
		groups := (parts + 27) / 28 // publishedTable: 28 days a month
		// + 1: the listing of the manifests (damagedManifests); + 1: the
		// root's listing for partitions of the legacy layout (swap.ListPointers);
		// + 1: the listing of the fold markers of pending commits (lease.go).
		if want := 1 + parts + 3 + 1 + 1 + groups + 4 + 1 + 1; st.Total() != want {
			t.Fatalf("%d requests for a reconcile of %d partitions, want %d: %v", st.Total(), parts, want, st.Counts())
		}
		if got := checkReaders(t, mem); got["dt=2026-01-01"] != 9 {
			t.Fatalf("rows %v", got)
		}
	}
	t.Run("slow attempt", func(t *testing.T) {
		mem := memstore.New(memstore.Options{})
		for i := range 3 {
			commit(t, mem, fmt.Sprintf("dt=2026-11-0%d", i+1), 3, "x", swap.Options{})
		}
		clock := newTestClock()
		st, reads := pointerReads(mem)
		hs := &putHookStore{Store: st, prefix: lakehouse.MetadataPrefix + "pswap-"}
		hs.hook = func() {
			// While the first attempt writes its manifests: time passes
			// and a commit lands.
			clock.Add(2 * time.Minute)
			commit(t, mem, "dt=2026-11-02", 6, "b", swap.Options{OnConflict: swap.Overwrite})
		}
		r, err := lakehouse.Publish(clocked(clock.Now), hs, lakehouse.Options{MaxElapsed: time.Minute})
		if err != nil || !r.Changed || r.Rebases != 1 || r.Version != 1 {
			t.Fatalf("reconcile: %+v %v, want one version after one re-plan", r, err)
		}
		for part, n := range reads() {
			if n != 2 {
				t.Fatalf("pointer of %s read %d times by a reconcile planned twice, want twice: %v", part, n, reads())
			}
		}
		if got := checkReaders(t, mem); got["dt=2026-11-02"] != 6 || len(got) != 3 {
			t.Fatalf("rows %v: the slow attempt's generation was published, not the current one", got)
		}
	})
}

// TestOwnSwapAge: a commit's own publish skips the pointer's GET only
// while its SwappedAt is at most MaxElapsed/2 old on the publish's clock
// (the attempt is timed from it: stale); older, or from the future, the
// pointer is read as for a commit that is not the caller's.
func TestOwnSwapAge(t *testing.T) {
	for _, tc := range []struct {
		age   time.Duration
		reads int
	}{{0, 0}, {time.Minute, 0}, {2*time.Minute + 31*time.Second, 1}, {-time.Second, 1}} {
		mem := publishedTable(t, 3)
		clock := newTestClock()
		ectx := env.With(ctx, &env.Env{Clock: clock.Now})
		res := commit(t, mem, "dt=2026-01-02", 7, "z", swap.Options{OnConflict: swap.Overwrite})
		st, reads := pointerReads(mem)
		c := lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, SwappedAt: clock.Now().Add(-tc.age)}
		r, err := lakehouse.PublishCommit(ectx, st, c, lakehouse.Options{MaxElapsed: 5 * time.Minute})
		if err != nil || !r.Changed {
			t.Fatalf("age %s: %+v %v", tc.age, r, err)
		}
		if n := reads()[res.Partition]; n != tc.reads {
			t.Errorf("SwappedAt %s old: the pointer read %d times, want %d", tc.age, n, tc.reads)
		}
		if got := checkReaders(t, mem); got["dt=2026-01-02"] != 7 {
			t.Fatalf("rows %v", got)
		}
	}
}

// TestReconcileOwnCommits: a reconcile handed the caller's own commits
// (Options.Commits, a backfill's) reads none of their pointers, and
// every other partition's once; one whose SwappedAt is too old is read.
func TestReconcileOwnCommits(t *testing.T) {
	mem := publishedTable(t, 4)
	a := commit(t, mem, "dt=2026-01-01", 5, "a", swap.Options{OnConflict: swap.Overwrite})
	b := commit(t, mem, "dt=2026-01-02", 6, "b", swap.Options{OnConflict: swap.Overwrite})
	old := commit(t, mem, "dt=2026-01-03", 7, "c", swap.Options{OnConflict: swap.Overwrite})
	old.SwappedAt = old.SwappedAt.Add(-time.Hour)
	var cs []lakehouse.Commit
	for _, r := range []swap.Result{a, b, old} {
		cs = append(cs, lakehouse.Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq, SwappedAt: r.SwappedAt})
	}
	st, reads := pointerReads(mem)
	r, err := lakehouse.Publish(ctx, st, lakehouse.Options{Commits: cs})
	if err != nil || !r.Changed || r.Partitions != 4 {
		t.Fatalf("reconcile: %+v %v", r, err)
	}
	got := reads()
	for part, want := range map[string]int{a.Partition: 0, b.Partition: 0, old.Partition: 1, "dt=2026-01-04": 1} {
		if got[part] != want {
			t.Errorf("pointer of %s read %d times, want %d (%v)", part, got[part], want, got)
		}
	}
	if rows := checkReaders(t, mem); rows["dt=2026-01-01"] != 5 || rows["dt=2026-01-02"] != 6 || rows["dt=2026-01-03"] != 7 {
		t.Fatalf("rows %v", rows)
	}
}
