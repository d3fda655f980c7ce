package gc_test

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// putBatch writes a batch record of the given entries (partition ->
// generation), every entry started.
func putBatch(t *testing.T, st store.Store, entries ...[2]string) string {
	t.Helper()
	b := audit.Batch{ID: manifest.NewGenerationID(), RunID: "backfill", StartedAt: time.Now()}
	for _, e := range entries {
		b.Partitions = append(b.Partitions, audit.BatchEntry{Partition: e[0], Generation: e[1], Status: audit.StatusStarted})
	}
	if err := audit.PutBatch(ctx, st, b); err != nil {
		t.Fatal(err)
	}
	return layout.BatchKey(b.ID)
}

// TestBatchRecords: a backfill's batch record (one per commit
// --partitioned run; they piled up forever) goes by the rule of the
// attempt records it stands for, one per entry: a committed generation's
// goes with its manifest, any other with its generation's uncommitted
// objects, once they are old. So the record goes once no entry's
// partition holds anything of its generation any more (collected, or the
// backfill never reached it) and the record itself is older than the
// orphan cutoff plus the time within which a running backfill rewrites it
// (audit.BatchRefresh); it stays while an entry's generation is kept
// (current), while one has young objects, while it is young, and when it
// cannot be read or names a partition outside the run's prefix (a run
// with a prefix judges only the records whose every partition it covers). A dry run
// reports exactly the keys it would delete, and deletes nothing.
func TestBatchRecords(t *testing.T) {
	// A clock of the store's own, which stamps what is written: an
	// object written after an advance is young.
	base := time.Now()
	var off atomic.Int64
	w := memstore.New(memstore.Options{Now: func() time.Time { return base.Add(time.Duration(off.Load())) }})
	advance := func(d time.Duration) { off.Add(int64(d)) }
	const a, b, c = "dt=2026-11-01", "dt=2026-11-02", "dt=2026-11-03"
	gens := commitN(t, w, a, 3)
	never := manifest.NewGenerationID()
	settled := putBatch(t, w, [2]string{a, gens[0]}, [2]string{b, never}) // superseded (collected below), never reached
	current := putBatch(t, w, [2]string{a, gens[2]}, [2]string{c, manifest.NewGenerationID()})
	dying := manifest.NewGenerationID()
	leftover := putBatch(t, w, [2]string{b, dying}) // files left, young at the gc below
	other := putBatch(t, w, [2]string{"region=eu/dt=2026-11-01", manifest.NewGenerationID()})
	unreadable := layout.BatchKey(manifest.NewGenerationID())
	if _, err := w.Put(ctx, unreadable, []byte("{not json"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	old := gc.DefaultOrphanAge + gc.DefaultCommitWindow + audit.BatchRefresh + time.Minute
	// Just younger than the cutoff: every record stays.
	advance(old - 2*time.Minute)
	stage(t, w, layout.DataPrefix(b, dying), 1, "dying") // young
	young := putBatch(t, w, [2]string{c, manifest.NewGenerationID()})
	tr, err := gc.Table(ctx, w, "", gc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{settled, current, leftover, other, unreadable, young}
	for _, k := range all {
		if !exists(t, w, k) {
			t.Fatalf("%s was deleted before it was old", k)
		}
	}
	if len(tr.BatchKeys) != 0 {
		t.Errorf("batch records deleted while young: %v", tr.BatchKeys)
	}
	advance(2 * time.Minute)

	// A dry run says what goes, and deletes nothing.
	dry, err := gc.Table(ctx, w, "", gc.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	// gens[0] was collected (keep 1, older than MinAge), b never reached;
	// a whole-table run sees every partition: one the table does not
	// hold has nothing of its entry's generation.
	if !slices.Equal(dry.BatchKeys, []string{settled, other}) || dry.Totals.BatchRecords != 2 {
		t.Errorf("the dry run would delete the batch records %v (totals %+v), want %s and %s", dry.BatchKeys, dry.Totals, settled, other)
	}
	for _, k := range all {
		if !exists(t, w, k) {
			t.Fatalf("the dry run deleted %s", k)
		}
	}
	tr, err = gc.Table(ctx, w, "", gc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if exists(t, w, layout.ManifestKey(a, gens[0])) {
		t.Fatalf("the superseded generation %s was not collected", gens[0])
	}
	if exists(t, w, settled) || exists(t, w, other) || !slices.Equal(tr.BatchKeys, []string{settled, other}) || tr.Totals.BatchRecords != 2 {
		t.Errorf("the settled records: reported %v", tr.BatchKeys)
	}
	for _, k := range []string{current, leftover, unreadable, young} {
		if !exists(t, w, k) {
			t.Errorf("%s was deleted", k)
		}
	}
	// Once the dead attempt's files are old and collected, its record
	// goes in the same run; a prefix run leaves every record alone but
	// those of its partitions.
	advance(old)
	if tr, err = gc.Table(ctx, w, "dt=2026-11-02", gc.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(dataKeys(t, w, b, dying)) != 0 || exists(t, w, leftover) || !slices.Equal(tr.BatchKeys, []string{leftover}) {
		t.Errorf("the dead attempt's record after its files went: there %v, reported %v", exists(t, w, leftover), tr.BatchKeys)
	}
	if tr, err = gc.Table(ctx, w, "", gc.Options{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tr.BatchKeys, []string{young}) || !exists(t, w, current) || !exists(t, w, unreadable) {
		t.Errorf("the last run deleted %v, want only %s", tr.BatchKeys, young)
	}
}
