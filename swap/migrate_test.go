package swap_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// errKilled stands for a process killed at a request: the request is
// refused and nothing after it runs (not retryable).
var errKilled = errkind.Mark(errors.New("killed"), errkind.ErrPermanent)

// checkMigrated checks a migrated partition: the pointer at its new key
// with the content the legacy one had (want), every manifest copied with
// equal bytes, and the legacy key holding a moved record that an older
// pswap refuses.
func checkMigrated(t testing.TB, st store.Store, part string, want *manifest.Pointer, ms []*manifest.Manifest) {
	t.Helper()
	b, err := swap.ReadPointer(ctx, st, part)
	if err != nil || b.Legacy || b.Moved {
		t.Fatalf("pointer after migration: %+v %v", b, err)
	}
	if b.Pointer.Seq != want.Seq || b.Pointer.Generation != want.Generation || len(b.Pointer.History) != len(want.History) {
		t.Fatalf("migrated pointer %+v, want the legacy one's content %+v", b.Pointer, want)
	}
	for _, m := range ms {
		old, _, err1 := store.ReadAll(ctx, st, layout.LegacyManifestKey(part, m.Generation))
		cp, _, err2 := store.ReadAll(ctx, st, layout.ManifestKey(part, m.Generation))
		if err1 != nil || err2 != nil || !bytes.Equal(old, cp) {
			t.Fatalf("manifest %s not copied with equal bytes: %v %v", m.Generation, err1, err2)
		}
	}
	raw, _, err := store.ReadAll(ctx, st, layout.LegacyPointerKey(part))
	if err != nil {
		t.Fatal(err)
	}
	if err := swaptest.OldDecodePointer(raw); err == nil {
		t.Fatalf("an older pswap would read the moved record as a live pointer:\n%s", raw)
	}
	moved, err := manifest.DecodePointer(raw)
	if err != nil || moved.MovedTo != layout.PointerKey(part) {
		t.Fatalf("moved record: %+v %v", moved, err)
	}
}

// The first commit of a new pswap to a partition of the legacy layout
// migrates it, then commits at the new keys; its history and older
// generations (whose data stays where it was written) remain reachable.
func TestMigrateOnCommit(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		const part = "dt=2026-11-20"
		ms := swaptest.LegacyPartition(t, st, part, 3)
		legacy, err := swap.ReadPointer(ctx, st, part)
		if err != nil || !legacy.Legacy || legacy.Pointer.Generation != ms[2].Generation {
			t.Fatalf("legacy partition read: %+v %v", legacy, err)
		}
		// A reader of the new layout resolves the legacy partition.
		if snap := checkInvariants(t, st, part); snap.Manifest.Generation != ms[2].Generation {
			t.Fatalf("resolved %s, want %s", snap.Manifest.Generation, ms[2].Generation)
		}
		r := mustCommit(t, st, part, "new", swap.Options{})
		if !r.Changed || r.Seq != 4 {
			t.Fatalf("commit after migration: %+v", r)
		}
		snap := checkInvariants(t, st, part)
		if snap.Manifest.DataLayout != manifest.DataLayoutTable || snap.Files[0].Key[:len(layout.DataPrefix(part, r.Generation))] != layout.DataPrefix(part, r.Generation) {
			t.Fatalf("new generation's data at %s", snap.Files[0].Key)
		}
		b, _ := swap.ReadPointer(ctx, st, part)
		checkMigrated(t, st, part, &manifest.Pointer{Seq: 4, Generation: r.Generation, History: b.Pointer.History}, ms)
		h, err := swap.History(ctx, st, part, 0)
		if err != nil || len(h) != 4 || h[3].Generation != ms[0].Generation {
			t.Fatalf("history across the migration: %+v %v", h, err)
		}
		// A rollback to a generation of the legacy layout reuses its data
		// where it lies.
		rb, err := swap.Rollback(ctx, st, part, ms[0].Generation, swap.Options{})
		if err != nil || !rb.Changed {
			t.Fatalf("rollback to a legacy generation: %+v %v", rb, err)
		}
		snap = checkInvariants(t, st, part)
		if snap.Manifest.DataLayout != 0 || snap.Files[0].Key != layout.LegacyDataPrefix(part, ms[0].Generation)+snap.Files[0].Path {
			t.Fatalf("rolled-back generation's data at %s (layout %d)", snap.Files[0].Key, snap.Manifest.DataLayout)
		}
	})
}

// A migration killed at any of its steps is finished by the next one, and
// reads during it see the partition as it was.
func TestMigrateCrashPoints(t *testing.T) {
	const part = "dt=2026-11-21"
	for _, tc := range []struct {
		name string
		kill func(storetest.Call) bool
	}{
		{"during-copy", func(c storetest.Call) bool {
			// After the first manifest's copy: the second copy is killed.
			return c.Op == "put" && c.Opts.IfNoneMatch && c.Key != layout.PointerKey(part)
		}},
		{"after-copy", func(c storetest.Call) bool { // step 2, the fence, never runs
			return c.Op == "put" && c.Key == layout.LegacyPointerKey(part)
		}},
		{"after-fence", func(c storetest.Call) bool { // step 3, the new pointer, never runs
			return c.Op == "put" && c.Key == layout.PointerKey(part)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memstore.New()
			ms := swaptest.LegacyPartition(t, mem, part, 3)
			want, _ := swap.ReadPointer(ctx, mem, part)
			puts := 0
			faulty := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
				if tc.kill(c) {
					if puts++; tc.name != "during-copy" || puts == 2 {
						return storetest.Fault{Before: errKilled}
					}
				}
				return storetest.Fault{}
			})
			if _, err := swap.Begin(ctx, faulty, part, swap.Options{MaxAttempts: 1}); !errors.Is(err, errKilled) {
				t.Fatalf("begin through a killed migration: %v", err)
			}
			// Reads during the migration: the partition as it was.
			snap := checkInvariants(t, mem, part)
			if snap.Pointer.Generation != want.Pointer.Generation || snap.Pointer.Seq != want.Pointer.Seq {
				t.Fatalf("read during the migration: %+v", snap.Pointer)
			}
			b, err := swap.ReadPointer(ctx, mem, part)
			if err != nil || (tc.name == "after-fence") != b.Moved || (tc.name != "after-fence") != b.Legacy {
				t.Fatalf("pointer during the migration: legacy %v moved %v, %v", b.Legacy, b.Moved, err)
			}
			listed, err := swap.ListPointers(ctx, mem, "")
			if err != nil || len(listed) != 1 || listed[0].Pointer.Generation != want.Pointer.Generation {
				t.Fatalf("listing during the migration: %+v %v", listed, err)
			}
			// The next writer finishes it and commits.
			r := mustCommit(t, mem, part, "after", swap.Options{})
			if !r.Changed || r.Seq != want.Pointer.Seq+1 {
				t.Fatalf("commit after a killed migration: %+v", r)
			}
			h, err := swap.History(ctx, mem, part, 0)
			if err != nil || len(h) != 4 || h[1].Generation != ms[2].Generation {
				t.Fatalf("history: %+v %v", h, err)
			}
			b, _ = swap.ReadPointer(ctx, mem, part)
			checkMigrated(t, mem, part, b.Pointer, ms)
		})
	}
}

// Migrators racing each other all succeed and agree; readers racing them
// always resolve the partition's current generation.
func TestMigrateRace(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		const part = "dt=2026-11-22/hr=07"
		ms := swaptest.LegacyPartition(t, st, part, 4)
		want, _ := swap.ReadPointer(ctx, st, part)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 6 {
			wg.Go(func() {
				r, err := swap.Migrate(ctx, st, part, swap.Options{})
				if err == nil && (r.Base.Pointer.Seq != want.Pointer.Seq || r.Base.Legacy || r.Base.Moved) {
					err = fmt.Errorf("migrate returned %+v", r.Base)
				}
				errs <- err
			})
			wg.Go(func() {
				snap, err := swap.Resolve(ctx, st, part)
				if err == nil && snap.Manifest.Generation != ms[3].Generation {
					err = fmt.Errorf("resolved %s during migration", snap.Manifest.Generation)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		checkMigrated(t, st, part, want.Pointer, ms)
		// Once migrated, a migration costs one GET.
		cs := storetest.NewCounting(st)
		if r, err := swap.Migrate(ctx, cs, part, swap.Options{}); err != nil || r.Migrated || cs.Total() != 1 {
			t.Fatalf("migrate again: %+v %v, %v requests", r, err, cs.Counts())
		}
	})
}

// An older pswap racing a migration: one that commits before the fence is
// carried over (the fence's If-Match loses, the migration starts over);
// one that read the pointer before the fence and swaps after it loses its
// swap and then refuses the moved record, committing nothing.
func TestMigrateOldWriterRace(t *testing.T) {
	const part = "dt=2026-11-23"
	t.Run("old-commits-before-fence", func(t *testing.T) {
		mem := memstore.New()
		ms := swaptest.LegacyPartition(t, mem, part, 2)
		var late *manifest.Manifest
		faulty := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			if c.Op == "put" && c.Key == layout.LegacyPointerKey(part) && c.Opts.IfMatch != "" && c.N == 1 {
				// Just before the fence: the older binary commits.
				m, err := swaptest.LegacyCommit(t, mem, part, "old-late")
				if err != nil {
					t.Error(err)
				}
				late = m
			}
			return storetest.Fault{}
		})
		r, err := swap.Migrate(ctx, faulty, part, swap.Options{})
		if err != nil || !r.Migrated {
			t.Fatalf("migrate: %+v %v", r, err)
		}
		if r.Base.Pointer.Generation != late.Generation || r.Base.Pointer.Seq != 3 {
			t.Fatalf("migrated %+v, want the older binary's commit %s at seq 3", r.Base.Pointer, late.Generation)
		}
		checkMigrated(t, mem, part, r.Base.Pointer, append(ms, late))
		checkInvariants(t, mem, part)
	})
	t.Run("old-swaps-after-fence", func(t *testing.T) {
		mem := memstore.New()
		ms := swaptest.LegacyPartition(t, mem, part, 2)
		data, a, err := store.ReadAll(ctx, mem, layout.LegacyPointerKey(part))
		if err != nil {
			t.Fatal(err)
		}
		base, _ := manifest.DecodePointer(data)
		r, err := swap.Migrate(ctx, mem, part, swap.Options{})
		if err != nil || !r.Migrated {
			t.Fatalf("migrate: %+v %v", r, err)
		}
		// The older binary's swap, If-Match what it read: lost.
		if _, err := swaptest.LegacyCommitOn(t, mem, part, "old-stale", base, a.ETag); !errors.Is(err, store.ErrPrecondition) {
			t.Fatalf("old binary's swap after the fence: %v", err)
		}
		// Its retry reads the moved record and refuses it.
		if _, err := swaptest.LegacyCommit(t, mem, part, "old-retry"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("moved_to")) {
			t.Fatalf("old binary's retry: %v", err)
		}
		checkMigrated(t, mem, part, base, ms)
		if snap := checkInvariants(t, mem, part); snap.Manifest.Generation != ms[1].Generation {
			t.Fatalf("current %s, want %s", snap.Manifest.Generation, ms[1].Generation)
		}
	})
}

// A generation staged against the legacy pointer commits after the
// partition moved (the fence holds: same pointer, other key), and is
// refused when another commit came in between.
func TestMigrateStagedBefore(t *testing.T) {
	const part = "dt=2026-11-24"
	for _, between := range []bool{false, true} {
		mem := memstore.New()
		swaptest.LegacyPartition(t, mem, part, 1)
		// Staged by the older binary: a record at the legacy key, its
		// data in the legacy layout, fenced on the legacy pointer.
		pd, a, err := store.ReadAll(ctx, mem, layout.LegacyPointerKey(part))
		if err != nil {
			t.Fatal(err)
		}
		base, _ := manifest.DecodePointer(pd)
		gen := manifest.NewGenerationID()
		c := swaptest.Stage(t, mem, layout.LegacyDataPrefix(part, gen), 2, "staged")
		rec := &swap.StagedRecord{Format: swap.FormatStaged, Version: manifest.Version, Partition: part,
			Generation: gen, Base: base, BaseETag: a.ETag, Content: &c, StagedAt: time.Now().UTC()}
		data, err := swap.EncodeStaged(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Put(ctx, layout.LegacyStagedKey(part, gen), data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if between {
			mustCommit(t, mem, part, "between", swap.Options{}) // migrates, then commits
		} else if _, err := swap.Migrate(ctx, mem, part, swap.Options{}); err != nil {
			t.Fatal(err)
		}
		r, err := swap.CommitStaged(ctx, mem, part, gen, swap.Options{}, nil)
		if between {
			if !errors.Is(err, swap.ErrConflict) {
				t.Fatalf("staged commit fenced out by a later commit: %+v %v", r, err)
			}
			continue
		}
		if err != nil || !r.Changed || r.Generation != gen {
			t.Fatalf("staged commit after the migration: %+v %v", r, err)
		}
		snap := checkInvariants(t, mem, part)
		if snap.Manifest.DataLayout != 0 || snap.Pointer.Seq != 2 {
			t.Fatalf("committed %+v", snap.Manifest)
		}
		for _, k := range []string{layout.StagedKey(part, gen), layout.LegacyStagedKey(part, gen)} {
			if _, err := mem.Stat(ctx, k); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("staged record %s left: %v", k, err)
			}
		}
	}
}

// Partition discovery over a table in both layouts: migrated, legacy, a
// move stopped after its fence, and born in the new layout; each read once.
func TestListPointersMixedLayouts(t *testing.T) {
	mem := memstore.New()
	swaptest.LegacyPartition(t, mem, "dt=2026-11-01", 2)
	swaptest.LegacyPartition(t, mem, "dt=2026-11-02", 2)
	swaptest.LegacyPartition(t, mem, "dt=2026-11-03", 1)
	if _, err := swap.Migrate(ctx, mem, "dt=2026-11-01", swap.Options{}); err != nil {
		t.Fatal(err)
	}
	faulty := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "put" && c.Key == layout.PointerKey("dt=2026-11-03") {
			return storetest.Fault{Before: errKilled}
		}
		return storetest.Fault{}
	})
	if _, err := swap.Migrate(ctx, faulty, "dt=2026-11-03", swap.Options{MaxAttempts: 1}); !errors.Is(err, errKilled) {
		t.Fatal(err)
	}
	mustCommit(t, mem, "dt=2026-11-04", "new", swap.Options{})
	cs := storetest.NewCounting(mem)
	listed, err := swap.ListPointers(ctx, cs, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range listed {
		got = append(got, fmt.Sprintf("%s seq=%d legacy=%v moved=%v", l.Partition, l.Pointer.Seq, l.Legacy, l.Moved))
	}
	want := []string{
		"dt=2026-11-01 seq=2 legacy=false moved=false",
		"dt=2026-11-02 seq=2 legacy=true moved=false",
		"dt=2026-11-03 seq=1 legacy=false moved=true",
		"dt=2026-11-04 seq=1 legacy=false moved=false",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listed\n%v\nwant\n%v", got, want)
	}
	// The new layout's walk: one listing, the pointers of 01 and 04, and
	// 03's folder (its copies exist, its pointer not: a GET and a listing
	// of the folder, as for any folder without a pointer). The legacy
	// walk: one listing of the root, the legacy keys of 02 and 03.
	if c := cs.Counts(); c["get"] != 5 || c["list"] != 3 {
		t.Fatalf("requests %v, want 5 GETs and 3 listings", c)
	}
	// Under a prefix that reaches inside a partition, in either layout.
	for _, p := range []string{"dt=2026-11-01", "dt=2026-11-02", "dt=2026-11-04"} {
		l, err := swap.ListPointers(ctx, mem, p+"/")
		if err != nil || len(l) != 1 || l[0].Partition != p {
			t.Fatalf("list %s/: %+v %v", p, l, err)
		}
	}
}
