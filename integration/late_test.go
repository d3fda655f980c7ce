package integration

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/swap"
)

// TestLatePointerPutOfAKilledTask: a task is killed while its pointer PUT
// is on the wire, and the store applies that PUT later, after the task is
// dead and another process (the scheduler's retry of the same run, or
// another run) has begun. This is what the conditional PUT is for: the late
// PUT either lands while the pointer it was based on is still current (and
// is then a real commit, of a run that never heard of it), or it is refused
// (412), and it can never overwrite a newer commit. Each case holds the
// killed task's PUT in the proxy and lets it land at a chosen moment:
// before the second process's swap (after its Begin) or after it.
func TestLatePointerPutOfAKilledTask(t *testing.T) {
	t.Parallel()
	minioAndGCS(t, testLatePointerPutOfAKilledTask)
}

func testLatePointerPutOfAKilledTask(t *testing.T, e *tableEnv) {
	dir := t.TempDir()
	for i, tc := range []struct {
		name     string
		sameRun  bool // the second process re-runs the killed run
		landsMid bool // the late PUT lands between the second's Begin and its swap
	}{
		{"retry/lands-after-its-swap", true, false},
		{"retry/lands-before-its-swap", true, true},
		{"other-run/lands-after-its-swap", false, false},
		{"other-run/lands-before-its-swap", false, true},
	} {
		part := fmt.Sprintf("dt=2026-12-%02d", i+1)
		killedRun := fmt.Sprintf("late-%d", i)
		secondRun := killedRun
		if !tc.sameRun {
			secondRun = fmt.Sprintf("other-%d", i)
		}
		prev := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--run-id", fmt.Sprintf("base-%d", i), "--json",
			writeCSVInput(t, dir, fmt.Sprintf("base-%d.csv", i), 2, "base")).commit(t)

		// The first pointer PUT (the task to be killed) is held; so is the
		// second (the other process's) when the late PUT must land before
		// it. Each held PUT waits for its own release.
		held := [2]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}
		release := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		statuses := make(chan int, 2)
		var puts, holds atomic.Int32
		e.proxy.SetHold(func(faultproxy.Request) {
			n := holds.Add(1) - 1
			held[n] <- struct{}{}
			<-release[n]
		})
		e.proxy.SetOnApplied(func(_ faultproxy.Request, a faultproxy.Action, status int) {
			if a == faultproxy.Late {
				statuses <- status
			}
		})
		e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
			if r.IsPut() && strings.HasSuffix(r.Path, "/"+layout.PointerKey(part)) {
				if n := puts.Add(1); n == 1 || n == 2 && tc.landsMid {
					return faultproxy.Late
				}
			}
			return faultproxy.Pass
		})
		wait := func(ch chan struct{}, what string) {
			t.Helper()
			select {
			case <-ch:
			case <-time.After(time.Minute):
				t.Fatalf("%s: %s never came", tc.name, what)
			}
		}
		landed := func(want int, what string) {
			t.Helper()
			select {
			case got := <-statuses:
				if got == 200 && want == 412 {
					violation(t, "I3", "%s: %s was applied over a newer commit", tc.name, what)
					t.FailNow()
				}
				if got != want {
					t.Fatalf("%s: %s answered %d, want %d", tc.name, what, got, want)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s: %s never reached the store", tc.name, what)
			}
		}

		killed := startProc(t, e.cli(t, "commit", "--table", e.url, "--partition", part, "--run-id", killedRun, "--json",
			writeCSVInput(t, dir, fmt.Sprintf("killed-%d.csv", i), 3, "killed")))
		wait(held[0], "the killed task's pointer PUT")
		killed.kill()
		if r := killed.wait(); r.code != -1 {
			t.Fatalf("%s: the task to be killed ended by itself: %d %s", tc.name, r.code, r.stderr)
		}

		second := startProc(t, e.cli(t, "commit", "--table", e.url, "--partition", part, "--run-id", secondRun, "--json",
			writeCSVInput(t, dir, fmt.Sprintf("second-%d.csv", i), 4, "second")))
		var r cliResult
		if tc.landsMid {
			wait(held[1], "the second process's pointer PUT")
			close(release[0])
			landed(200, "the late PUT (its base is still current)")
			close(release[1])
			landed(412, "the second process's PUT")
			r = second.wait()
		} else {
			r = second.wait()
			close(release[0])
			landed(412, "the late PUT (its base was replaced)")
		}
		e.proxy.SetRule(nil)
		e.proxy.SetHold(nil)
		e.proxy.SetOnApplied(nil)
		if !e.proxy.WaitIdle(30 * time.Second) {
			t.Fatalf("%s: requests still in flight", tc.name)
		}
		totals.kills.Add(1)

		cur, err := swap.Resolve(ctx, e.st, part)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !tc.landsMid:
			// The late PUT was refused: the second process's commit stands.
			out := r.commit(t)
			if r.code != 0 || !out.Changed || cur.Pointer.Generation != out.Generation {
				violation(t, "I3", "%s: second process exit %d changed=%v %s, current %s of %q", tc.name, r.code, out.Changed, out.Generation, cur.Pointer.Generation, cur.Pointer.RunID)
			}
		case tc.sameRun:
			// The killed task's commit landed first: the re-run of its run
			// is the idempotent no-op, and its own generation is gone.
			out := r.commit(t)
			if r.code != 0 || out.Changed || cur.Pointer.RunID != killedRun || out.Generation != cur.Pointer.Generation {
				violation(t, "I4", "%s: re-run exit %d changed=%v %s, current %s of %q", tc.name, r.code, out.Changed, out.Generation, cur.Pointer.Generation, cur.Pointer.RunID)
			}
			if out.Staged == "" || out.Staged == cur.Pointer.Generation {
				t.Fatalf("%s: re-run's staged generation %q", tc.name, out.Staged)
			}
			if _, err := swap.ReadManifest(ctx, e.st, part, out.Staged); !errors.Is(err, swap.ErrGenerationNotFound) {
				t.Errorf("%s: the no-op re-run left its staged generation's manifest: %v", tc.name, err)
			}
			for _, o := range e.rawList(t) {
				if strings.Contains(o.key, "/gen/"+out.Staged+"/") {
					t.Errorf("%s: the no-op re-run left %s", tc.name, o.key)
				}
			}
		default:
			// Another run's commit landed first, from a dead task: for the
			// second process that is a conflict (exit 3), never an
			// overwrite; the killed run's re-run is then a no-op.
			if r.code != 3 || !strings.Contains(r.stderr, "conflict") || cur.Pointer.RunID != killedRun {
				violation(t, "I3", "%s: second process exit %d (%s), current %s of %q", tc.name, r.code, strings.TrimSpace(r.stderr), cur.Pointer.Generation, cur.Pointer.RunID)
			}
			rr := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--run-id", killedRun, "--json",
				writeCSVInput(t, dir, fmt.Sprintf("killed-%d.csv", i), 3, "killed"))
			if out := rr.commit(t); rr.code != 0 || out.Changed || out.Generation != cur.Pointer.Generation {
				violation(t, "I4", "%s: re-run of the killed run: exit %d changed=%v %s, current %s", tc.name, rr.code, out.Changed, out.Generation, cur.Pointer.Generation)
			}
		}
		state := e.check(t, checkOpts{expect: []string{part}, duck: true})
		ps := state[part]
		if ps == nil {
			t.Fatalf("%s: no state for %s", tc.name, part)
		}
		wantKilled := 0
		if tc.landsMid || tc.sameRun {
			wantKilled = 1 // landed, or the retry committed the run
		}
		if n := ps.runCount(killedRun); n != wantKilled {
			violation(t, "I4", "%s: run %s has %d generations in the history, want %d", tc.name, killedRun, n, wantKilled)
		}
		if !ps.inHistory(prev.Generation) {
			violation(t, "I3", "%s: the generation before, %s, left the history", tc.name, prev.Generation)
		}
	}
}
