package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/swap"
)

// The table's views are recorded in its table.json (tablemeta.Views), a
// document other writers replace too: the commit that creates the table,
// an evolving commit, and a publish's first recording. A views actor (kind
// "views") turns the Delta view on and off with pswap.Table.SetViews at
// the steps of its ViewsSpec, killable as the others; the facade's
// publishers (Writer.Publish) then publish the Delta log beside the
// Iceberg metadata while it is on. The checks (I10-views):
//   - at every PUT of table.json: it decodes; it keeps every column of the
//     document before it, by name (a column an evolving commit added
//     stays), its partition columns, and neither SchemaID nor
//     LastColumnID goes down; a column's id changes only in a publish's
//     write-back of the published ids, never in a document marked
//     published_ids; a views actor's PUT changes nothing but the views;
//     any other writer's PUT keeps the views recorded before it (no lost
//     update of a switch: the sim's publishers enable nothing);
//   - at every PUT of table.json or of a metadata version: a table.json
//     marked published_ids gives each column the newest version has its
//     published id, and its last_column_id is at least the version's
//     (checkMark);
//   - at every PUT under _delta_log/: the Delta view is on, or the actor
//     (a publisher: the writer it follows) started before the switch-off
//     was applied (a publish in flight, from the document its writer
//     read, may still write it);
//   - at every report of the views actor: the switch it reported done is
//     what table.json records;
//   - once every actor is done, after the final reconcile (Table.Publish,
//     no faults): with Delta on, the log reflects every pointer
//     (deltalog.Reflected: each partition with files at its pointer's
//     sequence number, and no other) and its files are exactly the current
//     generations'; with Delta off, the reconcile writes nothing under
//     _delta_log/.

// ViewsSpec is one views actor: from step Start, each switch in turn.
type ViewsSpec struct {
	Start    int
	Switches []ViewSwitch
}

// ViewSwitch turns the Delta view on or off, Pause steps of the others
// after the previous switch (or the start).
type ViewSwitch struct {
	Pause int
	Delta bool
}

// WithViews returns c (a Scenario's) with a views actor that turns the
// Delta view on, and then perhaps off, and on again, and for half the
// seeds one facade writer that evolves the schema. Its choices come from a
// stream of its own, so that the rest of the run's configuration is the
// Scenario's. Seeds with two partitions get no views actor: a publish of
// a table without a Delta log reconciles every partition's pointer
// (swap.ListPointers), which reads them from several goroutines at once.
func WithViews(c Config) Config {
	if len(c.Partitions) > 1 {
		return c
	}
	r := rand.New(rand.NewPCG(c.Seed, 0x71e3))
	// Early, while the writers commit (they start within 120 steps) and
	// their publishers follow them.
	vs := ViewsSpec{Start: r.IntN(20)}
	n := 1 + r.IntN(3) // on; on, off; on, off, on
	for i := range n {
		pause := 20 + r.IntN(80)
		if i == 0 {
			pause = 1 + r.IntN(10)
		}
		vs.Switches = append(vs.Switches, ViewSwitch{Pause: pause, Delta: i%2 == 0})
	}
	c.Views = []ViewsSpec{vs}
	evolve := r.IntN(2) == 0
	if evolve {
		var cands []int
		for i, ws := range c.Writers {
			if ws.Facade && !ws.Staged && ws.After == 0 {
				cands = append(cands, i)
			}
		}
		c.Writers = slices.Clone(c.Writers)
		if len(cands) > 0 {
			c.Writers[cands[r.IntN(len(cands))]].Evolve = true
		}
	}
	// The Scenario's writers mostly start before the first switch: 2-4
	// facade writers of runs of their own commit later, while the views
	// change (evolved rows when the run evolves the schema, since a
	// table's columns are never dropped). The publishers are numbered
	// writers first, then rollbacks: theirs move up.
	ordinal := 0
	for _, ws := range c.Writers {
		ordinal += 1 + ws.Committers
	}
	k := 2 + r.IntN(3)
	shift := func(m map[int]bool) map[int]bool {
		out := map[int]bool{}
		for id, v := range m {
			if id > ordinal {
				id += k
			}
			out[id] = v
		}
		return out
	}
	c.Publish, c.PrefetchPublish, c.StallPublish = shift(c.Publish), shift(c.PrefetchPublish), shift(c.StallPublish)
	c.LeaseFirstPublish = shift(c.LeaseFirstPublish)
	for i := range k {
		c.Writers = append(c.Writers, WriterSpec{
			ActorSpec: ActorSpec{Partition: c.Partitions[0], Start: 40 + r.IntN(300)},
			RunID:     fmt.Sprintf("run-v%d", i+1), Policy: swap.Policy(r.IntN(2)), Facade: true,
			Content: 10 + i, Files: 1 + r.IntN(2), Evolve: evolve,
		})
		// Most of them are published (Writer.Publish: every view the
		// table records, the Delta log among them while it is on).
		if r.IntN(4) != 0 {
			c.Publish[ordinal+i+1] = true
		}
	}
	return c
}

// EvolvedRow is Row with a column the table lacks until an evolving
// writer adds it.
type EvolvedRow struct {
	ID    int64  `parquet:"id"`
	Run   string `parquet:"run"`
	Value int64  `parquet:"value"`
	Note  string `parquet:"note"`
}

func evolvedRowsOf(content, file int) []EvolvedRow {
	var out []EvolvedRow
	for _, r := range rowsOf(content, file) {
		out = append(out, EvolvedRow{ID: r.ID, Run: r.Run, Value: r.Value, Note: "evolved"})
	}
	return out
}

// viewsTruth is what the simulation knows of table.json and the Delta log.
type viewsTruth struct {
	// doc is the latest table.json stored (nil: none yet).
	doc *tablemeta.Table
	// deltaOff is the step at which the Delta view was last turned off
	// (-1: it is on, or was never turned off).
	deltaOff int
	// switches counts the views' changes table.json recorded;
	// deltaVersions the Delta log versions the actors wrote.
	switches, deltaVersions int
}

// observeViews checks an applied PUT of table.json or under _delta_log/
// (reporting true for those). The lock is held.
func (w *World) observeViews(r *request) bool {
	switch {
	case r.key == tablemeta.Key:
		w.observeTable(r.data)
		return true
	case strings.HasPrefix(r.key, deltalog.LogDir):
		if w.cur != nil && strings.HasSuffix(r.key, ".json") && !strings.Contains(r.key, "checkpoint") {
			w.views.deltaVersions++
		}
		if w.views.deltaOff < 0 || w.cur == nil {
			return true
		}
		origin := w.cur
		if origin.kind == "publisher" && origin.after != nil {
			origin = origin.after // Writer.Publish: the document its writer read
		}
		if origin.started > w.views.deltaOff {
			w.fail("I10-views", "%s wrote %s, but the Delta view was turned off at step %d, before %s started (step %d)",
				w.curName(), r.key, w.views.deltaOff, origin.name, origin.started)
		}
		return true
	}
	return false
}

// observeTable checks a table.json just stored against the one before it.
// The lock is held.
func (w *World) observeTable(data []byte) {
	doc, err := tablemeta.Decode(data)
	if err != nil {
		w.fail("I10-views", "%s wrote a table.json that does not decode: %v", w.curName(), err)
		return
	}
	prev := w.views.doc
	w.views.doc = doc
	if prev == nil {
		if v, ok := doc.ViewsOf(); ok && !v.Delta {
			w.views.deltaOff = w.step
		}
		return
	}
	// A column is its name: a publish writes the published field ids back
	// into table.json (lakehouse's writeBackIDs), which gives a column
	// another id while the document is not marked published_ids.
	now := columnIDs(doc)
	for name, id := range columnIDs(prev) {
		nid, ok := now[name]
		switch {
		case !ok:
			w.fail("I10-views", "%s wrote a table.json without column %q (id %d), which the one before it had", w.curName(), name, id)
			return
		case nid == id:
		case prev.PublishedIDs:
			w.fail("I10-views", "%s gave column %q id %d in table.json, which had it as %d marked published_ids (the published ids, final)", w.curName(), name, nid, id)
			return
		case w.cur != nil && (w.cur.kind == "writer" || w.cur.kind == "merger" || w.cur.kind == "views"):
			w.fail("I10-views", "%s gave column %q id %d in table.json, which had it as %d: only a publish's write-back of the published ids changes ids", w.curName(), name, nid, id)
			return
		}
	}
	w.checkMark(doc, "table.json")
	if doc.SchemaID < prev.SchemaID || doc.LastColumnID < prev.LastColumnID || len(doc.PartitionColumns) != len(prev.PartitionColumns) {
		w.fail("I10-views", "%s wrote a table.json with schema %d (last column %d, %d partition columns) over schema %d (%d, %d)", w.curName(),
			doc.SchemaID, doc.LastColumnID, len(doc.PartitionColumns), prev.SchemaID, prev.LastColumnID, len(prev.PartitionColumns))
		return
	}
	pv, precorded := prev.ViewsOf()
	v, recorded := doc.ViewsOf()
	switch {
	case w.cur != nil && w.cur.kind == "views":
		if !sameButViews(prev, doc) {
			w.fail("I10-views", "%s changed more than the views of table.json", w.curName())
			return
		}
	case precorded && (!recorded || !v.Equal(pv)):
		w.fail("I10-views", "%s replaced table.json's views %+v by %+v (a lost update of a views switch)", w.curName(), pv, v)
		return
	}
	if !v.Equal(pv) || recorded != precorded {
		w.views.switches++
	}
	switch {
	case v.Delta:
		w.views.deltaOff = -1
	case pv.Delta || w.views.deltaOff < 0:
		w.views.deltaOff = w.step
	}
}

// columnIDs are a table.json's top-level and partition columns' ids by name.
func columnIDs(t *tablemeta.Table) map[string]int {
	ids := map[string]int{}
	for _, f := range t.Schema.Fields {
		ids[f.Name] = f.ID
	}
	for _, c := range t.PartitionColumns {
		ids[c.Name] = c.ID
	}
	return ids
}

// checkMark checks that a table.json marked published_ids holds what the
// mark says (tablemeta.Table.PublishedIDs), against the newest Iceberg
// metadata version: each column the version has has its published id, and
// last_column_id is at least the version's, so that a column published
// later gets its id in table.json; what names the PUT just applied. The
// lock is held.
func (w *World) checkMark(doc *tablemeta.Table, what string) {
	if doc == nil || !doc.PublishedIDs || w.iceIDs == nil {
		return
	}
	for name, id := range columnIDs(doc) {
		if pid, ok := w.iceIDs[name]; ok && pid != id {
			w.fail("I10-views", "%s wrote %s, and the table.json marked published_ids gives column %q id %d, which the newest version (%d) publishes as %d",
				w.curName(), what, name, id, w.iceLatest, pid)
			return
		}
	}
	if doc.LastColumnID < w.iceLast {
		w.fail("I10-views", "%s wrote %s, and the table.json marked published_ids has last_column_id %d, below the newest version's (%d) %d",
			w.curName(), what, doc.LastColumnID, w.iceLatest, w.iceLast)
	}
}

// sameButViews reports whether a and b are the same document but for
// their views.
func sameButViews(a, b *tablemeta.Table) bool {
	x, y := a.Clone(), b.Clone()
	x.Views, y.Views = nil, nil
	ex, err1 := tablemeta.Encode(x)
	ey, err2 := tablemeta.Encode(y)
	return err1 == nil && err2 == nil && string(ex) == string(ey)
}

// viewsBody turns the Delta view on or off at each switch of the spec
// (pswap.Table.Views, then SetViews with Delta changed), retrying a
// failure a few times, and a table without table.json yet later.
func (w *World) viewsBody(vs ViewsSpec) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		t := pswap.NewTable(w.st)
		var outs []string
		for _, sw := range vs.Switches {
			if err := w.pause(ctx, sw.Pause); err != nil {
				return "killed"
			}
			out, done := "gave up", false
			for try := 0; try < 12 && !done; try++ {
				if try > 0 {
					if err := w.pause(ctx, 1+a.rng.IntN(10)); err != nil {
						return "killed"
					}
				}
				v, err := t.Views(ctx)
				if err == nil {
					v.Delta = sw.Delta
					var got pswap.Views
					if got, err = t.SetViews(ctx, v); err == nil {
						out, done = w.switchReport(a, sw, got), true
					}
				}
				if err != nil {
					out = "failed: " + errSummary(err)
					if errors.Is(err, pswap.ErrNoData) {
						out = "no table.json yet"
						if err := w.pause(ctx, 5+a.rng.IntN(10)); err != nil {
							return "killed"
						}
					}
				}
			}
			outs = append(outs, fmt.Sprintf("delta=%v: %s", sw.Delta, out))
		}
		return w.report(a, func() string { return fmt.Sprint(outs) })
	}
}

// switchReport checks a switch SetViews reported done: it is what
// table.json records (the only writer of views in a run is this actor).
func (w *World) switchReport(a *actor, sw ViewSwitch, got pswap.Views) string {
	return w.report(a, func() string {
		v, ok := w.views.doc.ViewsOf()
		if w.views.doc == nil || !ok || v.Delta != sw.Delta || got.Delta != sw.Delta {
			w.fail("I10-views", "%s set Delta=%v (reported %+v), table.json records %+v (recorded %v)", a, sw.Delta, got, v, ok)
		}
		return "done"
	})
}

// convergeViews runs a last `pswap publish` (Table.Publish) with no faults
// once every actor is done, in a run with a views actor, and checks the
// Delta log: with the Delta view on, it reflects every pointer and names
// exactly the current generations' files; off, the reconcile writes
// nothing under _delta_log/.
func (w *World) convergeViews() {
	if len(w.cfg.Views) == 0 || w.failure != nil {
		return
	}
	w.mu.Lock()
	before := w.deltaKeys()
	w.mu.Unlock()
	e := w.convergeEnv()
	e.Order = rand.New(rand.NewPCG(w.cfg.Seed, 0x71e3)).Perm
	ctx := env.With(context.Background(), e)
	o := w.iceOptions()
	res, err := pswap.NewTable(w.st).Publish(ctx, pswap.PublishOptions{Concurrency: 1, MaxAttempts: o.MaxAttempts, MaxElapsed: o.MaxElapsed})
	// The log as a reader finds it (requests outside any actor: at once).
	rctx := context.Background()
	_, seqs, rerr := deltalog.Reflected(rctx, w.st)
	s, lerr := deltalog.Load(rctx, w.st)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.record(Event{Actor: "CHECK", Outcome: fmt.Sprintf("final views reconcile: %v", err)})
	if w.failure != nil {
		return
	}
	v, _ := w.views.doc.ViewsOf()
	if w.views.doc == nil || !v.Delta {
		after := w.deltaKeys()
		for k, etag := range after {
			if before[k] != etag {
				w.fail("I10-views", "the final reconcile wrote %s with the Delta view off", k)
				return
			}
		}
		if d, ok := res.View(pswap.ViewDelta); ok {
			w.fail("I10-views", "the final reconcile published the Delta view (%+v), which is off", d)
		}
		return
	}
	d, ok := res.View(pswap.ViewDelta)
	if !ok || !d.Published || d.Err != nil {
		w.fail("I10-views", "the final reconcile, with no faults, did not publish the Delta view: %+v (%v)", d, err)
		return
	}
	w.iceChecks++
	if rerr != nil {
		w.fail("I10-views", "after the final reconcile the Delta log does not load: %v", rerr)
		return
	}
	want := map[string]int64{}
	files := map[string]bool{}
	for _, part := range w.partNames() {
		pt := w.truth(part)
		cur := pt.current()
		if cur == nil || !w.hasFiles(part, cur.gen) {
			continue
		}
		want[part] = int64(len(pt.hist))
		m, err := w.decodeManifest(w.manifestData(part, cur.gen))
		if err != nil {
			continue // I2 says so
		}
		for _, f := range m.Files {
			files[layout.DataPrefixOf(m)+f.Path] = true
		}
	}
	if !maps.Equal(seqs, want) {
		w.fail("I10-views", "after the final reconcile the Delta log reflects %v, the pointers are at %v", seqs, want)
		return
	}
	if lerr != nil {
		w.fail("I10-views", "after the final reconcile the Delta log does not load: %v", lerr)
		return
	}
	got := map[string]bool{}
	for p := range s.Files {
		k, ok := deltalog.KeyOfPath(p)
		if !ok {
			w.fail("I10-views", "the Delta log names %q, not a key of the table", p)
			return
		}
		got[k] = true
	}
	if !maps.Equal(got, files) {
		w.fail("I10-views", "after the final reconcile the Delta log names %d files, the current generations have %d", len(got), len(files))
	}
}

// deltaKeys are the objects under _delta_log/ with their ETags. The lock
// is held.
func (w *World) deltaKeys() map[string]string {
	out := map[string]string{}
	for k, o := range w.objs {
		if strings.HasPrefix(k, deltalog.LogDir) {
			out[k] = o.etag
		}
	}
	return out
}
