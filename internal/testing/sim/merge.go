package sim

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/swap"
)

// MergeSpec is one merging actor: pswap.Table.Merge of Rows into one
// partition, keyed by id. A row whose Run is MergeDelete deletes its key.
type MergeSpec struct {
	ActorSpec
	RunID string
	Rows  []Row
}

// runDeclared declares the rows' run column (the merge's delete marker).
var runDeclared = func() pswap.ColumnTypes {
	c, err := pswap.ParseColumnTypes("run=string")
	if err != nil {
		panic(err)
	}
	return c
}()

// MergeDelete marks a merger's row that deletes its key (--delete-when
// run=DELETE).
const MergeDelete = "DELETE"

// mergerBody merges the spec's rows, written as a Parquet file the way the
// facade's writers write theirs (parquet-go from Row), into its partition.
func (w *World) mergerBody(ms MergeSpec) func(context.Context, *actor) string {
	return func(ctx context.Context, a *actor) string {
		dir, err := os.MkdirTemp("", "pswap-sim-merge-*")
		if err != nil {
			return "failed: " + err.Error()
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "in.parquet")
		if err := parquet.WriteFile(path, ms.Rows); err != nil {
			return "failed: " + err.Error()
		}
		w.mu.Lock()
		w.mergeIn[a] = ms.Rows
		w.mu.Unlock()
		// The marker column is one of the rows' own columns (Row.Run): it
		// is declared, so that a merge that creates the table keeps it.
		res, err := pswap.NewTable(w.st).Merge(ctx, []string{path}, pswap.MergeOptions{
			Keys: []string{"id"}, DeleteWhen: "run=" + MergeDelete, Partition: ms.Partition, Table: pswap.TableOptions{Declare: runDeclared},
			Commit: w.commitOptions(a, ms.RunID, swap.Fail), Parallel: 1, MaxRebases: 3, TempDir: dir,
		})
		return w.report(a, func() string { return w.mergeReport(a, ms.Partition, res, err) })
	}
}

// mergeReport checks what a merger reported (I3, I4 as commitReport, but a
// merge has attempts of its own: after an attempt whose outcome was
// unknown, the next one finds it landed, same-run): at most one swap; a
// change names the generation its swap made current; a no-op after its
// own swap only as same-run or identical; a failure (other than an unknown
// outcome) swapped nothing. The lock is held.
func (w *World) mergeReport(a *actor, part string, res pswap.MergeResult, err error) string {
	mine := w.ownSwaps(a, part, "merge")
	if len(res.Partitions) != 1 {
		if len(mine) > 0 {
			w.fail("I3", "%s failed before merging (%v) but its swap to %s landed", a, err, mine[0].gen)
		}
		return "failed: " + errSummary(err)
	}
	p := res.Partitions[0]
	switch {
	case p.Err == nil && p.Result.Changed:
		if len(mine) == 0 || mine[0].gen != p.Result.Generation {
			w.fail("I3", "%s reported %s of %s, its swaps: %v", a, p.Result.Outcome, p.Result.Generation, mine)
			return "violation"
		}
		return fmt.Sprintf("merged: %s %s (%d rebases)", p.Result.Outcome, p.Result.Generation, p.Rebases)
	case p.Err == nil:
		if len(mine) > 0 && p.Result.Outcome != swap.SameRun && p.Result.Outcome != swap.Identical {
			w.fail("I3", "%s reported %s (changed=false) but its swap to %s landed at step %d", a, p.Result.Outcome, mine[0].gen, mine[0].step)
		}
		if p.Result.Outcome == swap.SameRun {
			ok := false
			for _, h := range w.truth(part).hist {
				ok = ok || h.runID == p.Result.RunID
			}
			if !ok {
				w.fail("I4", "%s reported same-run, but run %q never committed", a, p.Result.RunID)
			}
		}
		return fmt.Sprintf("%s (changed=false, %d rebases)", p.Result.Outcome, p.Rebases)
	default:
		return w.failedReport(a, mine, p.Err)
	}
}

// observeMerge checks a merge's swap as the store applies it (I9-merge, no
// lost update): the new generation's rows are exactly the rows of the
// generation it replaces whose id the merger's input does not hold, plus
// the input's rows that do not delete their key. The parent is current
// until this swap, so its files are there (I2). The lock is held.
func (w *World) observeMerge(part string, prev *histEntry, m *manifest.Manifest) {
	w.checks++
	in, ok := w.mergeIn[w.cur]
	if !ok {
		w.fail("I9-merge", "%s swapped in a merge %s but is no merger", w.curName(), m.Generation)
		return
	}
	w.observeRows("I9-merge", "merged into", "merge", "a lost update", part, prev, m, func(parent []Row) ([]Row, string) {
		keys := map[int64]bool{}
		for _, r := range in {
			keys[r.ID] = true
		}
		var want []Row
		for _, r := range parent {
			if !keys[r.ID] {
				want = append(want, r)
			}
		}
		for _, r := range in {
			if r.Run != MergeDelete {
				want = append(want, r)
			}
		}
		return want, ""
	})
}

func sortRows(rs []Row) {
	slices.SortFunc(rs, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Run, b.Run), cmp.Compare(a.Value, b.Value))
	})
}

// rowsOf reads a generation's rows from the store's objects (no request),
// with parquet-go, which shares no code with the merge's Arrow reader.
func (w *World) rowsOf(part, gen string) ([]Row, error) {
	mo, ok := w.manifestObj(part, gen)
	if !ok {
		return nil, fmt.Errorf("no manifest")
	}
	m, err := w.decodeManifest(mo.data)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, f := range m.Files {
		o, ok := w.objs[layout.DataPrefixOf(m)+f.Path]
		if !ok {
			return nil, fmt.Errorf("file %s is missing", f.Path)
		}
		rs, err := parquet.Read[Row](bytes.NewReader(o.data), int64(len(o.data)))
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Path, err)
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// MergeScenario derives a run of replacing writers (through the facade:
// Parquet), merging actors (some of them retries of a killed or failed
// merge of the same run), rollbacks, GC and readers from a seed, with
// faults and kills.
func MergeScenario(seed uint64) Config {
	r := rand.New(rand.NewPCG(seed, 0x3e26e))
	c := Config{
		Seed:         seed,
		Focus:        "merge",
		FaultRate:    0.05 + 0.2*r.Float64(),
		KillRate:     0.03 * r.Float64(),
		MaxSteps:     4000,
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
	if r.IntN(3) == 0 {
		c.Partitions = append(c.Partitions, "dt=2026-11-30")
	}
	part := func() string { return c.Partitions[r.IntN(len(c.Partitions))] }
	for i := range 1 + r.IntN(3) {
		c.Writers = append(c.Writers, WriterSpec{
			ActorSpec: ActorSpec{Partition: part(), Start: r.IntN(80)},
			RunID:     fmt.Sprintf("run-%d", i+1), Policy: swap.Policy(r.IntN(2)), Facade: true,
			Content: i, Files: 1 + r.IntN(2),
		})
	}
	for k := range 3 + r.IntN(4) {
		ms := MergeSpec{ActorSpec: ActorSpec{Partition: part(), Start: r.IntN(150)}, RunID: fmt.Sprintf("merge-%d", k+1)}
		// Keys the writers' rows have (0..2, 100..103), keys of their own,
		// keys other mergers touch too, and a delete.
		for _, id := range []int64{int64(r.IntN(3)), 100 + int64(r.IntN(4)), int64(1000 + r.IntN(6)), int64(2000 + 10*k)} {
			if slices.ContainsFunc(ms.Rows, func(x Row) bool { return x.ID == id }) {
				continue
			}
			ms.Rows = append(ms.Rows, Row{ID: id, Run: fmt.Sprintf("merge-%d", k+1), Value: int64(k*1000) + id})
		}
		if r.IntN(2) == 0 {
			ms.Rows = append(ms.Rows, Row{ID: int64(r.IntN(3)) + 200, Run: MergeDelete})
		}
		// An orchestrator's retry of an earlier merge of the same run.
		if k > 0 && r.IntN(3) == 0 {
			prev := c.Mergers[k-1]
			ms.After, ms.Start, ms.RunID, ms.Rows, ms.Partition = k, 0, prev.RunID, prev.Rows, prev.Partition
		}
		c.Mergers = append(c.Mergers, ms)
	}
	for range r.IntN(2) {
		c.Rollbacks = append(c.Rollbacks, ActorSpec{Partition: part(), Start: 40 + r.IntN(200)})
	}
	c.GCs = append(c.GCs, GCSpec{Start: r.IntN(60), Rounds: 3 + r.IntN(5), Pause: 5 + r.IntN(20)})
	for range 1 + r.IntN(2) {
		c.Readers = append(c.Readers, ReaderSpec{ActorSpec: ActorSpec{Partition: part(), Start: r.IntN(150)}, Reads: 2 + r.IntN(3)})
	}
	return c
}
