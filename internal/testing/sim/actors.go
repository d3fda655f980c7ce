package sim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// build creates the actors of the world's configuration.
func (w *World) build() {
	w.seedLegacy() // legacy.go
	add := func(name, kind string, start int, after *actor, killable, window bool, body func(context.Context, *actor) string) *actor {
		a := &actor{w: w, id: len(w.actors) + 1, name: name, kind: kind, start: start, after: after,
			killable: killable, window: window, body: body}
		a.rng = rand.New(rand.NewPCG(w.cfg.Seed, uint64(a.id)))
		a.env = w.actorEnv(a)
		w.byEnv[a.env] = a
		w.actors = append(w.actors, a)
		return a
	}
	type publishable struct {
		a                           *actor
		slot                        *pubSlot
		prefetch, stall, leaseFirst bool
	}
	var pubs []publishable
	ordinal := 0
	publishes := func(a *actor, slot *pubSlot) {
		ordinal++
		if slot != nil && w.cfg.Publish[ordinal] {
			pubs = append(pubs, publishable{a, slot, w.cfg.PrefetchPublish[ordinal], w.cfg.StallPublish[ordinal], w.cfg.LeaseFirstPublish[ordinal]})
		}
	}
	var writers []*actor
	for i, ws := range w.cfg.Writers {
		var after *actor
		if ws.After > 0 && ws.After <= len(writers) {
			after = writers[ws.After-1]
		}
		kind := "txn"
		if ws.Facade {
			kind = "facade"
		}
		name := fmt.Sprintf("w%d(%s,%s,%s)", i+1, ws.RunID, ws.Policy, kind)
		if len(w.cfg.Partitions) > 1 {
			name = fmt.Sprintf("w%d(%s,%s,%s,%s)", i+1, ws.RunID, ws.Policy, kind, ws.Partition[len(ws.Partition)-2:])
		}
		if !ws.Staged {
			ps := &pubSlot{}
			a := add(name, "writer", ws.Start, after, true, true, w.writerBody(ws, ps))
			writers = append(writers, a)
			publishes(a, ps)
			continue
		}
		slot := new(string)
		stager := add(fmt.Sprintf("st%d(%s,%s)", i+1, ws.RunID, kind), "writer", ws.Start, after, true, true, w.stagerBody(ws, slot))
		writers = append(writers, stager)
		publishes(stager, nil)
		var first *actor
		for c := range ws.Committers {
			after := stager
			if c == 2 {
				after = first
			}
			pol := swap.Policy((i + c) % 2)
			ps := &pubSlot{}
			cm := add(fmt.Sprintf("cs%d.%d(%s,%s)", i+1, c+1, ws.RunID, pol), "writer", 0, after, true, true, w.committerBody(ws, pol, slot, ps))
			cm.group = i + 1
			if c == 0 {
				first = cm
			}
			publishes(cm, ps)
		}
	}
	for i, rs := range w.cfg.Rollbacks {
		ps := &pubSlot{}
		a := add(fmt.Sprintf("rb%d", i+1), "rollback", rs.Start, nil, true, true, w.rollbackBody(rs, ps))
		publishes(a, ps)
	}
	for i, gs := range w.cfg.GCs {
		add(fmt.Sprintf("gc%d", i+1), "gc", gs.Start, nil, true, false, w.gcBody(gs))
	}
	for i, rs := range w.cfg.Readers {
		add(fmt.Sprintf("rd%d", i+1), "reader", rs.Start, nil, false, false, w.readerBody(rs))
	}
	for i, ms := range w.cfg.Migrators {
		add(fmt.Sprintf("mg%d", i+1), "migrator", ms.Start, nil, true, true, w.migratorBody(ms)) // legacy.go
	}
	for _, p := range pubs {
		pa := add("pub:"+p.a.name, "publisher", 0, p.a, true, false, w.publisherBody(p.slot, p.prefetch, p.leaseFirst))
		pa.stall = p.stall
	}
	for i, gs := range w.cfg.Reconcilers {
		add(fmt.Sprintf("rc%d", i+1), "publisher", gs.Start, nil, true, false, w.reconcilerBody(gs))
	}
	for i, rs := range w.cfg.IceReaders {
		add(fmt.Sprintf("ir%d", i+1), "icereader", rs.Start, nil, false, false, w.iceReaderBody(rs))
	}
	for i, ls := range w.cfg.LoseHint {
		lh := add(fmt.Sprintf("lose-hint%d", i+1), "operator", ls.Start, nil, false, false, w.hintLoserBody(ls.Pause > 0))
		if ls.Pause > 0 {
			add(fmt.Sprintf("rehint%d", i+1), "publisher", 0, lh, false, false, w.repairBody(ls))
		}
	}
	for i, ls := range w.cfg.LoseManifest {
		lm := add(fmt.Sprintf("lose-mf%d", i+1), "operator", ls.Start, nil, false, false, w.manifestLoserBody())
		add(fmt.Sprintf("repair%d", i+1), "publisher", 0, lm, false, false, w.repairBody(ls))
	}
	for i, ms := range w.cfg.Mergers {
		var after *actor
		if ms.After > 0 {
			after = w.mergers[ms.After-1]
		}
		w.mergers = append(w.mergers, add(fmt.Sprintf("m%d(%s)", i+1, ms.RunID), "merger", ms.Start, after, true, true, w.mergerBody(ms)))
	}
	for i, as := range w.cfg.Appenders {
		var after *actor
		if as.After > 0 {
			after = w.appenders[as.After-1]
		}
		ps := &pubSlot{}
		ap := add(fmt.Sprintf("ap%d(%s)", i+1, as.RunID), "appender", as.Start, after, true, true, w.appenderBody(as, ps))
		w.appenders = append(w.appenders, ap)
		if w.cfg.PublishAppends[i+1] {
			add("pub:"+ap.name, "publisher", 0, ap, true, false, w.publisherBody(ps, false, false))
		}
	}
	for i, vs := range w.cfg.Views {
		add(fmt.Sprintf("views%d", i+1), "views", vs.Start, nil, true, false, w.viewsBody(vs))
	}
	w.iceberg = len(pubs) > 0 || len(w.cfg.PublishAppends) > 0 || len(w.cfg.Reconcilers) > 0 || len(w.cfg.LoseManifest) > 0 || slices.ContainsFunc(w.cfg.LoseHint, func(ls LossSpec) bool { return ls.Pause > 0 })
}

// commitOptions are the writers' options: the simulated grace period and
// retry bounds (on the simulated clock: actorEnv).
func (w *World) commitOptions(a *actor, runID string, p swap.Policy) pswap.CommitOptions {
	return pswap.CommitOptions{
		RunID:       runID,
		OnConflict:  p,
		GracePeriod: w.cfg.GracePeriod,
		MaxAttempts: 4,
		MaxElapsed:  w.cfg.MaxElapsed,
	}
}

// txnOptions are commitOptions for the protocol's own calls (swap.Begin).
func txnOptions(o pswap.CommitOptions) swap.Options {
	return swap.Options{RunID: o.RunID, OnConflict: o.OnConflict, GracePeriod: o.GracePeriod,
		MaxAttempts: o.MaxAttempts, MaxElapsed: o.MaxElapsed}
}

// clockNow is the simulated time, as a writer's local clock.
func (w *World) clockNow() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clock
}

// Row is what the facade's writers write.
type Row struct {
	ID    int64  `parquet:"id"`
	Run   string `parquet:"run"`
	Value int64  `parquet:"value"`
}

func rowsOf(content, file int) []Row {
	rows := make([]Row, 3+file)
	for i := range rows {
		rows[i] = Row{ID: int64(file*100 + i), Run: fmt.Sprintf("content-%d", content), Value: int64(content*1000 + file*10 + i)}
	}
	return rows
}

func (w *World) report(a *actor, f func() string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a.killed {
		return "killed"
	}
	w.reports++
	return f()
}

func (w *World) writerBody(ws WriterSpec, ps *pubSlot) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		opts := w.commitOptions(a, ws.RunID, ws.Policy)
		var (
			staged string
			res    swap.Result
			err    error
		)
		if ws.Facade {
			staged, res, err = w.commitFacade(ctx, ws, opts, ps)
		} else {
			staged, res, err = w.commitTxn(ctx, ws, opts, ps)
		}
		if err == nil {
			w.fill(ps, ws.Partition, res)
		}
		if errors.Is(err, errSkipped) {
			return w.report(a, func() string {
				for _, e := range w.truth(ws.Partition).hist {
					if e.runID == ws.RunID {
						return "skipped: already committed by this run"
					}
				}
				w.fail("I4", "%s skipped its work as already committed, but run %q never committed", a, ws.RunID)
				return "skipped"
			})
		}
		return w.report(a, func() string { return w.commitReport(a, ws.Partition, staged, res, err) })
	}
}

var errSkipped = errors.New("already committed: skipped")

// stagerBody stages a generation without committing it (Writer.Stage or
// Txn.Stage) and leaves its id in slot for the committers.
func (w *World) stagerBody(ws WriterSpec, slot *string) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		opts := w.commitOptions(a, ws.RunID, ws.Policy)
		var gen string
		var err error
		if ws.Facade {
			var p *pswap.Partition
			if p, err = pswap.NewTable(w.st).Partition(ws.Partition); err == nil {
				var wr *pswap.Writer
				if wr, err = p.Begin(ctx, pswap.WriteOptions{Commit: opts, Staging: staging.Options{TargetFileSize: 1}}); err == nil {
					for f := range ws.Files {
						if err = pswap.Write(wr, rowsOf(ws.Content, f)...); err != nil {
							break
						}
					}
					if err == nil {
						gen, _, err = wr.Stage(ctx)
					} else {
						wr.Abort(context.WithoutCancel(ctx))
					}
				}
			}
		} else {
			var txn *swap.Txn
			if txn, err = swap.Begin(ctx, w.st, ws.Partition, txnOptions(opts)); err == nil {
				var c manifest.Content
				if c, err = w.stageFiles(ctx, txn, ws); err == nil {
					if err = txn.Stage(ctx, c); err == nil {
						gen = txn.Generation()
					}
				} else {
					txn.Abort(context.WithoutCancel(ctx))
				}
			}
		}
		return w.report(a, func() string {
			if n := len(w.entriesBy(a, ws.Partition)); n > 0 {
				w.fail("I3", "%s only staged, but swapped the pointer", a)
			}
			if err != nil {
				return "stage failed: " + errSummary(err)
			}
			*slot = gen
			return "staged " + gen
		})
	}
}

// committerBody commits the generation a stager left in slot
// (swap.CommitStaged through the facade), as another process would.
func (w *World) committerBody(ws WriterSpec, pol swap.Policy, slot *string, ps *pubSlot) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		w.mu.Lock()
		gen := *slot
		w.mu.Unlock()
		if gen == "" {
			return "nothing was staged"
		}
		p, err := pswap.NewTable(w.st).Partition(ws.Partition)
		if err != nil {
			return err.Error()
		}
		res, err := p.CommitStaged(ctx, gen, w.commitOptions(a, ws.RunID, pol))
		if err == nil {
			w.setSlot(ps, func(ps *pubSlot) { ps.p = p })
			w.fill(ps, ws.Partition, res)
		}
		return w.report(a, func() string {
			if err == nil && res.Outcome == swap.AlreadyCommitted {
				found := false
				for _, e := range w.truth(ws.Partition).hist {
					found = found || e.dataGen == gen
				}
				if !found {
					w.fail("I3", "%s reported %s already committed, but it never was", a, gen)
				}
			}
			return w.commitReport(a, ws.Partition, gen, res, err)
		})
	}
}

// commitFacade writes through the library's facade: pswap.Writer, Parquet
// staging, Commit.
func (w *World) commitFacade(ctx context.Context, ws WriterSpec, opts pswap.CommitOptions, ps *pubSlot) (string, swap.Result, error) {
	p, err := pswap.NewTable(w.st).Partition(ws.Partition)
	if err != nil {
		return "", swap.Result{}, err
	}
	wo := pswap.WriteOptions{Commit: opts, Staging: staging.Options{TargetFileSize: 1}}
	if ws.Prefetch {
		wo.Prefetch = &pswap.PublishOptions{MaxElapsed: w.cfg.MaxElapsed}
	}
	wo.Table.EvolveSchema = ws.Evolve
	wr, err := p.Begin(ctx, wo)
	if err != nil {
		return "", swap.Result{}, err
	}
	w.setSlot(ps, func(ps *pubSlot) { ps.w = wr })
	if wr.AlreadyCommitted() {
		wr.Abort(ctx)
		return wr.Generation(), swap.Result{}, errSkipped
	}
	for f := range ws.Files {
		if f > 0 && ws.Pause > 0 {
			if err := w.sleep(ctx, ws.Pause, ws.Sleep); err != nil {
				return wr.Generation(), swap.Result{}, err
			}
		}
		var err error
		if ws.Evolve {
			err = pswap.Write(wr, evolvedRowsOf(ws.Content, f)...)
		} else {
			err = pswap.Write(wr, rowsOf(ws.Content, f)...)
		}
		if err != nil {
			wr.Abort(context.WithoutCancel(ctx))
			return wr.Generation(), swap.Result{}, err
		}
	}
	res, err := wr.Commit(ctx)
	return wr.Generation(), res, err
}

// commitTxn writes through swap.Txn with small raw files, put
// create-if-absent and read back after an unclear answer.
func (w *World) commitTxn(ctx context.Context, ws WriterSpec, opts pswap.CommitOptions, ps *pubSlot) (string, swap.Result, error) {
	p, err := pswap.NewTable(w.st).Partition(ws.Partition)
	if err != nil {
		return "", swap.Result{}, err
	}
	w.setSlot(ps, func(ps *pubSlot) { ps.p = p })
	txn, err := swap.Begin(ctx, w.st, ws.Partition, txnOptions(opts))
	if err != nil {
		return "", swap.Result{}, err
	}
	if txn.AlreadyCommitted() {
		txn.Abort(ctx)
		return txn.Generation(), swap.Result{}, errSkipped
	}
	c, err := w.stageFiles(ctx, txn, ws)
	if err != nil {
		txn.Abort(context.WithoutCancel(ctx))
		return txn.Generation(), swap.Result{}, err
	}
	res, err := txn.Commit(ctx, c)
	return txn.Generation(), res, err
}

// stageFiles writes the txn writers' small raw files and describes them.
func (w *World) stageFiles(ctx context.Context, txn *swap.Txn, ws WriterSpec) (manifest.Content, error) {
	var c manifest.Content
	sums := sha256.New()
	for f := range ws.Files {
		if f > 0 && ws.Pause > 0 {
			if err := w.sleep(ctx, ws.Pause, ws.Sleep); err != nil {
				return c, err
			}
		}
		body := fmt.Appendf(nil, "content-%d/file-%d/%s", ws.Content, f, bytes.Repeat([]byte{'x'}, f*7))
		name := fmt.Sprintf("part-%05d.bin", f)
		if err := putFile(ctx, w.st, txn.DataPrefix()+name, body); err != nil {
			return c, err
		}
		sum := sha256.Sum256(body)
		c.Add(manifest.File{Path: name, Size: int64(len(body)), Rows: int64(f + 1), Checksum: manifest.SHA256Checksum(sum[:])})
		sums.Write(body)
	}
	c.ContentChecksum = fmt.Sprintf("sim:%x", sums.Sum(nil)[:16])
	c.ContentChecksum = fmt.Sprintf("sim:%x", sums.Sum(nil)[:16])
	return c, nil
}

// putFile writes a data file create-if-absent, retrying transient failures;
// a 412 or an unclear answer is our own write when the store holds our bytes.
func putFile(ctx context.Context, st store.Store, key string, body []byte) error {
	var err error
	for range 4 {
		if _, err = st.Put(ctx, key, body, store.PutOptions{IfNoneMatch: true}); err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrPrecondition) && !store.IsRetryable(err) {
			return err
		}
		got, _, gerr := store.ReadAll(ctx, st, key)
		if gerr == nil && bytes.Equal(got, body) {
			return nil
		}
		if gerr == nil {
			return fmt.Errorf("%s holds other bytes: %w", key, err)
		}
	}
	return err
}

func (w *World) rollbackBody(rs ActorSpec, ps *pubSlot) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		p, err := pswap.NewTable(w.st).Partition(rs.Partition)
		if err != nil {
			return err.Error()
		}
		// pick chooses the target from the partition's history: a
		// generation still there (live), the oldest of them 3 times in
		// 4 (what GC collects next), or a collected one (the refusal is
		// a path too); "" and why when there is none.
		pick := func() (target string, live, oldest bool, hist []swap.Entry, why string) {
			hist, err := p.History(ctx, 0)
			if err != nil {
				return "", false, false, nil, "history failed: " + errSummary(err)
			}
			var targets, collected []string
			for _, e := range hist {
				switch {
				case e.Collected:
					collected = append(collected, e.Generation)
				case !e.Current:
					targets = append(targets, e.Generation)
				}
			}
			switch {
			case len(targets) > 0 && a.rng.IntN(4) != 0:
				return targets[len(targets)-1], true, true, hist, ""
			case len(targets) > 0 && (len(collected) == 0 || a.rng.IntN(4) != 0):
				return targets[a.rng.IntN(len(targets))], true, false, hist, ""
			case len(collected) > 0:
				return collected[0], false, false, hist, ""
			}
			return "", false, false, hist, "nothing to roll back to"
		}
		// A rollback with Looks that finds no generation still there to
		// roll back to (or no history yet) looks again, up to Looks
		// more times, 5 to 24 steps later. WithGC, it looks (and rolls
		// back) each time a GC collection begins, and passes over an
		// oldest generation GC may not collect yet: either GC's second
		// listing of the manifests sees the rollback's, or the
		// rollback's second read of its target finds it gone
		// (gc/doc.go), so the race is worth running with a target that
		// collection may delete.
		var target string
		for look := 0; ; look++ {
			if rs.WithGC {
				if err := w.awaitGC(ctx, a); err != nil {
					return "killed"
				}
			}
			t, live, oldest, hist, why := pick()
			last := look >= rs.Looks
			if live && (!rs.WithGC || !oldest || w.collectable(hist, t)) || t != "" && last {
				target = t
				break
			}
			if last {
				if t != "" {
					why = "nothing GC may collect to race it for"
				}
				return why
			}
			if !rs.WithGC {
				if err := w.pause(ctx, 5+a.rng.IntN(20)); err != nil {
					return "killed"
				}
			}
		}
		res, err := p.Rollback(ctx, target, w.commitOptions(a, "", swap.Fail))
		if err == nil {
			w.setSlot(ps, func(ps *pubSlot) { ps.p = p })
			w.fill(ps, rs.Partition, res)
		}
		return w.report(a, func() string {
			out := w.commitReport(a, rs.Partition, "", res, err)
			if err == nil && res.Changed {
				mine := w.entriesBy(a, rs.Partition)
				t := w.findGen(rs.Partition, target)
				switch {
				case len(mine) == 0 || t == nil:
				case mine[0].rollbackOf != target:
					w.fail("I3", "%s rolled back to %s, its generation says rollback of %s", a, target, mine[0].rollbackOf)
				case mine[0].dataGen != t.dataGen:
					w.fail("I3", "%s rolled back to %s (data %s), its generation has data %s", a, target, t.dataGen, mine[0].dataGen)
				}
			}
			return "rollback to " + target + ": " + out
		})
	}
}

// fill leaves a commit's result for the publisher that follows the actor.
func (w *World) fill(ps *pubSlot, part string, res swap.Result) {
	w.setSlot(ps, func(ps *pubSlot) { ps.part, ps.res = part, res })
}

// setSlot writes the slot of the publisher that follows the actor, with
// the lock held: an actor killed between two requests goes on running its
// own code beside the others (its requests fail), and the publisher that
// waits for it may already be reading the slot.
func (w *World) setSlot(ps *pubSlot, set func(*pubSlot)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	set(ps)
}

// pause blocks the actor for at least n steps of the others (a scheduling
// point that touches nothing).
func (w *World) pause(ctx context.Context, n int) error {
	return w.sleep(ctx, n, 0)
}

// sleep is pause, and then the store's clock moves d forward (a task busy
// computing, or a reader taking its time).
func (w *World) sleep(ctx context.Context, n int, d time.Duration) error {
	w.mu.Lock()
	until := w.step + n
	w.mu.Unlock()
	return w.do(ctx, &request{op: "pause", until: until, sleep: d})
}

// gcBody collects Rounds times the way `pswap gc` does (gc.Collect:
// gc with what the Iceberg snapshots name protected, then, over the whole
// table, the expiry of older snapshots): the whole table when there is one
// partition, else each partition by name (gc.Partition, one at a time).
func (w *World) gcBody(gs GCSpec) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		opts := gc.CollectOptions{Options: w.cfg.GC,
			Iceberg: lakehouse.ExpireOptions{MinAge: w.cfg.MetadataMinAge}}
		if len(w.cfg.Partitions) > 1 {
			opts.Partitions = w.cfg.Partitions
			opts.OnPartition = func(gc.Report) { w.setBlind(a) } // each asks again
		}
		var outs []string
		for round := range gs.Rounds {
			if round > 0 {
				if err := w.pause(ctx, gs.Pause); err != nil {
					return "killed"
				}
			}
			w.mu.Lock()
			w.gcSeen[a] = map[string]object{}
			w.gcKeys[a] = nil
			w.gcBlind[a] = true
			w.releaseWithGC()
			w.mu.Unlock()
			rep, err := gc.Collect(ctx, w.st, opts)
			errs := rep.Totals.Errors
			if err != nil {
				errs = max(errs, 1)
			}
			out := fmt.Sprintf("deleted %d (%d errors)", rep.Totals.Objects, errs)
			if n := len(rep.Expired.Expired); n > 0 || len(rep.Expired.Deleted) > 0 {
				out += fmt.Sprintf(", expired %d snapshots, %d metadata objects", n, len(rep.Expired.Deleted))
			}
			outs = append(outs, out)
		}
		return w.report(a, func() string { return fmt.Sprint(outs) })
	}
}

// awaitGC pauses a rollback (ActorSpec.WithGC) until the next GC
// collection begins (releaseWithGC), or 100 steps; at once when no GC
// actor is left to collect.
func (w *World) awaitGC(ctx context.Context, a *actor) error {
	w.mu.Lock()
	gcs := false
	for _, b := range w.actors {
		gcs = gcs || b.kind == "gc" && b.state != done
	}
	a.gcWait = gcs
	w.mu.Unlock()
	if !gcs {
		return nil
	}
	err := w.pause(ctx, 100)
	w.mu.Lock()
	a.gcWait = false
	w.mu.Unlock()
	return err
}

// releaseWithGC lets the first rollback waiting in awaitGC go on: a
// collection begins now (one rollback per collection). The lock is held.
func (w *World) releaseWithGC() {
	for _, b := range w.actors {
		if b.gcWait && b.state == pending && b.req != nil && b.req.op == "pause" {
			b.req.until, b.gcWait = w.step, false
			return
		}
	}
}

// collectable reports whether GC may collect gen now, as far as the
// history tells: its successor became current more than GC's MinAge
// (and the two seconds GC allows the clock) ago. (Iceberg snapshots that
// name its files may keep them longer.)
func (w *World) collectable(hist []swap.Entry, gen string) bool {
	age := w.cfg.GC.MinAge
	w.mu.Lock()
	now := w.clock
	w.mu.Unlock()
	for i, e := range hist {
		if e.Generation == gen && i > 0 {
			at := hist[i-1].CommittedAt
			return at.IsZero() || now.Sub(at) > age+2*time.Second
		}
	}
	return true
}

func (w *World) setBlind(a *actor) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gcBlind[a] = true
}

func (w *World) readerBody(rs ReaderSpec) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		complete, expired, failed := 0, 0, 0
		for range rs.Reads {
			switch w.readOnce(ctx, a, rs) {
			case "complete":
				complete++
			case "expired":
				expired++
			default:
				failed++
			}
			if err := w.pause(ctx, 1+a.rng.IntN(20)); err != nil {
				break
			}
		}
		return w.report(a, func() string {
			return fmt.Sprintf("read %d complete generations (%d past min-age, %d failed to resolve)", complete, expired, failed)
		})
	}
}

// readOnce resolves the partition (pointer -> manifest) and reads every file
// of the generation, one request each, checking size and checksum. A file
// missing while the reader is within GC's min-age of its pointer read, or
// differing from the manifest, is a violation of I1.
func (w *World) readOnce(ctx context.Context, a *actor, spec ReaderSpec) string {
	part := spec.Partition
	snap, err := swap.Resolve(ctx, w.st, part)
	if err != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		if errors.Is(err, swap.ErrCorrupt) && w.clock.Sub(a.lastPointerGet) < w.cfg.GC.MinAge {
			w.fail("I1", "%s resolved %s and found its manifest gone %s after reading the pointer: %v",
				a, part, w.clock.Sub(a.lastPointerGet).Round(time.Millisecond), err)
		}
		return "unresolved"
	}
	w.mu.Lock()
	rs := &readState{part: part, gen: snap.Manifest.Generation, dataGen: snap.Manifest.DataGen(), t0: a.lastPointerGet}
	w.readers[a] = rs
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.readers, a)
		w.mu.Unlock()
	}()
	for i, f := range snap.Files {
		if i > 0 && spec.Pause > 0 {
			if err := w.sleep(ctx, spec.Pause, spec.Sleep); err != nil {
				return "failed"
			}
		}
		var data []byte
		for attempt := 0; ; attempt++ {
			data, _, err = store.ReadAll(ctx, w.st, f.Key)
			if err == nil || !store.IsRetryable(err) || attempt == 3 {
				break
			}
		}
		w.mu.Lock()
		age := w.clock.Sub(rs.t0)
		switch {
		case errors.Is(err, store.ErrNotFound) && age < w.cfg.GC.MinAge:
			w.fail("I1", "%s lost file %s of %s %s after reading the pointer (min-age %s)", a, f.Key, rs.gen, age.Round(time.Millisecond), w.cfg.GC.MinAge)
		case errors.Is(err, store.ErrNotFound):
			w.mu.Unlock()
			return "expired"
		case err != nil:
			w.mu.Unlock()
			return "failed"
		}
		sum := sha256.Sum256(data)
		if int64(len(data)) != f.Size || manifest.SHA256Checksum(sum[:]) != f.Checksum {
			w.fail("I1", "%s read %s of %s and got other bytes than its manifest records", a, f.Key, rs.gen)
		}
		w.mu.Unlock()
	}
	return "complete"
}

// plantedServe answers a request in place of the store when a planted bug
// says so: served when it did, hit when its answer differs from the
// store's. The lock is held.
func (w *World) plantedServe(a *actor, r *request) (served, hit bool) {
	if served, hit, ok := w.plantedIcebergList(a, r); ok {
		return served, hit
	}
	var seen map[string]object
	if w.cfg.Plant == PlantGCIgnoresIceberg && a.kind == "gc" {
		if !strings.HasPrefix(r.key, lakehouse.MetadataPrefix) {
			w.gcBlind[a] = false
			return false, false
		}
		if !w.gcBlind[a] || (r.op != "get" && r.op != "stat" && r.op != "list") {
			return false, false
		}
		if r.op == "list" {
			// Blind to the metadata folder's listing too (a publish lists
			// it when the hint is missing or names no version).
			hit := false
			for k := range w.objs {
				hit = hit || strings.HasPrefix(k, r.key)
			}
			r.page, r.pre, r.more = nil, nil, false
			return true, hit
		}
		_, exists := w.objs[r.key]
		r.err = fmt.Errorf("%s %s: %w", r.op, w.st.URI(r.key), store.ErrNotFound)
		return true, exists
	}
	if w.cfg.Plant == PlantGCSkipRelist && a.kind == "gc" && r.op == "list" {
		if w.gcKeys[a] == nil {
			w.gcKeys[a] = map[string]bool{}
			for k := range w.objs {
				w.gcKeys[a][k] = true
			}
			return false, false
		}
		if part, ok := layout.PartitionOf(r.key); !ok || r.key != layout.ManifestsPrefix(part) {
			return false, false
		}
		w.apply(r)
		kept := r.page[:0]
		for _, at := range r.page {
			if w.gcKeys[a][at.Key] {
				kept = append(kept, at)
			}
		}
		hit = len(kept) != len(r.page)
		r.page = kept
		return true, hit
	}
	switch {
	case w.cfg.Plant == PlantGCSkipReread && a.kind == "gc" && r.op == "get" && isPointerKey(r.key):
		seen = w.gcSeen[a]
	case w.cfg.Plant == PlantRollbackSkipReread && a.kind == "rollback" && r.op == "get":
		if _, k, _ := classify(r.key); k != kindManifest {
			return false, false
		}
		if w.rbSeen[a] == nil {
			w.rbSeen[a] = map[string]object{}
		}
		seen = w.rbSeen[a]
	default:
		return false, false
	}
	if seen == nil {
		return false, false
	}
	old, ok := seen[r.key]
	if !ok {
		if o, exists := w.objs[r.key]; exists {
			seen[r.key] = o
		}
		return false, false
	}
	if cur, exists := w.objs[r.key]; exists && cur.etag == old.etag {
		return false, false // the re-read would give the same answer
	}
	r.body = bytes.Clone(old.data)
	r.attrs = store.Attrs{Key: r.key, Size: int64(len(old.data)), ETag: old.etag, ModTime: old.mod}
	return true, true
}
