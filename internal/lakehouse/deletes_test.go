package lakehouse_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// entry is what a test checks of a manifest entry of the current snapshot.
type entry struct {
	status   iceberg.ManifestEntryStatus
	snapshot int64
	dataSeq  int64
	path     string
	manifest string // the manifest's location
	added    int64  // the snapshot that added the manifest
}

// currentEntries reads every entry, deleted ones too, of the current
// snapshot's manifests with iceberg-go.
func currentEntries(t *testing.T, st store.Store) (*table.Table, []entry) {
	t.Helper()
	loc, _, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, icebergIO(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	for _, mf := range mfs {
		for e, err := range mf.Entries(fs, false) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, entry{e.Status(), e.SnapshotID(), e.SequenceNum(), e.DataFile().FilePath(), mf.FilePath(), mf.SnapshotID()})
		}
	}
	return tbl, out
}

// dataPaths are the locations of a generation's files as the metadata
// names them.
func dataPaths(t *testing.T, st store.Store, res swap.Result) []string {
	t.Helper()
	m, err := swap.ReadManifest(ctx, st, res.Partition, res.Generation)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range swap.Files(st, m) {
		out = append(out, st.URI(f.Key))
	}
	return out
}

func pathsWith(es []entry, keep func(entry) bool) []string {
	var out []string
	for _, e := range es {
		if keep(e) {
			out = append(out, e.path)
		}
	}
	slices.Sort(out)
	return out
}

// A swap that replaces a partition records the files it removed: the
// snapshot that publishes it holds the old generation's files as deleted
// entries (its snapshot id, the data sequence number they were added
// with) beside the new ones as added, so that readers of a snapshot's
// changes (Spark's changelog, incremental readers) see the deletions its
// summary counts; scans read only the live ones.
func TestReplaceRecordsDeletedFiles(t *testing.T) {
	mem := memstore.New()
	first := commit(t, mem, "dt=2026-01-01", 5, "a", swap.Options{})
	publish(t, mem, first)
	other := commit(t, mem, "dt=2026-01-02", 3, "b", swap.Options{})
	publish(t, mem, other)
	_, before := currentEntries(t, mem)
	firstSeq := int64(-1)
	for _, e := range before {
		if slices.Contains(dataPaths(t, mem, first), e.path) {
			firstSeq = e.dataSeq
		}
	}

	second := commit(t, mem, "dt=2026-01-01", 7, "c", swap.Options{OnConflict: swap.Overwrite})
	r := publish(t, mem, second)
	tbl, es := currentEntries(t, mem)
	cur := tbl.CurrentSnapshot()
	if cur.SnapshotID != r.SnapshotID {
		t.Fatalf("current snapshot %d, the publish wrote %d", cur.SnapshotID, r.SnapshotID)
	}
	deleted := pathsWith(es, func(e entry) bool { return e.status == iceberg.EntryStatusDELETED })
	if want := dataPaths(t, mem, first); !slices.Equal(deleted, want) {
		t.Fatalf("deleted entries %v, want the replaced generation's files %v", deleted, want)
	}
	for _, e := range es {
		if e.status != iceberg.EntryStatusDELETED {
			continue
		}
		if e.snapshot != cur.SnapshotID || e.added != cur.SnapshotID || e.dataSeq != firstSeq {
			t.Fatalf("deleted entry %+v: want snapshot %d, in a manifest it added, data sequence number %d (as added)", e, cur.SnapshotID, firstSeq)
		}
	}
	if got := fmt.Sprint(len(deleted)); cur.Summary.Properties["deleted-data-files"] != got {
		t.Fatalf("summary says %s deleted files, the manifests %s", cur.Summary.Properties["deleted-data-files"], got)
	}
	live := pathsWith(es, func(e entry) bool { return e.status != iceberg.EntryStatusDELETED })
	want := append(dataPaths(t, mem, second), dataPaths(t, mem, other)...)
	slices.Sort(want)
	if !slices.Equal(live, want) {
		t.Fatalf("live entries %v, want %v", live, want)
	}
	if got := checkReaders(t, mem); got["dt=2026-01-01"] != 7 || got["dt=2026-01-02"] != 3 {
		t.Fatalf("rows %v", got)
	}

	// The publish of a partition of another group (month) carries the
	// manifest as it is (an older month: it goes into the cold manifest,
	// and January stays the newest group).
	third := commit(t, mem, "dt=2025-12-03", 2, "d", swap.Options{})
	publish(t, mem, third)
	_, after := currentEntries(t, mem)
	if got := pathsWith(after, func(e entry) bool { return e.status == iceberg.EntryStatusDELETED }); !slices.Equal(got, deleted) {
		t.Fatalf("deleted entries after another group's publish %v, want %v (the manifest carried as it is)", got, deleted)
	}
	// One of the same group rewrites it: the deletions were the history
	// of the snapshot that made them and are left out; the members it
	// does not change are carried as existing, with the snapshot and data
	// sequence numbers they were added with.
	addedAs := map[string]entry{}
	for _, e := range after {
		addedAs[e.path] = e
	}
	fourth := commit(t, mem, "dt=2026-01-04", 1, "e", swap.Options{})
	publish(t, mem, fourth)
	_, last := currentEntries(t, mem)
	if got := pathsWith(last, func(e entry) bool { return e.status == iceberg.EntryStatusDELETED }); len(got) != 0 {
		t.Fatalf("deleted entries after the group's next publish %v, want none", got)
	}
	for _, p := range append(dataPaths(t, mem, second), dataPaths(t, mem, other)...) {
		i := slices.IndexFunc(last, func(e entry) bool { return e.path == p })
		if i < 0 {
			t.Fatalf("%s dropped from the group's manifest", p)
		}
		e, was := last[i], addedAs[p]
		if e.status != iceberg.EntryStatusEXISTING || e.snapshot != was.snapshot || e.dataSeq != was.dataSeq {
			t.Fatalf("carried entry %+v, want existing with the snapshot and data sequence number of %+v", e, was)
		}
	}
	if got := checkReaders(t, mem); got["dt=2026-01-01"] != 7 || got["dt=2026-01-02"] != 3 || got["dt=2025-12-03"] != 2 || got["dt=2026-01-04"] != 1 {
		t.Fatalf("rows %v", got)
	}
}

// A partition replaced by a generation without files keeps a manifest of
// deletions only, in the snapshot that replaced it; the next version
// leaves it out, and a reconcile then has nothing to do.
func TestEmptyGenerationRecordsDeletions(t *testing.T) {
	mem := memstore.New()
	first := commit(t, mem, "dt=2026-01-01", 5, "a", swap.Options{})
	publish(t, mem, first)
	publish(t, mem, commit(t, mem, "dt=2026-01-02", 3, "b", swap.Options{}))
	empty := commit(t, mem, "dt=2026-01-01", 0, "e", swap.Options{OnConflict: swap.Overwrite, AllowEmpty: true})
	if m, err := swap.ReadManifest(ctx, mem, empty.Partition, empty.Generation); err != nil || len(m.Files) != 0 {
		t.Fatalf("the empty generation has %v files (%v): the test needs none", m, err)
	}
	if r := publish(t, mem, empty); !r.Changed {
		t.Fatalf("publish of the empty generation: %+v", r)
	}
	_, es := currentEntries(t, mem)
	deleted := pathsWith(es, func(e entry) bool { return e.status == iceberg.EntryStatusDELETED })
	if want := dataPaths(t, mem, first); !slices.Equal(deleted, want) {
		t.Fatalf("deleted entries %v, want %v", deleted, want)
	}
	if got := checkReaders(t, mem); got["dt=2026-01-01"] != 0 || got["dt=2026-01-02"] != 3 {
		t.Fatalf("rows %v", got)
	}
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("reconcile right after: %+v %v, want nothing to do", r, err)
	}
	publish(t, mem, commit(t, mem, "dt=2026-01-03", 2, "d", swap.Options{}))
	_, es = currentEntries(t, mem)
	if got := pathsWith(es, func(e entry) bool { return e.status == iceberg.EntryStatusDELETED }); len(got) != 0 {
		t.Fatalf("deleted entries of an older snapshot carried on: %v", got)
	}
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("reconcile after the deletions were left out: %+v %v, want nothing to do", r, err)
	}
	if got := checkReaders(t, mem); got["dt=2026-01-01"] != 0 || got["dt=2026-01-03"] != 2 {
		t.Fatalf("rows %v", got)
	}
}

// A partition whose pointer is gone (deleted by hand) leaves the table at
// the next reconcile, which records its files as deleted; the reconcile
// after that has nothing to do.
func TestDroppedPartitionRecordsDeletions(t *testing.T) {
	mem := memstore.New()
	gone := commit(t, mem, "dt=2026-01-01", 5, "a", swap.Options{})
	publish(t, mem, gone)
	publish(t, mem, commit(t, mem, "dt=2026-01-02", 3, "b", swap.Options{}))
	if err := mem.Delete(ctx, layout.PointerKey("dt=2026-01-01")); err != nil {
		t.Fatal(err)
	}
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || !r.Changed || r.Partitions != 1 {
		t.Fatalf("reconcile: %+v %v", r, err)
	}
	_, es := currentEntries(t, mem)
	deleted := pathsWith(es, func(e entry) bool { return e.status == iceberg.EntryStatusDELETED })
	if want := dataPaths(t, mem, gone); !slices.Equal(deleted, want) {
		t.Fatalf("deleted entries %v, want %v", deleted, want)
	}
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("second reconcile: %+v %v, want nothing to do", r, err)
	}
	if got := checkReaders(t, mem); len(got) != 1 || got["dt=2026-01-02"] != 3 {
		t.Fatalf("rows %v", got)
	}
}
