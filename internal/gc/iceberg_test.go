package gc_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// GC knows nothing of Iceberg: lakehouse.Referenced is the Protect option.
func protect(st store.Store, retention time.Duration) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		return lakehouse.Referenced(ctx, st, lakehouse.ExpireOptions{Retention: retention})
	}
}

// The test's generations hold fake files: a fixed schema stands in for
// their footers.
var fakeSchema = lakehouse.Options{Schema: func(context.Context, store.Store, []swap.FileRef) (*arrow.Schema, error) {
	return arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil), nil
}}

func publishCommit(t testing.TB, st store.Store, res swap.Result) {
	t.Helper()
	if _, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, fakeSchema); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

func objExists(t testing.TB, st store.Store, key string) bool {
	t.Helper()
	_, err := st.Stat(ctx, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestGCKeepsIcebergReferencedFiles: a generation named by a snapshot
// younger than the retention keeps its files, though GC would collect it;
// once its snapshot expires, GC collects it and Expire deletes the metadata
// only the expired snapshot used.
func TestGCKeepsIcebergReferencedFiles(t *testing.T) {
	// The store's clock jumps an hour before GC runs, past the commit
	// window GC waits out; the snapshots' own times are real.
	var skew atomic.Int64
	st := memstore.New(memstore.Options{Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	a := mustCommit(t, st, part, "a")
	publishCommit(t, st, a)
	time.Sleep(time.Second) // snapshot times are milliseconds; leave a wide gap
	cut := time.Now()
	b := mustCommit(t, st, part, "b")
	publishCommit(t, st, b)
	c := mustCommit(t, st, part, "c")
	publishCommit(t, st, c)
	files := func(gen string) []string {
		m, err := swap.ReadManifest(ctx, st, part, gen)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range swap.Files(st, m) {
			out = append(out, f.Key)
		}
		return out
	}
	aFiles, bFiles, cFiles := files(a.Generation), files(b.Generation), files(c.Generation)
	retention := time.Since(cut) + 500*time.Millisecond // snapshots of b and c, not of a (a is 1s older than b)

	skew.Store(int64(time.Hour))
	opts := gc.Options{Keep: -1, MinAge: -1, Protect: protect(st, retention)}
	r, err := gc.Partition(ctx, st, part, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range bFiles {
		if !objExists(t, st, k) {
			t.Fatalf("GC deleted %s, named by a snapshot younger than the retention (report %+v)", k, r)
		}
	}
	for _, k := range aFiles {
		if objExists(t, st, k) {
			t.Fatalf("GC kept %s, whose only snapshot is older than the retention", k)
		}
	}

	// Expire: the snapshot of a goes, with the metadata only it used.
	ex, err := lakehouse.Expire(ctx, st, lakehouse.ExpireOptions{Retention: retention, MinAge: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Expired) != 1 || ex.Version != 4 {
		t.Fatalf("expire: %+v, want one snapshot expired in version 4", ex)
	}
	if objExists(t, st, lakehouse.MetadataKey(1)) || !objExists(t, st, lakehouse.MetadataKey(4)) {
		t.Fatalf("after expiry: v1 exists %v, v4 exists %v (deleted %v)", objExists(t, st, lakehouse.MetadataKey(1)), objExists(t, st, lakehouse.MetadataKey(4)), ex.Deleted)
	}
	// The current snapshot still reads completely.
	keys, err := lakehouse.Referenced(ctx, st, lakehouse.ExpireOptions{Retention: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(cFiles) {
		t.Fatalf("current snapshot names %d files, want %d", len(keys), len(cFiles))
	}
	for _, k := range keys {
		if !objExists(t, st, k) {
			t.Fatalf("current snapshot names %s, which is gone", k)
		}
	}

	// With a retention that covers none but the current snapshot, b goes too
	// (its manifest went in the first run: its files are orphans now, which
	// GC collects after the orphan age).
	skew.Store(int64(48 * time.Hour))
	if _, err := gc.Partition(ctx, st, part, gc.Options{Keep: -1, MinAge: -1, Protect: protect(st, time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	for _, k := range bFiles {
		if objExists(t, st, k) {
			t.Fatalf("GC kept %s after its snapshot left the retention", k)
		}
	}
}

// TestRaceGCWithPublisher: writers commit and publish 4 partitions while
// GC collects everything it may, protecting what the Iceberg snapshots of
// the last half second name; every data file the current snapshot names is
// there whenever a reader looks, and at the end every file that a snapshot
// within the retention names. (A snapshot that names a generation already
// retired, published later than MinAge after the swap, is protected only
// from the next GC run on: MinAge must cover the lag of publishing.)
//
// It runs in a synctest bubble: the goroutines race as ever between their
// pauses, but the clock is the bubble's, so the run ends on events (enough
// commits, GC rounds and collected generations), not after some wall-clock
// time in which a loaded machine may do too little.
func TestRaceGCWithPublisher(t *testing.T) {
	synctest.Test(t, raceGCWithPublisher)
}

func raceGCWithPublisher(t *testing.T) {
	// The store's clock runs 1,000 times as fast as the bubble's, so GC's
	// commit window passes within a second; the snapshots' retention is in
	// the bubble's time, so what GC may collect is what Protect must save.
	start := time.Now()
	st := memstore.New(memstore.Options{Now: func() time.Time { return start.Add(time.Since(start) * 1000) }})
	const (
		parts      = 4
		minCommits = 8
		minRounds  = 3
		deadline   = time.Minute // of the bubble's time: the events come long before
	)
	var (
		stop              atomic.Bool
		wg                sync.WaitGroup
		commits, rounds   atomic.Int64
		checks, conflicts atomic.Int64
		collected         atomic.Int64
	)
	fail := func(format string, args ...any) { t.Errorf(format, args...); stop.Store(true) }
	retention := 500 * time.Millisecond
	for w := range parts {
		wg.Go(func() {
			p := fmt.Sprintf("dt=2026-11-%02d", w+1)
			for i := 0; !stop.Load(); i++ {
				res, err := commit(t, st, p, fmt.Sprintf("w%d-%d", w, i), swap.Options{Force: true, OnConflict: swap.Overwrite})
				if err != nil {
					fail("commit %s: %v", p, err)
					return
				}
				if _, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: p, Generation: res.Generation, Seq: res.Seq}, fakeSchema); err != nil {
					fail("publish %s: %v", p, err)
					return
				}
				commits.Add(1)
				time.Sleep(250 * time.Millisecond)
			}
		})
	}
	wg.Go(func() { // GC loop
		for !stop.Load() {
			// MinAge (200ms of the bubble's) covers readers of a
			// just-replaced snapshot; the retention (500ms) is Protect's alone.
			tr, err := gc.Table(ctx, st, "", gc.Options{Keep: -1, MinAge: 200 * time.Second, MaxAttempts: 100, Protect: protect(st, retention)})
			if err != nil && !errors.Is(err, gc.ErrBusy) {
				fail("gc: %v", err)
			}
			collected.Add(int64(tr.Totals.Collected))
			rounds.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	})
	wg.Go(func() { // an Iceberg reader: the current snapshot's files are all there
		for !stop.Load() {
			keys, err := lakehouse.Referenced(ctx, st, lakehouse.ExpireOptions{Retention: time.Millisecond})
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					conflicts.Add(1) // a version replaced while read: read again
					continue
				}
				fail("reader: %v", err)
				return
			}
			for _, k := range keys {
				if !objExists(t, st, k) {
					fail("the current Iceberg snapshot names %s, which GC deleted", k)
				}
			}
			checks.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	})
	for !stop.Load() && (rounds.Load() < minRounds || commits.Load() < minCommits || collected.Load() == 0) {
		if time.Since(start) > deadline {
			fail("too little happened in %v: %d GC rounds, %d commits, %d generations collected", deadline, rounds.Load(), commits.Load(), collected.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		return
	}
	// One more GC: every file a snapshot within the retention names is there.
	if _, err := gc.Table(ctx, st, "", gc.Options{Keep: -1, MinAge: 200 * time.Second, Protect: protect(st, retention)}); err != nil {
		t.Fatal(err)
	}
	named, err := lakehouse.Referenced(ctx, st, lakehouse.ExpireOptions{Retention: retention})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range named {
		if !objExists(t, st, k) {
			t.Fatalf("a snapshot younger than the retention names %s, which GC deleted", k)
		}
	}
	// The final metadata names exactly the current generations, all there.
	if _, err := lakehouse.Publish(ctx, st, fakeSchema); err != nil {
		t.Fatal(err)
	}
	keys, err := lakehouse.Referenced(ctx, st, lakehouse.ExpireOptions{Retention: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for w := range parts {
		s, err := swap.Resolve(ctx, st, fmt.Sprintf("dt=2026-11-%02d", w+1))
		if err != nil {
			t.Fatal(err)
		}
		want += len(s.Files)
	}
	if len(keys) != want {
		t.Fatalf("final snapshot names %d files, the current generations have %d", len(keys), want)
	}
	t.Logf("%d commits published, %d GC rounds collected %d generations, %d reader checks (%d re-reads), nothing the current snapshot names was lost",
		commits.Load(), rounds.Load(), collected.Load(), checks.Load(), conflicts.Load())
}
