package gc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// fakeClock drives a memory store's timestamps and clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

const part = "dt=2026-11-29"

func TestKeep(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		for _, tc := range []struct {
			keep int
			want int // generations kept, current included
		}{
			{keep: 0, want: 2}, // default: one retired
			{keep: 3, want: 4},
			{keep: -1, want: 1}, // none
			{keep: 10, want: 5}, // more than there are
		} {
			t.Run(fmt.Sprintf("keep=%d", tc.keep), func(t *testing.T) {
				st := newStore(t)
				gens := commitN(t, st, part, 5)
				st.advance(gc.DefaultMinAge + time.Hour)
				ptrBefore := list(t, st, layout.PointerKey(part))
				r := mustGC(t, st, part, gc.Options{Keep: tc.keep})

				newestFirst := slices.Clone(gens)
				slices.Reverse(newestFirst)
				if !slices.Equal(r.Kept, newestFirst[:tc.want]) {
					t.Fatalf("kept %v, want %v", r.Kept, newestFirst[:tc.want])
				}
				wantCollected := slices.Sorted(slices.Values(newestFirst[tc.want:]))
				if !slices.Equal(r.Collected, wantCollected) {
					t.Fatalf("collected %v, want %v", r.Collected, wantCollected)
				}
				if r.Current != gens[4] || r.Objects != 3*len(wantCollected) || len(r.Keys) != r.Objects {
					t.Fatalf("report %+v", r)
				}
				for i, g := range newestFirst {
					want := "whole"
					if i >= tc.want {
						want = "gone"
					}
					if got := genState(t, st, part, g); got != want {
						t.Errorf("generation %d (%s): %s, want %s", 4-i, g, got, want)
					}
				}
				if got := list(t, st, layout.PointerKey(part)); fmt.Sprint(got) != fmt.Sprint(ptrBefore) {
					t.Fatalf("pointer changed: %v -> %v", ptrBefore, got)
				}
				checkCurrent(t, st, part)
				h, err := swap.History(ctx, st, part, 0)
				if err != nil {
					t.Fatal(err)
				}
				kept := 0
				for _, e := range h {
					if !e.Collected {
						kept++
					}
				}
				if kept != tc.want {
					t.Fatalf("history after GC: %+v", h)
				}
				// A second run finds nothing more to do.
				if r2 := mustGC(t, st, part, gc.Options{Keep: tc.keep}); r2.Objects != 0 || len(r2.Kept) != tc.want {
					t.Fatalf("second run: %+v", r2)
				}
			})
		}
	})
}

// MinAge keeps every generation retired less than MinAge ago, judged by an
// upper bound of its retirement: the pointer's timestamp for the parent of
// the current generation; for older ones the earlier of the grandchild's
// manifest timestamp and the child's plus CommitWindow.
func TestMinAge(t *testing.T) {
	clk := newFakeClock()
	st := memstore.New(memstore.Options{Now: clk.Now})
	var gens []string
	for i := range 4 { // committed at t = 0h, 1h, 2h, 3h
		if i > 0 {
			clk.advance(time.Hour)
		}
		gens = append(gens, mustCommit(t, st, part, fmt.Sprint("v", i)).Generation)
	}
	g0, g1, g2, g3 := gens[0], gens[1], gens[2], gens[3]
	// Retired no later than: g2 at 3h (pointer), g1 at 2h15m (g2's manifest
	// + 15m), g0 at 1h15m (g1's manifest + 15m).
	steps := []struct {
		at   time.Duration // since g0's commit
		keep int
		want []string
	}{
		{at: 3 * time.Hour, keep: -1, want: []string{g3, g2, g1, g0}},
		{at: 7*time.Hour + 14*time.Minute, keep: -1, want: []string{g3, g2, g1, g0}},
		{at: 7*time.Hour + 16*time.Minute, keep: -1, want: []string{g3, g2, g1}},
		{at: 8*time.Hour + 14*time.Minute, keep: -1, want: []string{g3, g2, g1}},
		{at: 8*time.Hour + 16*time.Minute, keep: -1, want: []string{g3, g2}},
		{at: 8*time.Hour + 59*time.Minute, keep: -1, want: []string{g3, g2}},
		{at: 9*time.Hour + time.Minute, keep: 1, want: []string{g3, g2}}, // Keep holds g2
		{at: 9*time.Hour + time.Minute, keep: -1, want: []string{g3}},
	}
	elapsed := 3 * time.Hour
	for _, s := range steps {
		clk.advance(s.at - elapsed)
		elapsed = s.at
		r := mustGC(t, st, part, gc.Options{Keep: s.keep})
		if !slices.Equal(r.Kept, s.want) {
			t.Fatalf("at %s keep %d: kept %v, want %v", s.at, s.keep, r.Kept, s.want)
		}
		for _, g := range gens {
			want := "gone"
			if slices.Contains(s.want, g) {
				want = "whole"
			}
			if got := genState(t, st, part, g); got != want {
				t.Fatalf("at %s: generation %s is %s, want %s", s.at, g, got, want)
			}
		}
		checkCurrent(t, st, part)
	}
}

func TestRollbackAfterGC(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		st := newStore(t)
		gens := commitN(t, st, part, 4)
		st.advance(gc.DefaultMinAge + time.Hour)
		r := mustGC(t, st, part, gc.Options{}) // keeps gens[3] (current) and gens[2]
		if len(r.Kept) != 2 || len(r.Collected) != 2 {
			t.Fatalf("report %+v", r)
		}
		for _, g := range gens[:2] {
			if _, err := swap.Rollback(ctx, st, part, g, swap.Options{}); !errors.Is(err, swap.ErrGenerationNotFound) {
				t.Fatalf("rollback to collected %s: %v", g, err)
			}
		}
		rb, err := swap.Rollback(ctx, st, part, gens[2], swap.Options{RunID: "rollback"})
		if err != nil || !rb.Changed {
			t.Fatalf("rollback to kept generation: %+v %v", rb, err)
		}
		snap := checkCurrent(t, st, part)
		if snap.Manifest.RollbackOf != gens[2] || snap.Manifest.DataGen() != gens[2] {
			t.Fatalf("rollback manifest %+v", snap.Manifest)
		}
	})
}

// A rollback manifest reuses an older generation's data: that data stays as
// long as the rollback is kept, even after the older manifest is collected.
func TestRollbackKeepsDataGenAlive(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		st := newStore(t)
		gens := commitN(t, st, part, 2)
		a, b := gens[0], gens[1]
		rb, err := swap.Rollback(ctx, st, part, a, swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st.advance(time.Hour)
		none := gc.Options{Keep: gc.None, MinAge: gc.None}
		r := mustGC(t, st, part, none)
		if !slices.Equal(r.Kept, []string{rb.Generation}) || len(r.Collected) != 2 {
			t.Fatalf("report %+v", r)
		}
		if got := genState(t, st, part, a); got != "data-only" {
			t.Fatalf("rolled-back-to generation %s: %s, want its data kept", a, got)
		}
		if got := genState(t, st, part, b); got != "gone" {
			t.Fatalf("generation %s: %s", b, got)
		}
		checkCurrent(t, st, part)
		// Once the rollback itself is retired and collected, the data goes.
		c := mustCommit(t, st, part, "after")
		st.advance(time.Hour)
		r = mustGC(t, st, part, none)
		if !slices.Equal(r.Kept, []string{c.Generation}) || !slices.Equal(r.Collected, []string{rb.Generation}) {
			t.Fatalf("report %+v", r)
		}
		if got := genState(t, st, part, a); got != "gone" {
			t.Fatalf("generation %s after its rollback was collected: %s", a, got)
		}
		checkCurrent(t, st, part)
	})
}

// writeOrphanManifest writes a manifest that no pointer names, as a writer
// that crashed (or lost) after writing its manifest leaves behind.
func writeOrphanManifest(t testing.TB, st store.Store, gen, dataGen, parent string, c manifest.Content) {
	t.Helper()
	now := time.Now().UTC()
	m := &manifest.Manifest{Partition: part, Generation: gen, Parent: parent, Content: c, CreatedAt: now, CommittedAt: now, Writer: "test", DataLayout: manifest.DataLayoutTable}
	if dataGen != gen {
		m.DataGeneration = dataGen
	}
	data, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, layout.ManifestKey(part, gen), data, store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
}

func stagedKey(gen string) string { return layout.MetaPrefix(part) + "staged/" + gen + ".json" }

func TestOrphans(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		st := newStore(t)
		cur := mustCommit(t, st, part, "current").Generation
		// A: data only (a writer that crashed while staging).
		a := manifest.NewGenerationID()
		stage(t, st, layout.DataPrefix(part, a), 2, "a")
		// B: data and a manifest, never swapped in.
		b := manifest.NewGenerationID()
		writeOrphanManifest(t, st, b, b, cur, stage(t, st, layout.DataPrefix(part, b), 2, "b"))
		// C: staged by `pswap stage`, never committed.
		c := manifest.NewGenerationID()
		stage(t, st, layout.DataPrefix(part, c), 1, "c")
		if _, err := st.Put(ctx, stagedKey(c), []byte(`{}`), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		// Keys that are not pswap's layout are never touched.
		foreign := []string{
			layout.MetaPrefix(part) + "notes.txt",
			layout.GenerationsPrefix(part) + "not-a-generation/file",
			part + "/data-written-by-hand.parquet",
		}
		for _, k := range foreign {
			if _, err := st.Put(ctx, k, []byte("x"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		orphans := slices.Sorted(slices.Values([]string{a, b, c}))

		for _, age := range []time.Duration{0, gc.DefaultOrphanAge, gc.DefaultOrphanAge + gc.DefaultCommitWindow - time.Minute} {
			st.advance(age - time.Duration(st.off.Load()))
			r := mustGC(t, st, part, gc.Options{})
			if r.Objects != 0 || !slices.Equal(r.OrphansKept, orphans) || len(r.Orphans) != 0 {
				t.Fatalf("at age %s: %+v", age, r)
			}
		}
		st.advance(2 * time.Minute)
		before := list(t, st, "")
		r := mustGC(t, st, part, gc.Options{})
		if !slices.Equal(r.Orphans, orphans) || len(r.OrphansKept) != 0 || r.Objects != 2+3+2 {
			t.Fatalf("old orphans: %+v", r)
		}
		after := list(t, st, "")
		for _, k := range before.keys() {
			_, still := after[k]
			if still == slices.Contains(r.Keys, k) {
				t.Errorf("%s: still there %v, reported deleted %v", k, still, !still)
			}
		}
		for _, k := range foreign {
			if !exists(t, st, k) {
				t.Errorf("foreign key %s was deleted", k)
			}
		}
		if genState(t, st, part, cur) != "whole" {
			t.Fatal("current generation damaged")
		}
		checkCurrent(t, st, part)
	})
}

// An uncommitted group with any young object is kept whole; an
// uncommitted manifest that is young protects the data it names (a
// rollback in flight), even when that data belongs to a collected
// generation.
func TestYoungObjectsProtect(t *testing.T) {
	clk := newFakeClock()
	st := memstore.New(memstore.Options{Now: clk.Now})
	gens := commitN(t, st, part, 2)
	a, b := gens[0], gens[1]

	orphan := manifest.NewGenerationID()
	stage(t, st, layout.DataPrefix(part, orphan), 2, "orphan")
	clk.advance(gc.DefaultOrphanAge + gc.DefaultCommitWindow + time.Minute)
	// The same generation gets a young file (a writer still at work).
	stage(t, st, layout.DataPrefix(part, orphan)+"late-", 1, "late")
	// A rollback to a in flight: its manifest is written, its swap pending.
	inflight := manifest.NewGenerationID()
	writeOrphanManifest(t, st, inflight, a, b, mustManifest(t, st, a).Content)

	none := gc.Options{Keep: gc.None, MinAge: gc.None}
	r := mustGC(t, st, part, none)
	if !slices.Equal(r.Collected, []string{a}) || len(r.Orphans) != 0 {
		t.Fatalf("report %+v", r)
	}
	if !slices.Equal(r.OrphansKept, slices.Sorted(slices.Values([]string{orphan, inflight}))) {
		t.Fatalf("orphans kept %v", r.OrphansKept)
	}
	if got := genState(t, st, part, a); got != "data-only" {
		t.Fatalf("data of %s named by an in-flight manifest: %s", a, got)
	}
	if n := len(dataKeys(t, st, part, orphan)); n != 3 {
		t.Fatalf("partly young orphan: %d files left, want 3", n)
	}
	// Once everything is old, all of it goes.
	clk.advance(gc.DefaultOrphanAge + gc.DefaultCommitWindow + time.Minute)
	r = mustGC(t, st, part, none)
	// a's manifest is gone, so its data is now an old orphan too.
	if !slices.Equal(r.Orphans, slices.Sorted(slices.Values([]string{a, orphan, inflight}))) {
		t.Fatalf("report %+v", r)
	}
	for _, g := range []string{a, orphan, inflight} {
		if got := genState(t, st, part, g); got != "gone" {
			t.Fatalf("%s: %s", g, got)
		}
	}
	checkCurrent(t, st, part)
}

func mustManifest(t testing.TB, st store.Store, gen string) *manifest.Manifest {
	t.Helper()
	m, err := swap.ReadManifest(ctx, st, part, gen)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDryRunDeletesNothing(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		st := newStore(t)
		commitN(t, st, part, 4)
		orphan := manifest.NewGenerationID()
		stage(t, st, layout.DataPrefix(part, orphan), 2, "orphan")
		st.advance(48 * time.Hour)
		before := list(t, st, "")
		dry := mustGC(t, st, part, gc.Options{DryRun: true})
		if after := list(t, st, ""); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("dry run changed the store:\nbefore %v\nafter  %v", before, after)
		}
		if !dry.DryRun || dry.Objects != 2*3+2 || len(dry.Keys) != dry.Objects || dry.Bytes <= 0 {
			t.Fatalf("dry run report %+v", dry)
		}
		// A real run deletes exactly what the dry run listed.
		real := mustGC(t, st, part, gc.Options{})
		if !slices.Equal(real.Keys, dry.Keys) || real.Bytes != dry.Bytes || !slices.Equal(real.Collected, dry.Collected) || !slices.Equal(real.Orphans, dry.Orphans) {
			t.Fatalf("real run %+v\ndry run %+v", real, dry)
		}
		after := list(t, st, "")
		for _, k := range before.keys() {
			if _, ok := after[k]; ok == slices.Contains(dry.Keys, k) {
				t.Errorf("%s: present %v after the real run", k, ok)
			}
		}
	})
}

// The pointer is never deleted or rewritten, whatever the options.
func TestPointerNeverTouched(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		st := newStore(t)
		commitN(t, st, part, 3)
		st.advance(1000 * time.Hour)
		key := layout.PointerKey(part)
		before, err := st.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		aggressive := gc.Options{Keep: gc.None, MinAge: gc.None, OrphanAge: time.Nanosecond, CommitWindow: time.Nanosecond}
		for range 2 {
			r := mustGC(t, st, part, aggressive)
			if slices.Contains(r.Keys, key) {
				t.Fatal("the pointer is in the deleted keys")
			}
			if _, err := gc.Table(ctx, st, "", aggressive); err != nil {
				t.Fatal(err)
			}
		}
		after, err := st.Stat(ctx, key)
		if err != nil || after.ETag != before.ETag || !after.ModTime.Equal(before.ModTime) {
			t.Fatalf("pointer %+v -> %+v (%v)", before, after, err)
		}
		checkCurrent(t, st, part)
	})
}

// A corrupt partition (a pointer whose manifest is missing) is reported and
// nothing of it is deleted.
func TestCorruptPartitionUntouched(t *testing.T) {
	st := newWarp(memstore.New())
	gens := commitN(t, st, part, 3)
	if err := st.Delete(ctx, layout.ManifestKey(part, gens[2])); err != nil {
		t.Fatal(err)
	}
	st.advance(1000 * time.Hour)
	before := list(t, st, "")
	_, err := gc.Partition(ctx, st, part, gc.Options{Keep: gc.None, MinAge: gc.None})
	if !errors.Is(err, swap.ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
	if fmt.Sprint(list(t, st, "")) != fmt.Sprint(before) {
		t.Fatal("GC of a corrupt partition deleted something")
	}
}

// hooked runs a hook on a chosen read of the pointer, or before a chosen
// batch of deletions, to make a commit or a rollback land between GC's plan
// and its deletions.
type hooked struct {
	*warp
	mu           sync.Mutex
	reads        int
	running      bool
	hook         func(read int)
	deletes      int
	beforeDelete func(batch int)
}

func (h *hooked) DeleteMany(c context.Context, keys []string) error {
	h.mu.Lock()
	h.deletes++
	n := h.deletes
	h.mu.Unlock()
	if h.beforeDelete != nil {
		h.beforeDelete(n)
	}
	return h.warp.DeleteMany(c, keys)
}

func (h *hooked) Get(c context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	h.mu.Lock()
	run := key == layout.PointerKey(part) && !h.running && h.hook != nil
	if run {
		h.reads++
		h.running = true
	}
	n := h.reads
	h.mu.Unlock()
	if run {
		h.hook(n)
		h.mu.Lock()
		h.running = false
		h.mu.Unlock()
	}
	return h.warp.Get(c, key)
}

// A rollback that lands after GC read the pointer and planned to collect
// its target's data, before GC deletes anything: the plan, made from the
// older pointer, goes ahead, but the second listing of the manifests sees the
// rollback's manifest and spares its data. A later run plans from the new
// pointer.
func TestRollbackAfterPlanKeepsItsData(t *testing.T) {
	w := newWarp(memstore.New())
	gens := commitN(t, w, part, 3)
	w.advance(time.Hour)
	var rb swap.Result
	h := &hooked{warp: w}
	h.beforeDelete = func(batch int) {
		if batch == 1 { // GC's manifests, planned from the pointer naming gens[2]
			var err error
			if rb, err = swap.Rollback(ctx, w, part, gens[0], swap.Options{}); err != nil {
				t.Error(err)
			}
		}
	}
	r := mustGC(t, h, part, gc.Options{Keep: gc.None, MinAge: gc.None})
	if rb.Generation == "" || r.Current != gens[2] || !slices.Equal(r.Collected, []string{gens[0], gens[1]}) {
		t.Fatalf("report %+v (rollback %+v)", r, rb)
	}
	if got := genState(t, w, part, gens[0]); got != "data-only" {
		t.Fatalf("data of the rollback target: %s", got)
	}
	if got := genState(t, w, part, gens[1]); got != "gone" {
		t.Fatalf("gens[1]: %s", got)
	}
	snap := checkCurrent(t, w, part)
	if snap.Manifest.Generation != rb.Generation || snap.Manifest.DataGen() != gens[0] {
		t.Fatalf("current %s (data %s), want the rollback %s", snap.Manifest.Generation, snap.Manifest.DataGen(), rb.Generation)
	}
	r = mustGC(t, w, part, gc.Options{Keep: gc.None, MinAge: gc.None})
	if r.Current != rb.Generation || !slices.Equal(r.Collected, []string{gens[2]}) {
		t.Fatalf("second run %+v", r)
	}
	checkCurrent(t, w, part)
}

// A partition of more than 1,000 keys whose pointer changes at every
// re-read between batches fails with ErrBusy after MaxAttempts: each attempt
// deletes one batch by its plan (old orphans), never the current data.
func TestBusyPartition(t *testing.T) {
	w := newWarp(memstore.New())
	commitN(t, w, part, 3)
	for i := range 4500 {
		if _, err := w.Put(ctx, layout.DataPrefix(part, manifest.NewGenerationID())+"f", []byte{byte(i)}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.advance(gc.DefaultOrphanAge + gc.DefaultCommitWindow + time.Hour)
	total := len(list(t, w, ""))
	h := &hooked{warp: w}
	h.hook = func(read int) {
		if read%2 == 0 { // every re-read between batches
			if _, err := commit(t, w, part, fmt.Sprint("busy-", read), swap.Options{}); err != nil {
				t.Error(err)
			}
		}
	}
	r, err := gc.Partition(ctx, h, part, gc.Options{Keep: gc.None, MinAge: gc.None, MaxAttempts: 3})
	if !errors.Is(err, gc.ErrBusy) || r.Recomputed != 3 || r.Error == "" {
		t.Fatalf("got %v after %d recomputations, %d objects deleted", err, r.Recomputed, r.Objects)
	}
	for _, k := range r.Keys {
		if kd := strings.Contains(k, "/manifests/"); !kd && !slices.ContainsFunc(r.Orphans, func(g string) bool { return strings.Contains(k, g) }) && !slices.ContainsFunc(r.Collected, func(g string) bool { return strings.Contains(k, g) }) {
			t.Fatalf("deleted %s, neither an orphan nor a collected generation", k)
		}
	}
	if r.Objects < 3*1000 || r.Objects > 3*1000+10 {
		t.Fatalf("deleted %d of %d objects, want about one batch of 1,000 per attempt", r.Objects, total)
	}
	checkCurrent(t, w, part)
}

// A slow writer whose stage outlives the orphan age is refused, whether or
// not GC already deleted its files, and nothing it staged becomes current.
func TestSlowWriterRefused(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		for _, runGC := range []bool{true, false} {
			t.Run(fmt.Sprint("gc=", runGC), func(t *testing.T) {
				st := newStore(t)
				first := mustCommit(t, st, part, "first")
				txn, err := swap.Begin(ctx, st, part, swap.Options{})
				if err != nil {
					t.Fatal(err)
				}
				content := stage(t, st, txn.DataPrefix(), 2, "slow")
				st.advance(gc.DefaultOrphanAge + gc.DefaultCommitWindow + time.Minute)
				if runGC {
					r := mustGC(t, st, part, gc.Options{})
					if !slices.Equal(r.Orphans, []string{txn.Generation()}) {
						t.Fatalf("report %+v", r)
					}
				}
				_, err = txn.Commit(ctx, content)
				if !errors.Is(err, swap.ErrStaleGeneration) {
					t.Fatalf("slow writer: %v, want ErrStaleGeneration", err)
				}
				if snap := checkCurrent(t, st, part); snap.Pointer.Generation != first.Generation {
					t.Fatal("a refused generation became current")
				}
				h, err := swap.History(ctx, st, part, 0)
				if err != nil || len(h) != 1 {
					t.Fatalf("history %+v %v", h, err)
				}
				if genState(t, st, part, txn.Generation()) != "gone" {
					t.Fatal("the refused generation left objects behind")
				}
			})
		}
	})
}

// A writer within its grace period is never disturbed: GC keeps what it
// staged and its commit succeeds.
func TestWriterWithinGraceCommits(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		st := newStore(t)
		mustCommit(t, st, part, "first")
		txn, err := swap.Begin(ctx, st, part, swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		content := stage(t, st, txn.DataPrefix(), 2, "slow")
		st.advance(gc.DefaultOrphanAge - time.Minute)
		r := mustGC(t, st, part, gc.Options{Keep: gc.None, MinAge: gc.None})
		if !slices.Equal(r.OrphansKept, []string{txn.Generation()}) || r.Objects != 0 {
			t.Fatalf("report %+v", r)
		}
		res, err := txn.Commit(ctx, content)
		if err != nil || !res.Changed {
			t.Fatalf("commit within grace: %+v %v", res, err)
		}
		checkCurrent(t, st, part)
	})
}

func TestTable(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		st := newStore(t)
		parts := []string{"dt=2026-11-28", "dt=2026-11-29/hr=00", "dt=2026-11-29/hr=01", "dt=2026-12-01"}
		for _, p := range parts[:3] {
			commitN(t, st, p, 3)
		}
		// Never committed: only an orphan.
		stage(t, st, layout.DataPrefix(parts[3], manifest.NewGenerationID()), 2, "never")
		st.advance(48 * time.Hour)

		var mu sync.Mutex
		var seen []string
		opts := gc.Options{Concurrency: 2, OnPartition: func(r gc.Report) {
			mu.Lock()
			seen = append(seen, r.Partition)
			mu.Unlock()
		}}
		tr, err := gc.Table(ctx, st, "dt=2026-11-29", opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Partitions) != 2 || tr.Partitions[0].Partition != parts[1] || tr.Partitions[1].Partition != parts[2] {
			t.Fatalf("prefix: %+v", tr.Partitions)
		}
		tr, err = gc.Table(ctx, st, "", opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range tr.Partitions {
			got = append(got, r.Partition)
		}
		if !slices.Equal(got, parts) {
			t.Fatalf("partitions %v", got)
		}
		// The first run collected hr=00 and hr=01 already.
		want := gc.Totals{Partitions: 4, Kept: 6, Collected: 1, Orphans: 1, Objects: 3 + 2}
		tt := tr.Totals
		tt.Bytes = 0
		if tt != want || tr.Totals.Bytes <= 0 {
			t.Fatalf("totals %+v, want %+v", tr.Totals, want)
		}
		slices.Sort(seen)
		if want := slices.Sorted(slices.Values(append(slices.Clone(parts), parts[1:3]...))); !slices.Equal(seen, want) {
			t.Fatalf("OnPartition saw %v, want %v", seen, want)
		}
		for _, p := range parts[:3] {
			checkCurrent(t, st, p)
		}
		if n := len(list(t, st, parts[3]+"/")); n != 0 {
			t.Fatalf("the never-committed partition still has %d objects", n)
		}
	})
}

func TestInvalidInput(t *testing.T) {
	st := memstore.New()
	for _, tc := range []struct {
		part string
		opts gc.Options
		want error
	}{
		{"dt=2026-11-29", gc.Options{OrphanAge: -time.Hour}, gc.ErrInvalidOptions},
		{"dt=2026-11-29", gc.Options{CommitWindow: -time.Hour}, gc.ErrInvalidOptions},
		{"dt=2026-11-29", gc.Options{Concurrency: -1}, gc.ErrInvalidOptions},
		{"../etc", gc.Options{}, nil},
		{"", gc.Options{}, nil},
	} {
		_, err := gc.Partition(ctx, st, tc.part, tc.opts)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("Partition(%q, %+v) = %v, want %v", tc.part, tc.opts, err, tc.want)
		}
	}
	// None turns the orphan age and the commit window off, as it does
	// Keep and MinAge; only None, not any negative value.
	if _, err := gc.Partition(ctx, st, "dt=2026-11-29", gc.Options{OrphanAge: gc.None, CommitWindow: gc.None}); err != nil {
		t.Errorf("Partition with OrphanAge and CommitWindow None: %v", err)
	}
	if _, err := gc.Table(ctx, st, "../x", gc.Options{}); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("Table with a bad prefix: %v", err)
	}
	for _, p := range []string{"dt=2026-11-29/_pswap/", "dt=2026-11-29/_pswap/gen/", "_pswap/x"} {
		if _, err := gc.Table(ctx, st, p, gc.Options{}); !errors.Is(err, gc.ErrInvalidOptions) {
			t.Errorf("Table with prefix %q inside a _pswap folder: %v", p, err)
		}
	}
	for _, p := range []string{"dt=2026-11-29/_p", "dt=2026-11-", "dt=2026-11-29/"} {
		if _, err := gc.Table(ctx, st, p, gc.Options{}); err != nil {
			t.Errorf("Table with prefix %q: %v", p, err)
		}
	}
	// A partition that does not exist is nothing to do.
	r, err := gc.Partition(ctx, st, "dt=1999-01-01", gc.Options{})
	if err != nil || r.Objects != 0 || r.Current != "" {
		t.Errorf("missing partition: %+v %v", r, err)
	}
}

// beforeDelete runs a hook once, before the first deletion.
type beforeDelete struct {
	*warp
	once sync.Once
	hook func()
}

func (b *beforeDelete) DeleteMany(ctx context.Context, keys []string) error {
	b.once.Do(b.hook)
	return b.warp.DeleteMany(ctx, keys)
}

// A rollback to a generation GC is collecting writes its manifest after GC
// listed the partition and before GC deletes anything (its pointer swap
// still to come). GC deletes the target's manifest but, listing the
// manifests again before the data, finds the rollback's and spares the
// data it names: when the swap lands, the current generation is whole.
func TestRollbackManifestWrittenDuringGC(t *testing.T) {
	w := newWarp(memstore.New())
	gens := commitN(t, w, part, 3)
	w.advance(gc.DefaultMinAge + time.Hour)
	rb := manifest.NewGenerationID()
	h := &beforeDelete{warp: w, hook: func() {
		writeOrphanManifest(t, w, rb, gens[0], gens[2], mustManifest(t, w, gens[0]).Content)
	}}
	r := mustGC(t, h, part, gc.Options{})
	if !slices.Equal(r.Collected, []string{gens[0]}) || r.Objects != 1 {
		t.Fatalf("report %+v", r)
	}
	if got := genState(t, w, part, gens[0]); got != "data-only" {
		t.Fatalf("data of the rollback's target: %s", got)
	}
	// The rollback's swap lands.
	b, err := swap.ReadPointer(ctx, w, part)
	if err != nil {
		t.Fatal(err)
	}
	data, err := manifest.EncodePointer(mustManifest(t, w, rb).Pointer(b.Pointer.Seq + 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Put(ctx, layout.PointerKey(part), data, store.PutOptions{IfMatch: b.ETag}); err != nil {
		t.Fatal(err)
	}
	if snap := checkCurrent(t, w, part); snap.Manifest.DataGen() != gens[0] {
		t.Fatalf("current %+v", snap.Manifest)
	}
}
