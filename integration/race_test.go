package integration

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/swap"
)

// TestRaceSamePartition starts many `pswap commit` processes on one
// partition at once, each its own run with its own data, under the default
// fail policy. Every process exits 0 (it won: its generation is in the
// history) or 3 (fenced out: its run is nowhere); the history grows by
// exactly the winners, once each, as one chain.
func TestRaceSamePartition(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *tableEnv) {
		const part = "dt=2026-11-29"
		procs, rounds := scale(8, 16), scale(3, 25)
		dir := t.TempDir()
		if r := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--run-id", "init", writeCSVInput(t, dir, "init.csv", 2, "init")); r.code != 0 {
			t.Fatalf("init: %d %s", r.code, r.stderr)
		}
		before := e.check(t, checkOpts{expect: []string{part}})[part]
		var winners, losers int
		for round := range rounds {
			var ps []*proc
			var runs []string
			for i := range procs {
				run := fmt.Sprintf("race-%02d-%02d", round, i)
				runs = append(runs, run)
				ps = append(ps, startProc(t, e.cli(t, "commit", "--table", e.url, "--partition", part, "--run-id", run, "--json",
					writeCSVInput(t, dir, run+".csv", 1+i, run))))
			}
			won := map[string]string{} // run -> generation
			for i, p := range ps {
				r := p.wait()
				totals.races.Add(1)
				switch r.code {
				case 0:
					out := r.commit(t)
					if !out.Changed || out.Outcome != string(swap.Committed) && out.Outcome != string(swap.Superseded) {
						t.Errorf("run %s: exit 0 but %+v", runs[i], out)
					}
					won[runs[i]] = out.Generation
					if out.Outcome == string(swap.Superseded) {
						won[runs[i]] = out.Staged
					}
				case 3:
					losers++
					if !strings.Contains(r.stderr, "conflict") {
						t.Errorf("run %s: exit 3 without saying conflict: %s", runs[i], r.stderr)
					}
				default:
					t.Errorf("run %s: exit %d: %s", runs[i], r.code, r.stderr)
				}
			}
			winners += len(won)
			after := e.check(t, checkOpts{expect: []string{part}})[part]
			if after == nil {
				continue
			}
			// The history grew by exactly the winners.
			var added []swap.Entry
			for _, h := range after.hist {
				if h.Generation == before.gen() {
					break
				}
				added = append(added, h)
			}
			if len(added) != len(won) || len(won) == 0 {
				violation(t, "I3", "round %d: %d winners but the history grew by %d", round, len(won), len(added))
			}
			for _, h := range added {
				if g, ok := won[h.RunID]; !ok || g != h.Generation {
					violation(t, "I3", "round %d: generation %s of run %q in the history, not a winner's", round, h.Generation, h.RunID)
				}
			}
			before = after
		}
		e.check(t, checkOpts{expect: []string{part}, duck: true})
		t.Logf("%s: %d rounds of %d racing processes: %d winners (exit 0), %d fenced out (exit 3), history = winners exactly",
			e.kind, rounds, procs, winners, losers)
	})
}

// TestRaceManyPartitions commits many partitions at once from separate
// processes: commits to different partitions never contend, so every one
// succeeds.
func TestRaceManyPartitions(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *tableEnv) {
		parts, rounds := scale(10, 24), scale(2, 6)
		dir := t.TempDir()
		var expect []string
		for i := range parts {
			expect = append(expect, fmt.Sprintf("dt=2026-12-%02d", i+1))
		}
		for round := range rounds {
			var ps []*proc
			for i, part := range expect {
				run := fmt.Sprintf("many-%d-%02d", round, i)
				ps = append(ps, startProc(t, e.cli(t, "commit", "--table", e.url, "--partition", part, "--run-id", run, "--json",
					writeCSVInput(t, dir, run+".csv", 1+i, run))))
			}
			for i, p := range ps {
				r := p.wait()
				totals.races.Add(1)
				if r.code != 0 {
					t.Errorf("%s: exit %d: %s", expect[i], r.code, r.stderr)
				} else if out := r.commit(t); !out.Changed || out.Seq != int64(round+1) {
					t.Errorf("%s: %+v", expect[i], out)
				}
			}
		}
		state := e.check(t, checkOpts{expect: expect, duck: true})
		for _, part := range expect {
			if ps := state[part]; ps != nil && len(ps.hist) != rounds {
				violation(t, "I3", "%s: %d generations, want %d", part, len(ps.hist), rounds)
			}
		}
		t.Logf("%s: %d rounds of %d partitions committed at once by separate processes, all succeeded", e.kind, rounds, parts)
	})
}

// TestRaceCommitGCRollback runs writers (pswap commit, last writer wins),
// a rollback process and garbage collections (keeping one retired
// generation, no reader window) on one partition at the same time, while a
// watcher keeps checking that the current generation is whole. GC must
// never delete anything the current generation (or a rollback about to
// become current) needs.
func TestRaceCommitGCRollback(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *tableEnv) {
		const part = "dt=2026-11-29"
		dir := t.TempDir()
		rng := newRand(t)
		iters := scale(6, 40)
		for i := range 3 {
			if r := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--run-id", fmt.Sprintf("seed-%d", i), writeCSVInput(t, dir, fmt.Sprintf("seed-%d.csv", i), 2+i, "seed")); r.code != 0 {
				t.Fatalf("seed: %d %s", r.code, r.stderr)
			}
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		count := func(k string) {
			mu.Lock()
			outcomes[k]++
			mu.Unlock()
			totals.races.Add(1)
		}
		stop := make(chan struct{})
		var watch sync.WaitGroup
		var watched atomic.Int64
		watch.Go(func() { watched.Store(int64(e.watchCurrent(t, part, stop))) })

		var wg sync.WaitGroup
		for w := range 2 {
			wg.Go(func() {
				for i := range iters {
					run := fmt.Sprintf("w%d-%02d", w, i)
					r := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--run-id", run, "--on-conflict", "overwrite",
						"--json", writeCSVInput(t, dir, run+".csv", 1+i%5, run))
					switch r.code {
					case 0:
						count("commit ok")
					case 3:
						count("commit conflict")
					default:
						t.Errorf("commit %s: exit %d: %s", run, r.code, r.stderr)
					}
				}
			})
		}
		wg.Go(func() {
			for i := range iters {
				h, err := swap.History(ctx, e.st, part, 0)
				if err != nil {
					t.Errorf("history: %v", err)
					return
				}
				var retired []string
				for _, x := range h[1:] {
					if !x.Collected {
						retired = append(retired, x.Generation)
					}
				}
				if len(retired) == 0 {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				to := retired[rand.IntN(len(retired))]
				r := e.runCLI(t, "rollback", "--table", e.url, "--partition", part, "--to", to, "--run-id", fmt.Sprintf("rb-%02d", i), "--json")
				switch {
				case r.code == 0:
					count("rollback ok")
				case r.code == 3:
					count("rollback conflict")
				case r.code == 1 && strings.Contains(r.stderr, "generation not found"):
					count("rollback to a collected generation refused")
				default:
					t.Errorf("rollback to %s: exit %d: %s", to, r.code, r.stderr)
				}
			}
		})
		wg.Go(func() {
			for range iters {
				// Default orphan age (writers are running); retired
				// generations beyond one are collected at once.
				r := startProc(t, e.gcCmd(t, 0)).wait()
				switch {
				case r.code == 0:
					count("gc ok")
				case r.code == 1 && strings.Contains(r.stderr, "kept changing"):
					count("gc busy")
				default:
					t.Errorf("gc: exit %d: %s", r.code, r.stderr)
				}
				time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
			}
		})
		wg.Wait()
		close(stop)
		watch.Wait()
		e.check(t, checkOpts{expect: []string{part}, duck: true})
		t.Logf("%s: commits, rollbacks and GC racing: %v; the watcher checked the current generation %d times", e.kind, outcomes, watched.Load())
	})
}

// watchCurrent checks, until stop, that the current generation of part is
// whole: every file its manifest names is listed with its size. A file
// missing while the pointer still names the generation breaks I2.
func (e *tableEnv) watchCurrent(t *testing.T, part string, stop chan struct{}) int {
	n := 0
	for {
		select {
		case <-stop:
			return n
		default:
		}
		snap, err := swap.Resolve(ctx, e.st, part)
		if err != nil {
			violation(t, "I1", "%s: %v", part, err)
			return n
		}
		have := map[string]int64{}
		for a, err := range e.st.List(ctx, layout.DataPrefix(part, snap.Manifest.DataGen())) {
			if err != nil {
				t.Errorf("list: %v", err)
				return n
			}
			have[a.Key] = a.Size
		}
		n++
		for _, f := range snap.Files {
			if size, ok := have[f.Key]; ok && size == f.Size {
				continue
			}
			// Still current? Then a reader of the current generation
			// would find the file missing.
			if again, err := swap.Resolve(ctx, e.st, part); err == nil && again.Pointer.Generation == snap.Pointer.Generation {
				violation(t, "I2", "%s: current generation %s (rollback of %q) lost file %s", part, snap.Pointer.Generation, snap.Manifest.RollbackOf, f.Path)
				return n
			}
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
}
