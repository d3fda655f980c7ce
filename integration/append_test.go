package integration

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// TestCrashAppend kills real `pswap commit --append` processes with
// SIGKILL at random moments, several runs racing at once, each with a
// second attempt of the same run id racing it, then re-runs every run
// until it exits 0 (a re-run may be killed too). Reading the partition's
// data back, every run's rows are there exactly once; a last re-run of
// every run is a same-run no-op naming the generation that took its rows.
// PSWAP_STRESS=1 runs ten times as many runs.
func TestCrashAppend(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *tableEnv) {
		rng := newRand(t)
		dir := t.TempDir()
		part := "dt=2026-11-29"
		runs := scale(12, 120)
		want := map[string]int{}
		inputs := make([]string, runs)
		for i := range runs {
			id := fmt.Sprintf("app-%03d", i)
			n := 3000 + 37*i
			inputs[i] = writeParquetInput(t, dir, id+".parquet", n, 160, id+":")
			want[id] = n
		}
		args := func(i int) []string {
			return []string{"commit", "--table", e.url, "--partition", part, "--append", "--run-id", fmt.Sprintf("app-%03d", i), "--json", inputs[i]}
		}
		finish := func(i int) {
			for try := 0; ; try++ {
				r := e.runCLI(t, args(i)...)
				totals.reruns.Add(1)
				if r.code == 0 {
					c := r.commit(t)
					if c.Outcome != "committed" && c.Outcome != "superseded" && c.Outcome != "same-run" {
						t.Fatalf("run %d: outcome %q", i, c.Outcome)
					}
					return
				}
				if try > 5 {
					t.Fatalf("run %d: exit %d after %d tries: %s", i, r.code, try+1, r.stderr)
				}
			}
		}
		// Calibrate: the whole of one run.
		r0 := e.runCLI(t, args(0)...)
		if r0.code != 0 {
			t.Fatalf("first append: exit %d: %s", r0.code, r0.stderr)
		}
		total := r0.elapsed
		var kills, procs int
		var mu sync.Mutex
		for b := 1; b < runs; b += 3 {
			var wg sync.WaitGroup
			for i := b; i < min(b+3, runs); i++ {
				for range 2 { // two attempts of the run at once
					procs++
					d := time.Duration(rng.Int64N(int64(total) * 3 / 2))
					kill := rng.IntN(3) != 0
					p := startProc(t, e.cli(t, args(i)...))
					wg.Go(func() {
						if kill {
							time.AfterFunc(d, p.kill)
						}
						res := p.wait()
						if res.code == -1 {
							mu.Lock()
							kills++
							mu.Unlock()
							totals.kills.Add(1)
						}
					})
				}
			}
			wg.Wait()
			totals.races.Add(int64(min(3, runs-b)) * 2)
			// Re-run every run of the batch: sometimes killed again first.
			for i := b; i < min(b+3, runs); i++ {
				if rng.IntN(3) == 0 {
					p := startProc(t, e.cli(t, args(i)...))
					time.AfterFunc(time.Duration(rng.Int64N(int64(total))), p.kill)
					if p.wait().code == -1 {
						kills++
						totals.kills.Add(1)
					}
				}
				finish(i)
			}
		}
		got := rowsByRun(t, e.st, part)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("rows per run after %d kills: got %v, want %v", kills, got, want)
		}
		// Every run again: a no-op naming its generation.
		snap, err := swap.Resolve(ctx, e.st, part)
		if err != nil {
			t.Fatal(err)
		}
		for i := range runs {
			r := e.runCLI(t, args(i)...)
			if r.code != 0 {
				t.Fatalf("final re-run %d: exit %d: %s", i, r.code, r.stderr)
			}
			c := r.commit(t)
			if c.Outcome != "same-run" || c.Changed || c.Generation != snap.Pointer.Generation {
				t.Fatalf("final re-run %d: %+v", i, c)
			}
		}
		if got := rowsByRun(t, e.st, part); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("rows per run after the re-runs: got %v, want %v", got, want)
		}
		if snap.Pointer.Seq > int64(runs) {
			// Each run swapped at most once (a same-run no-op never swaps).
			t.Fatalf("%d swaps for %d runs", snap.Pointer.Seq, runs)
		}
		t.Logf("%s: %d runs, %d processes racing (2 attempts a run, 3 runs at once), %d SIGKILLs, every run's rows exactly once (%d files, seq %d)",
			e.kind, runs, procs, kills, len(snap.Files), snap.Pointer.Seq)
	})
}

// rowsByRun reads the partition's current files back and counts the rows
// of each run (a row's note starts with its run id and a colon).
func rowsByRun(t testing.TB, st store.Store, part string) map[string]int {
	t.Helper()
	snap, err := swap.Resolve(ctx, st, part)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range snap.Files {
		data, _, err := store.ReadAll(ctx, st, f.Key)
		if err != nil {
			t.Fatalf("%s: %v", f.Key, err)
		}
		rows, err := parquet.Read[saleRow](bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", f.Key, err)
		}
		for _, r := range rows {
			id, _, _ := strings.Cut(r.Note, ":")
			out[id]++
		}
	}
	return out
}
