package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/swap"
)

const (
	parallelRows    = 2000 // rows per write in the parallel runs
	parallelCommits = 2    // sequential commits per writer on distinct partitions
)

// parallelRun is the outcome of many writers writing at once.
type parallelRun struct {
	wall      time.Duration
	committed int // commits that swapped in a new generation
	conflicts int // failed with ErrConflict
	failed    int // other errors
	stats     swap.Stats
	requests  int
}

// runWriters starts writers goroutines. Writer i writes to part(i)
// commits times, each time a new generation of parallelRows rows; when
// barrier is set, every writer first begins (reads the pointer) and they
// all write and commit together, for the most contention.
func runWriters(ctx context.Context, t *pswap.Table, e *s3env, writers, commits int, part func(i int) string, policy swap.Policy, barrier bool) parallelRun {
	var (
		mu    sync.Mutex
		res   parallelRun
		wg    sync.WaitGroup
		ready sync.WaitGroup
		gate  = make(chan struct{})
	)
	ready.Add(writers)
	before := e.http.Total()
	start := time.Now()
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := Sales(make([]Sale, parallelRows), int64(i)*parallelRows)
			for c := range commits {
				var st swap.Stats
				err := func() error {
					p, err := t.Partition(part(i))
					if err != nil {
						return err
					}
					w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{OnConflict: policy}})
					if barrier && c == 0 {
						ready.Done()
						<-gate
					}
					if err != nil {
						return err
					}
					batch[0].ID = int64(c) // each generation differs
					if err := pswap.Write(w, batch...); err != nil {
						w.Abort(ctx)
						return err
					}
					res, err := w.Commit(ctx)
					st = res.Stats // also when the commit failed
					if err == nil && !res.Changed {
						err = fmt.Errorf("commit %s: no change (%s)", part(i), res.Outcome)
					}
					return err
				}()
				mu.Lock()
				switch {
				case err == nil:
					res.committed++
				case errors.Is(err, pswap.ErrConflict):
					res.conflicts++
				default:
					res.failed++
					if res.failed == 1 {
						fmt.Println("parallel writer error:", err)
					}
				}
				res.stats.Conflicts += st.Conflicts
				res.stats.Retries += st.Retries
				res.stats.Rebases += st.Rebases
				res.stats.ReadBacks += st.ReadBacks
				mu.Unlock()
			}
		}()
	}
	if barrier {
		ready.Wait()
		close(gate)
	}
	wg.Wait()
	res.wall = time.Since(start)
	res.requests = e.http.Total() - before
	return res
}

// parallel measures many writers at once: on distinct partitions (no
// writer should ever see a conflict or a retry) and on one partition.
func (r *reporter) parallel() {
	ctx, e := r.ctx, r.e
	r.printf("\n## 6. Parallel writers\n\nEach write is %d rows (one small Parquet file) committed as a new generation.\n", parallelRows)
	// The one-partition runs take tens of seconds (writers back off while
	// they lose): at most 3 rounds keep the report short.
	rounds := min(r.rounds, 3)
	t, err := e.table(ctx, "parallel")
	if err != nil {
		r.t.Fatal(err)
	}
	tb := &Table{Header: []string{"writers", "partitions", "policy", "commits/s", "committed", "refused: ErrConflict", "lost swaps", "rebases", "retries", "other errors", "requests/commit"}}
	add := func(writers, partitions, commits int, policy string, runs []parallelRun) {
		var cps []float64
		var sum parallelRun
		for _, x := range runs {
			cps = append(cps, float64(x.committed)/x.wall.Seconds())
			sum.committed += x.committed
			sum.conflicts += x.conflicts
			sum.failed += x.failed
			sum.stats.Conflicts += x.stats.Conflicts
			sum.stats.Rebases += x.stats.Rebases
			sum.stats.Retries += x.stats.Retries
			sum.requests += x.requests
		}
		if err := checkParallel(writers, partitions, commits, policy, runs); err != nil {
			r.t.Fatalf("parallel writers: %v", err)
		}
		perCommit := "n/a"
		if sum.committed > 0 {
			perCommit = fmt.Sprintf("%.2f", float64(sum.requests)/float64(sum.committed))
		}
		tb.Add(fmt.Sprint(writers), fmt.Sprint(partitions), policy, Summarize(cps).Format(1),
			fmt.Sprintf("%d of %d", sum.committed, writers*commits*len(runs)), fmt.Sprint(sum.conflicts),
			fmt.Sprint(sum.stats.Conflicts), fmt.Sprint(sum.stats.Rebases),
			fmt.Sprint(sum.stats.Retries), fmt.Sprint(sum.failed), perCommit)
	}
	for _, w := range []int{1, 8, 64} {
		var runs []parallelRun
		for round := range rounds {
			runs = append(runs, runWriters(ctx, t, e, w, parallelCommits, func(i int) string {
				return fmt.Sprintf("dt=2026-11-29/scale=%d/round=%d/w=%d", w, round, i)
			}, swap.Fail, false))
		}
		add(w, w, parallelCommits, "fail", runs)
	}
	// A table's partition layout is fixed by its first commit
	// (dt/scale/round/w above), so the one-partition runs, keyed
	// dt/shared/round, use a table of their own.
	shared, err := e.table(ctx, "parallel-shared")
	if err != nil {
		r.t.Fatal(err)
	}
	for _, policy := range []swap.Policy{swap.Overwrite, swap.Fail} {
		var runs []parallelRun
		for round := range rounds {
			runs = append(runs, runWriters(ctx, shared, e, 32, 1, func(int) string {
				return fmt.Sprintf("dt=2026-11-29/shared=%s/round=%d", policy, round)
			}, policy, true))
		}
		add(32, 1, 1, policy.String(), runs)
	}
	r.table(tb)
	r.printf("Totals over %d rounds; commits/s is median (min–max) over rounds. Writers on distinct partitions commit %d times each. "+
		"On one partition all 32 writers read the pointer first and then write and commit together: "+
		"under `fail` one wins and the rest are fenced out (ErrConflict, nothing changed); under `overwrite` they rebase on the winner and retry, "+
		"and give up with ErrConflict after swap.Options.MaxAttempts (default 10) lost swaps. "+
		"Lost swaps counts pointer swaps that lost to another writer; retries counts requests the commit repeated after a transient failure; "+
		"requests/commit counts every request on the wire (data, clean-up of refused attempts included) per successful commit.\n", rounds, parallelCommits)
}

// checkParallel refuses runs whose outcome is not the one the setup
// guarantees, so that a broken run fails the report instead of printing a
// table of failures: no writer may fail with anything but ErrConflict;
// writers on distinct partitions never conflict; on one partition under
// `fail` exactly one writer of each round wins, under `overwrite` at
// least one.
func checkParallel(writers, partitions, commits int, policy string, runs []parallelRun) error {
	for round, x := range runs {
		want := writers * commits
		switch {
		case x.failed > 0:
			return fmt.Errorf("%d writers, %d partitions, %s, round %d: %d of %d commits failed (the first error is printed above)",
				writers, partitions, policy, round, x.failed, want)
		case partitions == writers:
			if x.committed != want {
				return fmt.Errorf("%d writers on distinct partitions, round %d: %d of %d committed, %d refused",
					writers, round, x.committed, want, x.conflicts)
			}
		case partitions == 1 && policy == swap.Fail.String() && x.committed != 1:
			return fmt.Errorf("%d writers on one partition under fail, round %d: %d committed, want exactly 1", writers, round, x.committed)
		case partitions == 1 && x.committed < 1:
			return fmt.Errorf("%d writers on one partition under %s, round %d: none committed", writers, policy, round)
		}
	}
	return nil
}
