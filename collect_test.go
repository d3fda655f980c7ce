package pswap_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// fakeClock is a store clock that tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Table.GC keeps the files of Iceberg snapshots within the retention, judged
// by the store's clock (here days before this machine's), deletes them
// once the snapshot is older, and then expires that snapshot.
func TestGCKeepsWhatIcebergNames(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	mem := memstore.New(memstore.Options{Now: clock.Now})
	tbl := pswap.NewTable(mem)
	day, err := tbl.Partition("dt=2026-11-01")
	if err != nil {
		t.Fatal(err)
	}
	commit := func(run string, n int) pswap.Result {
		w, err := day.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: run, OnConflict: pswap.Overwrite}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := pswap.Write(w, Sale{int64(i), "Lisbon", 1}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if pub := w.Publish(env.With(ctx, &env.Env{Clock: clock.Now}), pswap.PublishOptions{}); !pub.Published {
			t.Fatal(pub.Err)
		}
		clock.Add(time.Second)
		return res
	}
	a := commit("a", 3)
	b := commit("b", 2)
	filesOf := func(r pswap.Result) []string {
		var keys []string
		for k, err := range mem.List(ctx, layout.DataPrefix("dt=2026-11-01", r.Generation)) {
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k.Key)
		}
		return keys
	}
	aFiles := filesOf(a)
	if len(aFiles) == 0 {
		t.Fatal("no files for the first generation")
	}
	opts := pswap.GCOptions{
		// A short orphan age: the files of a generation whose manifest
		// went would be an orphan's at once; the generation Iceberg still
		// names keeps its manifest.
		Keep: pswap.GCNone, MinAge: pswap.GCNone, OrphanAge: time.Second, CommitWindow: time.Second, Concurrency: 1,
		SnapshotRetention: 10 * time.Second,
		MetadataMinAge:    time.Second,
	}
	clock.Add(5 * time.Second) // a retired 6 s ago, its snapshot is 7 s old
	rep, err := tbl.GC(ctx, opts)
	if err != nil || rep.ExpireErr != nil {
		t.Fatal(err, rep.ExpireErr)
	}
	if got := filesOf(a); len(got) != len(aFiles) {
		t.Fatalf("the files of a generation a retained snapshot names were deleted: %v left of %v", got, aFiles)
	}
	if _, err := mem.Stat(ctx, layout.ManifestKey(a.Partition, a.Generation)); err != nil {
		t.Fatalf("the manifest of a generation a retained snapshot names: %v", err)
	}
	if len(rep.ExpiredSnapshots) != 0 {
		t.Fatalf("expired %v within the retention", rep.ExpiredSnapshots)
	}
	clock.Add(10 * time.Second)
	rep, err = tbl.GC(ctx, opts)
	if err != nil || rep.ExpireErr != nil {
		t.Fatal(err, rep.ExpireErr)
	}
	if got := filesOf(a); len(got) != 0 {
		t.Fatalf("the files of %s survived their snapshot's retention: %v", a.Generation, got)
	}
	if len(rep.ExpiredSnapshots) != 1 || rep.Totals.Objects != len(aFiles)+2 {
		t.Fatalf("expired %v, deleted %d objects; want 1 snapshot and %d (a's files, manifest and attempt record)", rep.ExpiredSnapshots, rep.Totals.Objects, len(aFiles)+2)
	}
	// What the metadata names is there, and is b's.
	keys, err := lakehouse.Referenced(ctx, mem, lakehouse.ExpireOptions{Now: clock.Now, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	bFiles := filesOf(b)
	if len(keys) != len(bFiles) || len(keys) == 0 {
		t.Fatalf("the metadata names %v, the current generation has %v", keys, bFiles)
	}
	for _, k := range keys {
		if _, err := mem.Stat(ctx, k); err != nil {
			t.Fatalf("the metadata names %s: %v", k, err)
		}
	}
	if _, err := mem.Stat(ctx, lakehouse.MetadataKey(1)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the first version was not swept: %v", err)
	}
	// A prefix and a list at once are refused before anything happens.
	if _, err := tbl.GC(ctx, pswap.GCOptions{Prefix: "dt=", Partitions: []string{"dt=2026-11-01"}}); err == nil {
		t.Fatal("a prefix and partitions at once were accepted")
	}
}

// A generation that a retained Iceberg snapshot names is kept whole by
// Table.GC: its files and its manifest, so that it stays a generation (its
// manifest verifies against its files, a rollback to it works) and is not
// taken for an orphan's files later; the generation between it and the
// current one, which no
// snapshot names, is collected. Once no snapshot names it, it is collected
// as every retired generation is, manifest and files.
func TestGCKeepsAProtectedGenerationWhole(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	mem := memstore.New(memstore.Options{Now: clock.Now})
	tbl := pswap.NewTable(mem)
	const part = "dt=2026-11-01"
	day, err := tbl.Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(run string, n int, publish bool) pswap.Result {
		w, err := day.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: run, OnConflict: pswap.Overwrite}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := pswap.Write(w, Sale{int64(i), run, float64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if publish {
			if pub := w.Publish(env.With(ctx, &env.Env{Clock: clock.Now}), pswap.PublishOptions{}); !pub.Published {
				t.Fatal(pub.Err)
			}
		}
		clock.Add(time.Second)
		return res
	}
	objectsOf := func(gen string) (keys []string) {
		for a, err := range mem.List(ctx, layout.MetaPrefix(part)) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(a.Key, gen) {
				keys = append(keys, a.Key)
			}
		}
		return keys
	}
	verify := func(gen string) error {
		m, err := swap.ReadManifest(ctx, mem, part, gen)
		if err != nil {
			return err
		}
		_, err = pswap.VerifySnapshot(ctx, tbl, &swap.Snapshot{Manifest: m, Files: swap.Files(mem, m)})
		return err
	}
	a := commit("a", 3, true)
	b := commit("b", 4, false) // never published: no snapshot names it
	c := commit("c", 5, true)
	aObjects := objectsOf(a.Generation)
	if len(aObjects) < 2 {
		t.Fatalf("objects of the first generation: %v", aObjects)
	}
	opts := pswap.GCOptions{
		Keep: pswap.GCNone, MinAge: pswap.GCNone, OrphanAge: time.Second, CommitWindow: time.Second, Concurrency: 1,
		SnapshotRetention: 30 * time.Second,
		MetadataMinAge:    time.Second,
	}
	clock.Add(10 * time.Second) // a's snapshot is 13 s old: retained
	for run := 1; run <= 2; run++ {
		// The second run finds the chain ended by b's missing manifest:
		// a is still kept whole.
		rep, err := tbl.GC(ctx, opts)
		if err != nil || rep.ExpireErr != nil {
			t.Fatal(err, rep.ExpireErr)
		}
		if got := objectsOf(a.Generation); !slices.Equal(got, aObjects) {
			t.Fatalf("run %d: objects of the protected generation %v, want %v (deleted %v)", run, got, aObjects, rep.Partitions[0].Keys)
		}
		if err := verify(a.Generation); err != nil {
			t.Fatalf("run %d: the protected generation does not verify: %v", run, err)
		}
		if got := objectsOf(b.Generation); len(got) != 0 {
			t.Fatalf("run %d: the unprotected retired generation survived: %v", run, got)
		}
		if err := verify(c.Generation); err != nil {
			t.Fatalf("run %d: the current generation: %v", run, err)
		}
	}
	// Rollback reaches it (on a copy of the table, which the rest of the
	// test leaves as it is).
	cp := memstore.New(memstore.Options{Now: clock.Now})
	for a, err := range mem.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := store.ReadAll(ctx, mem, a.Key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cp.Put(ctx, a.Key, data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cday, err := pswap.NewTable(cp).Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	if rb, err := cday.Rollback(ctx, a.Generation, pswap.CommitOptions{}); err != nil || !rb.Changed || rb.Rows != 3 {
		t.Fatalf("rollback to the protected generation: %+v %v", rb, err)
	}
	if rep, err := cday.Verify(ctx); err != nil || !rep.OK || rep.Rows != 3 {
		t.Fatalf("verify after the rollback: %+v %v", rep, err)
	}
	clock.Add(30 * time.Second) // a's snapshot is past the retention
	rep, err := tbl.GC(ctx, opts)
	if err != nil || rep.ExpireErr != nil {
		t.Fatal(err, rep.ExpireErr)
	}
	if got := objectsOf(a.Generation); len(got) != 0 {
		t.Fatalf("the generation survived its snapshot's retention: %v", got)
	}
	if rep.Totals.Objects != len(aObjects) {
		t.Fatalf("deleted %d objects, want a's %d: %v", rep.Totals.Objects, len(aObjects), rep.Partitions[0].Keys)
	}
	if err := verify(a.Generation); !errors.Is(err, swap.ErrGenerationNotFound) {
		t.Fatalf("the collected generation's manifest: %v", err)
	}
	if err := verify(c.Generation); err != nil {
		t.Fatalf("the current generation: %v", err)
	}
}

// lagCatalog is a catalog of one table in memory; down makes it
// unreachable.
type lagCatalog struct {
	mu   sync.Mutex
	loc  string
	down bool
}

var errLagCatalogDown = errors.New("catalog unreachable")

func (c *lagCatalog) Current(context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.down:
		return "", errLagCatalogDown
	case c.loc == "":
		return "", catalog.ErrNotRegistered
	}
	return c.loc, nil
}

func (c *lagCatalog) Register(_ context.Context, loc string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.down:
		return errLagCatalogDown
	case c.loc != "":
		return catalog.ErrCatalogConflict
	}
	c.loc = loc
	return nil
}

func (c *lagCatalog) Swap(_ context.Context, prev, loc string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.down:
		return errLagCatalogDown
	case c.loc != prev:
		return catalog.ErrCatalogConflict
	}
	c.loc = loc
	return nil
}

func (c *lagCatalog) String() string { return "memory catalog" }

func (c *lagCatalog) names() string { c.mu.Lock(); defer c.mu.Unlock(); return c.loc }

// Library GC is CLI GC (issue 38, item 7): with a catalog that lags (an
// outage left it on an older version), Table.GC brings it to the latest
// version before it deletes anything, also in a run over a prefix (which
// expires nothing); when the catalog cannot be brought forward, nothing is
// deleted and the error says so.
func TestGCBringsALaggingCatalogForwardFirst(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	mem := memstore.New(memstore.Options{Now: clock.Now})
	cat := &lagCatalog{}
	// What the catalog named when GC made its first delete.
	var (
		mu          sync.Mutex
		atFirstDel  *string
		deletesSeen int
	)
	st := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "delete" {
			mu.Lock()
			defer mu.Unlock()
			deletesSeen++
			if atFirstDel == nil {
				loc := cat.names()
				atFirstDel = &loc
			}
		}
		return storetest.Fault{}
	})
	tbl := pswap.NewTable(st)
	day, err := tbl.Partition("dt=2026-11-01")
	if err != nil {
		t.Fatal(err)
	}
	pctx := env.With(ctx, &env.Env{Clock: clock.Now})
	commit := func(n int, opts pswap.PublishOptions) pswap.PublishResult {
		w, err := day.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := pswap.Write(w, Sale{int64(i), "Lisbon", 1}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		pub, err := tbl.Publish(pctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Second)
		return pub
	}
	first := commit(3, pswap.PublishOptions{Catalog: cat})
	latest := commit(2, pswap.PublishOptions{}) // the catalog was not there: it lags
	if cat.names() != first.MetadataLocation || latest.Version <= first.Version {
		t.Fatalf("the catalog names %q, want the first version %q (latest %q)", cat.names(), first.MetadataLocation, latest.MetadataLocation)
	}
	clock.Add(10 * time.Second)
	opts := pswap.GCOptions{Keep: pswap.GCNone, MinAge: pswap.GCNone, OrphanAge: time.Second, CommitWindow: time.Second,
		SnapshotRetention: time.Second, MetadataMinAge: time.Second, Prefix: "dt=", Catalog: cat}

	// Down: nothing is deleted.
	cat.down = true
	before := countObjects(t, mem)
	rep, err := tbl.GC(ctx, opts)
	if err == nil || !strings.Contains(err.Error(), "nothing was deleted: the catalog could not be brought to the latest version") ||
		!errors.Is(err, errLagCatalogDown) {
		t.Fatalf("GC with the catalog down: %v (report %+v)", err, rep.Totals)
	}
	if after := countObjects(t, mem); after != before || deletesSeen != 0 {
		t.Fatalf("GC with the catalog down deleted %d objects (%d deletes)", before-after, deletesSeen)
	}

	// Up: brought forward before the first delete.
	cat.down = false
	rep, err = tbl.GC(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Collected != 1 || atFirstDel == nil {
		t.Fatalf("GC collected %d generations, deleted %d objects: want the retired one", rep.Totals.Collected, rep.Totals.Objects)
	}
	if *atFirstDel != latest.MetadataLocation {
		t.Fatalf("the catalog named %q when GC made its first delete, want the latest version %q", *atFirstDel, latest.MetadataLocation)
	}
	if cat.names() != latest.MetadataLocation {
		t.Fatalf("after GC the catalog names %q, want %q", cat.names(), latest.MetadataLocation)
	}
}

// countObjects counts the objects of a store.
func countObjects(t *testing.T, st store.Store) int {
	t.Helper()
	n := 0
	for _, err := range st.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// GCPartition says why each generation was kept, as `pswap gc` prints it
// (issue 38, item 7): the current one, the one kept for rollback, the one
// retired too recently; and OnPartition reports each partition.
func TestGCPartitionKeptReasons(t *testing.T) {
	mem := memstore.New()
	tbl := pswap.NewTable(mem)
	day, err := tbl.Partition("dt=2026-11-01")
	if err != nil {
		t.Fatal(err)
	}
	var gens []string
	for i := range 3 {
		w, err := day.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := pswap.Write(w, Sale{int64(i), "Porto", 1}); err != nil {
			t.Fatal(err)
		}
		res, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, res.Generation)
	}
	var (
		mu   sync.Mutex
		seen []string
	)
	rep, err := tbl.GC(ctx, pswap.GCOptions{DryRun: true, OnPartition: func(p pswap.GCPartition) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, p.Partition)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Partitions) != 1 || !slices.Equal(seen, []string{"dt=2026-11-01"}) {
		t.Fatalf("partitions %+v, reported %v", rep.Partitions, seen)
	}
	p := rep.Partitions[0]
	want := map[string]string{gens[2]: pswap.GCKeptCurrent, gens[1]: pswap.GCKeptForRollback, gens[0]: pswap.GCKeptMinAge}
	if !maps.Equal(p.KeptReasons, want) || !p.DryRun || p.Current != gens[2] {
		t.Fatalf("kept %v for %v (dry run %v, current %s), want %v", p.Kept, p.KeptReasons, p.DryRun, p.Current, want)
	}
}
