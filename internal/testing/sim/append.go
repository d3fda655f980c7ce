package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/swap"
)

// AppendSpec is one appending actor: pswap.Partition.Append of Rows (all
// of them tagged with RunID in Row.Run) into one partition. After (1-based
// in Appenders) makes it an orchestrator's retry of an earlier appender.
type AppendSpec struct {
	ActorSpec
	RunID string
	Rows  []Row
}

// appenderBody appends the spec's rows through the facade (Parquet, one
// file a row so that an append has several files), and leaves its writer
// and result in ps for the publisher that follows it (PublishAppends).
func (w *World) appenderBody(as AppendSpec, ps *pubSlot) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		w.mu.Lock()
		w.appendIn[a] = as
		w.mu.Unlock()
		p, err := pswap.NewTable(w.st).Partition(as.Partition)
		var res pswap.Result
		if err == nil {
			var wr *pswap.Writer
			opts := w.commitOptions(a, as.RunID, swap.Fail)
			if wr, err = p.Append(ctx, pswap.WriteOptions{Commit: opts, Staging: staging.Options{TargetFileSize: 1}}); err == nil {
				w.setSlot(ps, func(ps *pubSlot) { ps.w = wr })
				if !wr.AlreadyCommitted() {
					if err = pswap.Write(wr, as.Rows...); err != nil {
						wr.Abort(context.WithoutCancel(ctx))
					}
				}
				if err == nil {
					res, err = wr.Commit(ctx)
				}
				if err == nil {
					w.fill(ps, as.Partition, res)
				}
			}
		}
		return w.report(a, func() string { return w.appendReport(a, as, res, err) })
	}
}

// appendReport checks what an appender reported (I3, I4, I9-append): at
// most one swap; a change names the generation its own swap made current;
// a same-run no-op names a generation of the run that holds its rows once;
// a failure (other than an unknown outcome) swapped nothing. The lock is
// held.
func (w *World) appendReport(a *actor, as AppendSpec, res pswap.Result, err error) string {
	mine := w.ownSwaps(a, as.Partition, "append")
	switch {
	case err == nil && res.Changed:
		if len(mine) == 0 || mine[0].gen != res.Generation && res.Outcome != swap.Superseded {
			w.fail("I3", "%s reported %s of %s, its swaps: %v", a, res.Outcome, res.Generation, mine)
			return "violation"
		}
		w.ackedAppends[as.RunID] = res.RunGeneration
		return fmt.Sprintf("appended: %s %s (%d rebases)", res.Outcome, res.RunGeneration, res.Stats.Rebases)
	case err == nil:
		if len(mine) > 0 || res.Outcome != swap.SameRun {
			w.fail("I3", "%s reported %s (changed=false), its swaps: %v", a, res.Outcome, mine)
			return "violation"
		}
		var took *histEntry
		for i, h := range w.truth(as.Partition).hist {
			if h.runID == as.RunID && h.gen == res.RunGeneration {
				took = &w.truth(as.Partition).hist[i]
			}
		}
		if took == nil {
			w.fail("I4", "%s reported same-run naming %q, which run %q never committed", a, res.RunGeneration, as.RunID)
			return "violation"
		}
		w.ackedAppends[as.RunID] = res.RunGeneration
		return "same-run (changed=false)"
	default:
		return w.failedReport(a, mine, err)
	}
}

// observeAppend checks an append's swap as the store applies it
// (I9-append, exactly once): the new generation's rows are exactly the
// rows of the generation it replaces plus the appender's input, and the
// replaced generation held none of the run's rows. The lock is held.
func (w *World) observeAppend(part string, prev *histEntry, m *manifest.Manifest) {
	w.checks++
	as, ok := w.appendIn[w.cur]
	if !ok {
		w.fail("I9-append", "%s swapped in an append %s but is no appender", w.curName(), m.Generation)
		return
	}
	w.observeRows("I9-append", "appended to", "append", "a duplicate or a loss", part, prev, m, func(parent []Row) ([]Row, string) {
		for _, r := range parent {
			if r.Run == as.RunID {
				return nil, fmt.Sprintf("appended run %q to %s, which already holds its rows: a duplicate", as.RunID, prev.gen)
			}
		}
		return append(slices.Clone(parent), as.Rows...), ""
	})
}

// checkAppends checks, at the end of a run, every acknowledged append
// (I9-append): the generation that took the run's rows holds them exactly
// once, and so does the current generation when only appends were
// swapped in since (a replace or a rollback takes them away with it).
func (w *World) checkAppends() {
	for run, gen := range w.ackedAppends {
		var part string
		for _, as := range w.cfg.Appenders {
			if as.RunID == run {
				part = as.Partition
			}
		}
		want := 0
		for _, as := range w.cfg.Appenders {
			if as.RunID == run {
				want = len(as.Rows)
				break
			}
		}
		hist := w.truth(part).hist
		i := slices.IndexFunc(hist, func(h histEntry) bool { return h.gen == gen })
		if i < 0 {
			w.fail("I9-append", "run %q was acknowledged in %s, which never was current", run, gen)
			continue
		}
		onlyAppends := true
		for _, h := range hist[i+1:] {
			onlyAppends = onlyAppends && w.appendIn[h.actor].RunID != ""
		}
		gens := []string{gen}
		if onlyAppends && len(hist) > i+1 {
			gens = append(gens, hist[len(hist)-1].gen)
		}
		for _, g := range gens {
			rows, err := w.rowsOf(part, g)
			if err != nil {
				continue // collected since (GC keeps what is current)
			}
			n := 0
			for _, r := range rows {
				if r.Run == run {
					n++
				}
			}
			w.checks++
			if n != want {
				w.fail("I9-append", "run %q: %d of its %d rows in %s", run, n, want, g)
			}
		}
	}
}

// AppendScenario derives a run of appending actors (some of them retries
// of an earlier append of the same run, some racing them), replacing
// writers, rollbacks, GC and readers from a seed, with faults (lost
// replies among them) and kills.
func AppendScenario(seed uint64) Config {
	r := rand.New(rand.NewPCG(seed, 0xa99e7d))
	c := Config{
		Seed:         seed,
		Focus:        "append",
		FaultRate:    0.05 + 0.2*r.Float64(),
		KillRate:     0.03 * r.Float64(),
		MaxSteps:     6000,
		PageSize:     []int{2, 5, 1000}[r.IntN(3)],
		StepTime:     400 * time.Millisecond,
		MaxDelay:     3 * time.Second,
		GracePeriod:  6 * time.Second,
		MaxElapsed:   3 * time.Second,
		CommitWindow: 5 * time.Second,
		StallTimeout: 30 * time.Second,
		StrictRunIDs: true,
	}
	c.GC = gc.Options{Keep: []int{-1, 1, 2}[r.IntN(3)], MinAge: 7 * time.Second, OrphanAge: c.GracePeriod,
		CommitWindow: c.CommitWindow, Concurrency: 1, MaxAttempts: 4}
	c.Partitions = []string{"dt=2026-11-29"}
	part := c.Partitions[0]
	if r.IntN(3) == 0 {
		c.Writers = append(c.Writers, WriterSpec{
			ActorSpec: ActorSpec{Partition: part, Start: r.IntN(120)},
			RunID:     "replace-1", Policy: swap.Policy(r.IntN(2)), Facade: true, Content: 0, Files: 1,
		})
	}
	for k := range 3 + r.IntN(5) {
		as := AppendSpec{ActorSpec: ActorSpec{Partition: part, Start: r.IntN(150)}, RunID: fmt.Sprintf("append-%d", k+1)}
		for i := range 1 + r.IntN(3) {
			as.Rows = append(as.Rows, Row{ID: int64(1000*(k+1) + i), Run: as.RunID, Value: int64(i)})
		}
		switch {
		case k > 0 && r.IntN(3) == 0:
			// An orchestrator's retry of an earlier append of the same run.
			prev := c.Appenders[k-1]
			as.After, as.Start, as.RunID, as.Rows = k, 0, prev.RunID, prev.Rows
		case k > 0 && r.IntN(4) == 0:
			// A second attempt of a run racing the first (a zombie).
			prev := c.Appenders[k-1]
			as.RunID, as.Rows, as.Start = prev.RunID, prev.Rows, prev.Start+r.IntN(5)
		}
		c.Appenders = append(c.Appenders, as)
	}
	for range r.IntN(2) {
		c.Rollbacks = append(c.Rollbacks, ActorSpec{Partition: part, Start: 40 + r.IntN(200)})
	}
	c.GCs = append(c.GCs, GCSpec{Start: r.IntN(60), Rounds: 3 + r.IntN(5), Pause: 5 + r.IntN(20)})
	for range 1 + r.IntN(2) {
		c.Readers = append(c.Readers, ReaderSpec{ActorSpec: ActorSpec{Partition: part, Start: r.IntN(150)}, Reads: 2 + r.IntN(3)})
	}
	// The Iceberg view, from a stream of its own (the seeds' actors stay
	// as they were): half the seeds publish after most appends (append
	// manifests, their merging and folding: lakehouse appends.go) and
	// reconcile.
	ice := rand.New(rand.NewPCG(seed, 0xa99e1ce))
	if ice.IntN(2) == 0 {
		c.MetadataMinAge = time.Duration(15+ice.IntN(20)) * time.Second
		c.PublishAppends = map[int]bool{}
		for k := range c.Appenders {
			c.PublishAppends[k+1] = ice.IntN(5) != 0
		}
		for range ice.IntN(3) {
			c.Reconcilers = append(c.Reconcilers, GCSpec{Start: ice.IntN(200), Rounds: 1 + ice.IntN(4), Pause: 10 + ice.IntN(40)})
		}
	}
	return c
}

// referencedEver reports whether a manifest of part that was ever current
// with data generation dataGen lists key. Appends share one data
// generation (the root): an append that never landed deletes its own
// files under the root's prefix, which no manifest ever listed; that is
// no loss (I5). A manifest that cannot be read counts as listing it.
func (w *World) referencedEver(part, dataGen, key string) bool {
	for _, h := range w.truth(part).hist {
		if h.dataGen != dataGen {
			continue
		}
		mo, ok := w.manifestObj(part, h.gen)
		if !ok {
			return true
		}
		m, err := w.decodeManifest(mo.data)
		if err != nil {
			return true
		}
		prefix := layout.DataPrefixOf(m)
		for _, f := range m.Files {
			if prefix+f.Path == key {
				return true
			}
		}
	}
	return false
}
