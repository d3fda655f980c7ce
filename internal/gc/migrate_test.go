package gc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/swap"
)

// GC of a table of the legacy layout migrates each partition (swap.Migrate)
// and then collects it across both layouts: a collected generation loses
// its manifest at both keys and its data where it lies; the current and
// kept generations stay whole, and nothing of pswap's is left outside the
// table's _pswap folder but the moved records and the kept legacy data. A
// dry run migrates nothing.
func TestTableMigratesLegacyPartitions(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) *warp) {
		w := newStore(t)
		parts := []string{"dt=2026-11-01", "dt=2026-11-02", "dt=2026-11-03"}
		gens := map[string][]*manifest.Manifest{}
		for _, p := range parts {
			gens[p] = swaptest.LegacyPartition(t, w, p, 5)
		}
		// One partition already moved, with a commit of the new layout.
		if _, err := swap.Migrate(ctx, w, parts[2], swap.Options{}); err != nil {
			t.Fatal(err)
		}
		newer := mustCommit(t, w, parts[2], "new")
		w.advance(gc.DefaultMinAge + gc.DefaultOrphanAge + time.Hour)

		dry, err := gc.Table(ctx, w, "", gc.Options{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if b, err := swap.ReadPointer(ctx, w, parts[0]); err != nil || !b.Legacy {
			t.Fatalf("a dry run migrated: %+v %v", b, err)
		}
		tr, err := gc.Table(ctx, w, "", gc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if dry.Totals.Objects == 0 || dry.Totals.Objects > tr.Totals.Objects {
			t.Fatalf("dry run %d objects, run %d (which also deletes the legacy copies its migration made redundant)", dry.Totals.Objects, tr.Totals.Objects)
		}
		for _, p := range parts {
			b, err := swap.ReadPointer(ctx, w, p)
			if err != nil || b.Legacy || b.Moved {
				t.Fatalf("%s not migrated by gc: %+v %v", p, b, err)
			}
			snap := checkCurrent(t, w, p)
			ms := gens[p]
			want := ms[len(ms)-1].Generation
			if p == parts[2] {
				want = newer.Generation
			}
			if snap.Manifest.Generation != want {
				t.Fatalf("%s: current %s, want %s", p, snap.Manifest.Generation, want)
			}
			// Collected generations: no manifest at either key, no data.
			for _, m := range ms[:len(ms)-2] {
				for _, k := range []string{layout.ManifestKey(p, m.Generation), layout.LegacyManifestKey(p, m.Generation)} {
					if exists(t, w, k) {
						t.Errorf("%s: manifest %s of a collected generation left", p, k)
					}
				}
				if got := list(t, w, layout.LegacyDataPrefix(p, m.Generation)).keys(); len(got) != 0 {
					t.Errorf("%s: data of collected generation %s left: %v", p, m.Generation, got)
				}
			}
			// The kept generation (the default keeps one before the
			// current) is whole where its manifest says.
			kept := ms[len(ms)-2]
			if p == parts[2] {
				kept = ms[len(ms)-1]
			}
			km := mustManifestOf(t, w, p, kept.Generation)
			checkFiles(t, w, swap.Files(w, km))
		}
		// What a full vacuum of delta-rs would delete (outside the root's
		// _pswap folder): only legacy data files and moved records.
		for _, k := range list(t, w, "").keys() {
			if strings.HasPrefix(k, layout.MetaDir+"/") {
				continue
			}
			part, _ := layout.PartitionOf(k)
			switch kd, _ := layout.Classify(part, k); {
			case kd == layout.KindData, kd == layout.KindPointer && k == layout.LegacyPointerKey(part):
			default:
				t.Errorf("%s: %v outside _pswap/ after gc", k, kd)
			}
		}
		t.Logf("gc deleted %d objects", tr.Totals.Objects)
	})
}

func mustManifestOf(t testing.TB, w *warp, part, gen string) *manifest.Manifest {
	t.Helper()
	m, err := swap.ReadManifest(ctx, w, part, gen)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
