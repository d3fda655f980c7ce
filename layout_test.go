package pswap_test

import (
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// A table created by this pswap records the table-level layout in its
// table.json, and nothing of its state lies outside its top-level _pswap
// folder but data under metadata/ (Iceberg); its partitions' first
// commits read no legacy key. A table whose table.json does not record it
// (written before) has its legacy partitions migrated by the facade's
// first commit to each, which keeps their history.
func TestFacadeLayouts(t *testing.T) {
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	if _, err := commitRecord(t, tb, "dt=2026-11-01", record(t, "id", []int64{1, 2}), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	doc, _, err := tablemeta.Read(ctx, mem)
	if err != nil || doc.Layout != tablemeta.LayoutTable {
		t.Fatalf("table.json of a new table: layout %v, %v", doc, err)
	}
	for a, err := range mem.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if !layout.InsideMeta(a.Key) && a.Key[:len("_pswap/")] != "_pswap/" {
			t.Errorf("%s lies outside the table's _pswap folder", a.Key)
		}
	}
	// A new partition of it: no legacy key read.
	cs := storetest.NewCounting(mem)
	if _, err := commitRecord(t, pswap.NewTable(cs), "dt=2026-11-02", record(t, "id", []int64{3}), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := cs.Counts(); c["get"] != 2 {
		t.Fatalf("first commit of a partition of a new table: %v, want 2 GETs (pointer, table.json)", c)
	}

	// The same table as an older pswap left it: table.json without the
	// layout, a partition of the legacy layout.
	doc.Layout = 0
	data, err := tablemeta.Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Put(ctx, tablemeta.Key, data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	const old = "dt=2026-10-31"
	ms := swaptest.LegacyPartition(t, mem, old, 2)
	res, err := commitRecord(t, tb, old, record(t, "id", []int64{7, 8, 9}), pswap.WriteOptions{})
	if err != nil || !res.Changed || res.Seq != 3 {
		t.Fatalf("commit to a legacy partition: %+v %v", res, err)
	}
	b, err := swap.ReadPointer(ctx, mem, old)
	if err != nil || b.Legacy || b.Moved || b.Pointer.Parent != ms[1].Generation {
		t.Fatalf("after the facade's commit: %+v %v", b, err)
	}
	if raw, _, err := store.ReadAll(ctx, mem, layout.LegacyPointerKey(old)); err != nil || swaptest.OldDecodePointer(raw) == nil {
		t.Fatalf("legacy key after the migration: %v (an older pswap must refuse it)", err)
	}
	p, _ := tb.Partition(old)
	h, err := p.History(ctx, 0)
	if err != nil || len(h) != 3 || h[2].Generation != ms[0].Generation {
		t.Fatalf("history: %+v %v", h, err)
	}
	parts, err := tb.Partitions(ctx, "")
	if err != nil || len(parts) != 3 {
		t.Fatalf("partitions: %v %v", parts, err)
	}
}
