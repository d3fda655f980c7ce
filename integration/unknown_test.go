package integration

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/swap"
)

// unknownRule makes the outcome of the pointer swap unknowable: the
// pointer PUT is applied with its reply lost (or refused with 503, when
// applied is false), and from then on every read of the pointer fails, so
// that the read-back cannot tell. Begin's own read passes.
func unknownRule(applied bool) func(faultproxy.Request) faultproxy.Action {
	var swapped atomic.Bool
	return func(r faultproxy.Request) faultproxy.Action {
		if pathKind(r.Path) != layout.KindPointer {
			return faultproxy.Pass
		}
		switch {
		case r.IsPut():
			swapped.Store(true)
			if applied {
				return faultproxy.DropReply
			}
			return faultproxy.SlowDown
		case swapped.Load():
			return faultproxy.Internal
		}
		return faultproxy.Pass
	}
}

// TestOutcomeUnknownResolvedByRerun drives commits into the one outcome
// that cannot be resolved in place: the pointer PUT's reply is lost (it was
// applied, or not) and the read-back keeps failing until the retry bounds
// run out. The commit must say ErrOutcomeUnknown (never success, never a
// plain failure), and re-running the same run id once the store answers
// again must settle it: a no-op when the first attempt had landed, a commit
// when it had not, one generation of the run either way. Library and CLI.
func TestOutcomeUnknownResolvedByRerun(t *testing.T) {
	t.Parallel()
	minioAndGCS(t, testOutcomeUnknownResolvedByRerun)
}

func testOutcomeUnknownResolvedByRerun(t *testing.T, e *tableEnv) {
	const part = "dt=2026-11-15"
	st := e.viaProxy(t, 1)
	prev := mustCommitRows(t, e.st, part, 2, "init", pswap.CommitOptions{RunID: "init"}).Generation
	runs := scale(10, 100)
	landed, notLanded := 0, 0
	for i := range runs {
		applied := i%2 == 0
		runID := fmt.Sprintf("u-%03d", i)
		e.proxy.SetRule(unknownRule(applied))
		opts := pswap.CommitOptions{RunID: runID, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxAttempts: 2}
		_, err := commitRows(st, part, 1+i%4, runID, opts)
		e.proxy.SetRule(nil)
		e.proxy.WaitIdle(10 * time.Second)
		totals.unknowns.Add(1)
		if !errors.Is(err, swap.ErrOutcomeUnknown) {
			t.Fatalf("run %s (applied %v): %v, want ErrOutcomeUnknown", runID, applied, err)
		}
		// The store shows the previous generation, or ours: nothing else.
		cur, err := swap.Resolve(ctx, e.st, part)
		if err != nil {
			t.Fatal(err)
		}
		if applied != (cur.Pointer.RunID == runID) || (!applied && cur.Pointer.Generation != prev) {
			violation(t, "I3", "run %s (applied %v): %s of run %q is current", runID, applied, cur.Pointer.Generation, cur.Pointer.RunID)
		}
		res, err := commitRows(st, part, 1+i%4, runID, pswap.CommitOptions{RunID: runID})
		totals.reruns.Add(1)
		if err != nil {
			t.Fatalf("re-run of %s: %v", runID, err)
		}
		want := swap.Committed
		if applied {
			want = swap.SameRun
			landed++
		} else {
			notLanded++
		}
		if res.Outcome != want {
			t.Errorf("re-run of %s (applied %v): %s, want %s", runID, applied, res.Outcome, want)
		}
		totals.commits.Add(1)
		prev = res.Generation
	}
	// The CLI: interrupted (SIGTERM) while its pointer PUT is in flight, it
	// cannot know whether the PUT landed: it reads the pointer back and says
	// what readers see, with the re-run hint, and the re-run settles it.
	dir := t.TempDir()
	for i, applied := range []bool{true, false} {
		runID := fmt.Sprintf("u-cli-%d", i)
		input := writeCSVInput(t, dir, runID+".csv", 3, runID)
		inFlight := make(chan struct{}, 1)
		// Applied: the reply is held for a second. Not applied: the PUT
		// is held until the interrupted client hangs up, then dropped
		// (never forwarded), however long the CLI takes to stop.
		delay := time.Second
		if !applied {
			delay = 10 * time.Minute
		}
		e.proxy.SetDelay(delay)
		e.proxy.SetOnApplied(func(faultproxy.Request, faultproxy.Action, int) { notify(inFlight) })
		e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
			if r.IsPut() && pathKind(r.Path) == layout.KindPointer {
				if applied {
					return faultproxy.SlowReply // applied, reply held
				}
				notify(inFlight)
				return faultproxy.Delay // held before MinIO; dropped when the client hangs up
			}
			return faultproxy.Pass
		})
		p := startProc(t, e.cli(t, "commit", "--table", e.url, "--partition", part, "--run-id", runID, "--json", input))
		select {
		case <-inFlight:
		case <-time.After(time.Minute):
			p.kill()
			t.Fatalf("CLI run %s: the pointer PUT never came", runID)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		r := p.wait()
		e.proxy.SetRule(nil)
		e.proxy.SetOnApplied(nil)
		if !e.proxy.WaitIdle(30 * time.Second) {
			t.Fatalf("CLI run %s: its pointer PUT was still held 30s after the CLI exited", runID)
		}
		totals.unknowns.Add(1)
		// Exit 143 (SIGTERM), and the CLI read the pointer back to say
		// which generation readers see.
		state := "nothing was committed"
		if applied {
			state = "the commit landed"
		}
		if r.code != 143 || !strings.Contains(r.stderr, "outcome unknown") || !strings.Contains(r.stderr, "re-run the same command") ||
			!strings.Contains(r.stderr, state) {
			t.Fatalf("CLI run %s (applied %v), interrupted: exit %d, want 143 saying %q: %s", runID, applied, r.code, state, r.stderr)
		}
		r = e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--run-id", runID, "--json", input)
		totals.reruns.Add(1)
		if r.code != 0 {
			t.Fatalf("CLI re-run %s: exit %d: %s", runID, r.code, r.stderr)
		}
		if out := r.commit(t); out.Changed == applied {
			t.Errorf("CLI re-run %s (applied %v): changed=%v", runID, applied, out.Changed)
		}
	}
	state := e.check(t, checkOpts{expect: []string{part}, duck: true})
	for i := range runs {
		if n := state[part].runCount(fmt.Sprintf("u-%03d", i)); n != 1 {
			violation(t, "I4", "run u-%03d has %d generations", i, n)
		}
	}
	totals.faults.Add(e.proxy.Injected())
	totals.requests.Add(e.proxy.Requests())
	t.Logf("%d outcome-unknown commits (library), each settled by one re-run: %d had landed (no-op re-run), %d had not (re-run committed); CLI interrupted mid-swap twice, settled by re-runs; %d faults injected",
		runs, landed, notLanded, e.proxy.Injected())
}
