package pswap_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// commitAndPublish is a Go program's daily job: a commit, then the
// README's publish call.
func commitAndPublish(t *testing.T, tb *pswap.Table, key string, ids []int64, opts pswap.PublishOptions) (pswap.Result, pswap.Publication) {
	t.Helper()
	p, err := tb.Partition(key)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(record(t, "id", ids)); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res, w.Publish(ctx, opts)
}

// deltaSeqs is what the Delta log reflects of each partition.
func deltaSeqs(t *testing.T, st store.Store) (int64, map[string]int64) {
	t.Helper()
	v, seqs, err := deltalog.Reflected(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return v, seqs
}

// TestViewsFollowTheTable: a view turned on by one writer is published by
// every later one with the zero PublishOptions, whichever entry point
// (Writer, Partition, Table), and a view turned off is not.
func TestViewsFollowTheTable(t *testing.T) {
	st := memstore.New()
	tb := pswap.NewTable(st)
	_, pub := commitAndPublish(t, tb, "dt=2026-11-27", []int64{1, 2}, pswap.PublishOptions{Enable: pswap.Views{Delta: true}})
	if d, ok := pub.View(pswap.ViewDelta); !pub.Published || !ok || !d.Published || d.Version != 0 {
		t.Fatalf("first publish: %+v", pub)
	}
	// Another program, with no option: the Delta log follows.
	res, pub := commitAndPublish(t, tb, "dt=2026-11-27", []int64{1, 2, 3}, pswap.PublishOptions{})
	if d, ok := pub.View(pswap.ViewDelta); !pub.Published || !ok || d.Version != 1 {
		t.Fatalf("second publish: %+v", pub)
	}
	if v, seqs := deltaSeqs(t, st); v != 1 || seqs["dt=2026-11-27"] != res.Seq {
		t.Fatalf("Delta log version %d reflects %v, want seq %d", v, seqs, res.Seq)
	}
	// A rollback's publish (Partition.Publish) too.
	p, _ := tb.Partition("dt=2026-11-27")
	hist, err := p.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := p.Rollback(ctx, hist[1].Generation, pswap.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pub := p.Publish(ctx, rb, pswap.PublishOptions{}); !pub.Published || len(pub.Views) != 2 {
		t.Fatalf("rollback publish: %+v", pub)
	}
	if _, seqs := deltaSeqs(t, st); seqs["dt=2026-11-27"] != rb.Seq {
		t.Fatalf("after the rollback the Delta log reflects %v, want seq %d", seqs, rb.Seq)
	}
	states, err := tb.ViewStates(ctx, nil, pswap.PublishOptions{})
	if err != nil || len(states) != 2 || !states[0].Current() || !states[1].Current() {
		t.Fatalf("view states: %+v %v", states, err)
	}

	// Turned off, the Delta log is left where it is.
	v, err := tb.Views(ctx)
	if err != nil || !v.Recorded || !v.Iceberg || !v.Delta {
		t.Fatalf("views %+v %v", v, err)
	}
	v.Delta = false
	if _, err := tb.SetViews(ctx, v); err != nil {
		t.Fatal(err)
	}
	_, pub = commitAndPublish(t, tb, "dt=2026-11-28", []int64{4}, pswap.PublishOptions{})
	if _, ok := pub.View(pswap.ViewDelta); ok || !pub.Published {
		t.Fatalf("publish with Delta off: %+v", pub)
	}
	if dv, _ := deltaSeqs(t, st); dv != 2 {
		t.Fatalf("the Delta log moved to version %d with the view off", dv)
	}
}

// TestViewsOfAnOlderTable: a table whose table.json records no views (one
// written before they were recorded) that has a Delta log keeps it
// current, and its first publish records the views.
func TestViewsOfAnOlderTable(t *testing.T) {
	st := memstore.New()
	tb := pswap.NewTable(st)
	commitAndPublish(t, tb, "dt=2026-11-27", []int64{1}, pswap.PublishOptions{Enable: pswap.Views{Delta: true}})
	// Strip the views from table.json, as an older pswap wrote it.
	doc, _, err := tablemeta.Read(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	doc.Views = nil
	data, err := tablemeta.Encode(doc)
	if err != nil || strings.Contains(string(data), "views") {
		t.Fatalf("%v %s", err, data)
	}
	if _, err := st.Put(ctx, tablemeta.Key, data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, err := tb.Views(ctx); err != nil || v.Recorded || !v.Delta {
		t.Fatalf("views of an older table: %+v %v (want Delta found, not recorded)", v, err)
	}
	res, pub := commitAndPublish(t, tb, "dt=2026-11-27", []int64{1, 2}, pswap.PublishOptions{})
	if !pub.Published || pub.ViewsRecorded != nil {
		t.Fatalf("publish: %+v", pub)
	}
	if _, seqs := deltaSeqs(t, st); seqs["dt=2026-11-27"] != res.Seq {
		t.Fatalf("the Delta log of an older table fell behind: %v, want seq %d", seqs, res.Seq)
	}
	if v, err := tb.Views(ctx); err != nil || !v.Recorded || !v.Delta || !v.Iceberg {
		t.Fatalf("views after the publish: %+v %v (want recorded)", v, err)
	}
}

// TestSetViewsOnANewTable: a table never committed to has nowhere to
// record views.
func TestSetViewsOnANewTable(t *testing.T) {
	tb := pswap.NewTable(memstore.New())
	if _, err := tb.SetViews(ctx, pswap.Views{Iceberg: true, Delta: true}); !errors.Is(err, pswap.ErrNoData) {
		t.Fatalf("SetViews on a new table: %v", err)
	}
	if v, err := tb.Views(ctx); err != nil || !v.Iceberg || v.Delta || v.Recorded {
		t.Fatalf("views of a new table: %+v %v", v, err)
	}
}

// TestViewPublishRetried: one transient failure of every read of the
// Delta log (each key's first read) does not leave the view behind: the
// pipeline's one retry rule runs the view's publish again, as the
// Iceberg publish of the same commit retries its own reads.
func TestViewPublishRetried(t *testing.T) {
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	commitAndPublish(t, tb, "dt=2026-11-27", []int64{1}, pswap.PublishOptions{Enable: pswap.Views{Delta: true}})
	var mu sync.Mutex
	failed := 0
	faulty := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.N == 1 && strings.HasPrefix(c.Key, deltalog.LogDir) && (c.Op == "get" || c.Op == "list" || c.Op == "stat") {
			mu.Lock()
			failed++
			mu.Unlock()
			return storetest.Fault{Before: store.ErrTransient}
		}
		return storetest.Fault{}
	})
	res, pub := commitAndPublish(t, pswap.NewTable(faulty), "dt=2026-11-27", []int64{1, 2}, pswap.PublishOptions{})
	d, ok := pub.View(pswap.ViewDelta)
	if !ok || !d.Published || !pub.Published || failed == 0 {
		t.Fatalf("publish under faults (%d injected): %+v", failed, pub)
	}
	if _, seqs := deltaSeqs(t, mem); seqs["dt=2026-11-27"] != res.Seq {
		t.Fatalf("the Delta log reflects %v, want seq %d", seqs, res.Seq)
	}
	t.Logf("%d faults injected; the Delta view took %d attempts", failed, d.Attempts)
}

// TestCatalogViewFollowsTheTable: a catalog recorded as one of the
// table's views is moved by every writer's publish, with no catalog in
// its options; one that cannot be opened is a view that says why, and the
// commit stands.
func TestCatalogViewFollowsTheTable(t *testing.T) {
	st := memstore.New()
	tb := pswap.NewTable(st)
	cat := &lagCatalog{} // collect_test.go
	const url = "sql+postgres://pswap:secret@db:5432/lake?catalog=lake&namespace=db&table=sales"
	opened := map[string]int{}
	open := func(_ context.Context, u string) (pswap.Catalog, error) {
		opened[u]++
		return cat, nil
	}
	_, pub := commitAndPublish(t, tb, "dt=2026-11-27", []int64{1}, pswap.PublishOptions{Enable: pswap.Views{Catalogs: []string{url}}, OpenCatalog: open})
	if c, ok := pub.View(pswap.ViewCatalog); !pub.Published || !ok || c.Location != pub.MetadataLocation {
		t.Fatalf("first publish: %+v", pub)
	}
	v, err := tb.Views(ctx)
	const public = "sql+postgres://pswap@db:5432/lake?catalog=lake&namespace=db&table=sales"
	if err != nil || len(v.Catalogs) != 1 || v.Catalogs[0] != public {
		t.Fatalf("recorded views %+v %v: want the catalog without its password", v, err)
	}
	_, pub = commitAndPublish(t, tb, "dt=2026-11-28", []int64{2}, pswap.PublishOptions{OpenCatalog: open})
	if loc, _ := cat.Current(ctx); !pub.Published || loc != pub.MetadataLocation || opened[public] != 2 {
		t.Fatalf("second publish: %+v; the catalog names %q (opened %v)", pub, loc, opened)
	}
	// A catalog that cannot be opened (no driver, no credentials): the
	// commit stands, the view says why, the Iceberg metadata is published.
	down := func(context.Context, string) (pswap.Catalog, error) { return nil, errors.New("no route to host") }
	_, pub = commitAndPublish(t, tb, "dt=2026-11-29", []int64{3}, pswap.PublishOptions{OpenCatalog: down})
	c, _ := pub.View(pswap.ViewCatalog)
	ice, _ := pub.View(pswap.ViewIceberg)
	if pub.Published || c.Published || !strings.Contains(c.Err.Error(), "no route to host") || !ice.Published {
		t.Fatalf("catalog down: %+v", pub)
	}
	states, err := tb.ViewStates(ctx, nil, pswap.PublishOptions{OpenCatalog: open})
	if err != nil || len(states) != 2 || states[1].Current() || states[1].Lag == "" {
		t.Fatalf("states with the catalog behind: %+v %v", states, err)
	}
	if r, err := tb.Publish(ctx, pswap.PublishOptions{OpenCatalog: open}); err != nil {
		t.Fatalf("publish: %+v %v", r, err)
	}
	loc, _ := cat.Current(ctx)
	if loc != ice.Location {
		t.Fatalf("the catalog names %q after the publish, want %q", loc, ice.Location)
	}
	// A file the catalog names deleted from outside (a peer's VACUUM): the
	// catalog view is not current, whatever version it names.
	if err := st.Delete(ctx, "metadata/"+loc[strings.LastIndex(loc, "/")+1:]); err != nil {
		t.Fatal(err)
	}
	states, err = tb.ViewStates(ctx, nil, pswap.PublishOptions{OpenCatalog: open})
	if err != nil || len(states) != 2 || states[1].Current() || !strings.Contains(states[1].Lag, "no longer has") {
		t.Fatalf("states with the catalog's file gone: %+v %v", states, err)
	}
}

// TestViewsChangedDuringAnEvolution: turning a view on while a commit
// that evolves the schema is under way is no conflict: the commit lands,
// and table.json keeps both the new column and the view.
func TestViewsChangedDuringAnEvolution(t *testing.T) {
	st := memstore.New()
	tb := pswap.NewTable(st)
	if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{1}), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	p, _ := tb.Partition("dt=2026-11-28")
	w, err := p.Begin(ctx, pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(record(t, "id", []int64{2}, "region", []string{"north"})); err != nil {
		t.Fatal(err)
	}
	// Meanwhile another writer turns the Delta view on.
	if _, err := tb.SetViews(ctx, pswap.Views{Iceberg: true, Delta: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatalf("the evolving commit failed after a change of views: %v", err)
	}
	doc, _, err := tablemeta.Read(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Schema.Field("region"); !ok || doc.Views == nil || !doc.Views.Delta {
		t.Fatalf("table.json after both: schema %s, views %+v", doc.Schema, doc.Views)
	}
	if pub := w.Publish(ctx, pswap.PublishOptions{}); !pub.Published || len(pub.Views) != 2 {
		t.Fatalf("publish: %+v", pub)
	}
}

// TestViewsUnknownSaySo: a publish that cannot read table.json (here a
// corrupt one) does not know the table's views: it publishes what the
// store shows and says so, instead of leaving a view behind silently.
func TestViewsUnknownSaySo(t *testing.T) {
	st := memstore.New()
	tb := pswap.NewTable(st)
	res, _ := commitAndPublish(t, tb, "dt=2026-11-27", []int64{1}, pswap.PublishOptions{})
	if _, err := st.Put(ctx, tablemeta.Key, []byte("{not json"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	p, _ := tb.Partition("dt=2026-11-27")
	pub := p.Publish(ctx, res, pswap.PublishOptions{})
	if pub.ViewsRecorded == nil || !errors.Is(pub.ViewsRecorded, pswap.ErrCorrupt) || !strings.Contains(pub.ViewsRecorded.Error(), "read the table's views") {
		t.Fatalf("a publish with table.json unreadable: %+v", pub)
	}
}
