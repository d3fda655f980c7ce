package integration

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// faultMix is the mix of every fault the proxy knows, on every request.
func faultMix(e *tableEnv, rate float64, seed uint64) {
	e.proxy.SetDelayRange(time.Millisecond, 20*time.Millisecond)
	e.proxy.SetRule(faultproxy.Mix{Rate: rate, Seed: seed}.Rule())
}

// faultOpts are commit options with short backoffs, so that thousands of
// commits through faults stay fast.
func faultOpts(runID string) pswap.CommitOptions {
	return pswap.CommitOptions{RunID: runID, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond,
		MaxAttempts: 6, MaxElapsed: 10 * time.Second}
}

// faultStats counts what one fault test saw.
type faultStats struct {
	mu                                  sync.Mutex
	commits, failures, unknowns, reruns int
	sameRun                             int // re-runs that found their earlier attempt committed
	failReasons                         map[string]int
	committed                           map[string][]string // partition -> run ids in commit order
}

func (s *faultStats) add(f func(s *faultStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// reason shortens an error to its kind, for the summary.
func reason(err error) string {
	switch {
	case errors.Is(err, swap.ErrOutcomeUnknown):
		return "outcome-unknown"
	case errors.Is(err, swap.ErrConflict):
		return "conflict"
	case errors.Is(err, store.ErrTransient):
		return "transient"
	case errors.Is(err, store.ErrPrecondition):
		return "precondition"
	}
	msg := err.Error()
	if len(msg) > 60 {
		msg = msg[:60]
	}
	return msg
}

// TestFaultMix commits through a proxy that drops replies after MinIO
// applied the request, answers 503 SlowDown, 500 and 409
// ConditionalRequestConflict, resets connections and delays, at random on
// every request (reads, data, manifests, pointers, deletes). One writer per
// partition, several partitions at once, in-process through the library:
//   - every success is current right after (nothing else writes the
//     partition) and its parent is the generation it replaced;
//   - every failure left the previous generation current;
//   - ErrOutcomeUnknown is resolved by re-running the same run id;
//   - a failed run re-run by its "orchestrator" with the same run id ends
//     with exactly one generation of that run id;
//   - at the end, each partition's history is exactly the sequence of runs
//     that succeeded, once each.
//
// PSWAP_STRESS=1 runs thousands of commits.
func TestFaultMix(t *testing.T) {
	t.Parallel()
	remoteEnvs(t, testFaultMix)
}

func testFaultMix(t *testing.T, e *tableEnv) {
	rng := newRand(t)
	faultMix(e, 0.15, rng.Uint64())
	stores := []store.Store{e.viaProxy(t, 1), e.viaProxy(t, 3)} // without and with the SDK's own retries
	const workers = 4
	perWorker := scale(60, 600)
	st := &faultStats{failReasons: map[string]int{}, committed: map[string][]string{}}
	var wg sync.WaitGroup
	for w := range workers {
		part := fmt.Sprintf("dt=2026-10-%02d", w+1)
		// The first generation, without faults on this path.
		mustCommitRows(t, e.st, part, 3, "init", pswap.CommitOptions{RunID: "init"})
		// Under the lock: the workers started in earlier rounds of this
		// loop are already committing into the same map.
		st.add(func(s *faultStats) { s.committed[part] = []string{"init"} })
		wg.Go(func() {
			for i := range perWorker {
				runID := fmt.Sprintf("f-%d-%04d", w, i)
				if !faultRun(t, stores[i%2], e.st, part, runID, i, st) {
					return
				}
			}
		})
	}
	wg.Wait()
	e.proxy.SetRule(nil)
	e.proxy.WaitIdle(30 * time.Second)
	state := e.check(t, checkOpts{duck: true})
	for part, runs := range st.committed {
		ps := state[part]
		if ps == nil {
			violation(t, "I3", "%s has no current generation", part)
			continue
		}
		var hist []string
		for _, h := range ps.hist {
			hist = append([]string{h.RunID}, hist...)
		}
		if !slices.Equal(hist, runs) {
			violation(t, "I3/I4", "%s: history has runs %v, the successful commits were %v", part, hist, runs)
		}
	}
	faults, reqs := e.proxy.Injected(), e.proxy.Requests()
	totals.faults.Add(faults)
	totals.requests.Add(reqs)
	totals.commits.Add(int64(st.commits))
	totals.failures.Add(int64(st.failures))
	totals.unknowns.Add(int64(st.unknowns))
	totals.reruns.Add(int64(st.reruns))
	t.Logf("faults: %d injected over %d requests %v; %d commits succeeded, %d attempts failed cleanly, %d ended outcome-unknown, "+
		"%d re-runs (%d found their run already committed); failures by kind %v; 0 doubled runs",
		faults, reqs, e.proxy.Counts(), st.commits, st.failures, st.unknowns, st.reruns, st.sameRun, st.failReasons)
}

// minioOnly returns a MinIO environment or skips.
func minioOnly(t *testing.T) *tableEnv {
	t.Helper()
	if !testenv.S3Enabled() {
		t.Skip("needs MinIO behind the fault proxy; scripts/test.sh starts one")
	}
	return newMinioEnv(t)
}

// faultRun commits one run through faults, re-running it with the same run
// id until it succeeds, and checks every outcome against the store seen
// directly. It returns false when the test must stop.
func faultRun(t *testing.T, faulty, direct store.Store, part, runID string, i int, st *faultStats) bool {
	prev, err := swap.Resolve(ctx, direct, part)
	if err != nil {
		t.Errorf("%s: %v", part, err)
		return false
	}
	prevGen := prev.Pointer.Generation
	mayHaveLanded := false // an earlier attempt of this run ended outcome-unknown
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			st.add(func(s *faultStats) { s.reruns++ })
		}
		if attempt == 30 {
			t.Errorf("%s run %s: no success after %d attempts", part, runID, attempt)
			return false
		}
		res, err := commitRows(faulty, part, 2+i%5, runID, faultOpts(runID))
		cur, rerr := swap.Resolve(ctx, direct, part)
		if rerr != nil {
			violation(t, "I1", "%s after run %s: %v", part, runID, rerr)
			return false
		}
		curGen, curRun := cur.Pointer.Generation, cur.Pointer.RunID
		switch {
		case err == nil:
			st.add(func(s *faultStats) { s.commits++ })
			if curGen != res.Generation || curRun != runID {
				violation(t, "I3", "%s run %s: reported success (%s, %s) but %s of run %q is current", part, runID, res.Outcome, res.Generation, curGen, curRun)
				return false
			}
			switch res.Outcome {
			case swap.Committed:
				if !res.Changed || cur.Manifest.Parent != prevGen {
					violation(t, "I3", "%s run %s: committed %s on top of %s, expected parent %s", part, runID, curGen, cur.Manifest.Parent, prevGen)
				}
			case swap.SameRun:
				st.add(func(s *faultStats) { s.sameRun++ })
				if !mayHaveLanded {
					violation(t, "I3", "%s run %s: a re-run found the run committed, but every earlier attempt reported a clean failure", part, runID)
				}
			default:
				violation(t, "I3", "%s run %s: unexpected outcome %s", part, runID, res.Outcome)
			}
			// Exactly one generation of this run: the parent is not of it.
			if parent, err := swap.ReadManifest(ctx, direct, part, cur.Manifest.Parent); err != nil || parent.RunID == runID {
				violation(t, "I4", "%s run %s: the parent of its generation is of the same run (or unreadable: %v)", part, runID, err)
			}
			st.add(func(s *faultStats) { s.committed[part] = append(s.committed[part], runID) })
			return true
		case errors.Is(err, swap.ErrOutcomeUnknown):
			st.add(func(s *faultStats) { s.unknowns++; s.failReasons[reason(err)]++ })
			mayHaveLanded = true
			if curGen != prevGen && curRun != runID {
				violation(t, "I3", "%s run %s: outcome unknown, and %s of run %q is current", part, runID, curGen, curRun)
				return false
			}
		default:
			st.add(func(s *faultStats) { s.failures++; s.failReasons[reason(err)]++ })
			if testing.Verbose() {
				t.Logf("%s run %s attempt %d failed: %v", part, runID, attempt, err)
			}
			if curGen != prevGen && !(mayHaveLanded && curRun == runID) {
				violation(t, "I3", "%s run %s: reported failure (%v) but the partition changed from %s to %s (run %q)", part, runID, err, prevGen, curGen, curRun)
				return false
			}
			if errors.Is(err, swap.ErrConflict) {
				violation(t, "I3", "%s run %s: conflict with no other writer: %v", part, runID, err)
				return false
			}
		}
	}
}

// TestFaultMixCLI runs `pswap commit` processes through the fault proxy:
// exit 0 means the run is current; exit 1 left the previous generation
// current, or (outcome unknown) is resolved by running the same command
// again; nothing else is acceptable with a single writer.
func TestFaultMixCLI(t *testing.T) {
	t.Parallel()
	remoteEnvs(t, testFaultMixCLI)
}

func testFaultMixCLI(t *testing.T, e *tableEnv) {
	rng := newRand(t)
	const part = "dt=2026-10-31"
	dir := t.TempDir()
	r := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--run-id", "init", "--json", writeCSVInput(t, dir, "init.csv", 3, "init"))
	if r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	faultMix(e, 0.12, rng.Uint64())
	runs := scale(12, 100)
	var ok, failed, unknown, reruns int
	committed := []string{"init"}
	for i := range runs {
		runID := fmt.Sprintf("cli-%03d", i)
		input := writeCSVInput(t, dir, runID+".csv", 2+i%4, runID)
		prev, err := swap.Resolve(ctx, e.st, part)
		if err != nil {
			t.Fatal(err)
		}
		mayHaveLanded := false
		for attempt := 0; ; attempt++ {
			if attempt == 20 {
				t.Fatalf("run %s: no success after %d attempts", runID, attempt)
			}
			if attempt > 0 {
				reruns++
			}
			r := e.runCLI(t, "commit", "--table", e.url, "--partition", part, "--run-id", runID, "--json", input)
			cur, err := swap.Resolve(ctx, e.st, part)
			if err != nil {
				violation(t, "I1", "run %s: %v", runID, err)
				return
			}
			if sec := os.Getenv("AWS_SECRET_ACCESS_KEY"); len(sec) >= 4 && strings.Contains(r.stdout+r.stderr, sec) {
				t.Fatalf("run %s: the secret key appears in stderr", runID)
			}
			if r.code == 0 {
				ok++
				out := r.commit(t)
				if cur.Pointer.Generation != out.Generation || cur.Pointer.RunID != runID {
					violation(t, "I3", "run %s: exit 0 (%+v) but %s of run %q is current", runID, out, cur.Pointer.Generation, cur.Pointer.RunID)
				}
				if !out.Changed && !mayHaveLanded {
					violation(t, "I3", "run %s: a no-op re-run after clean failures", runID)
				}
				committed = append(committed, runID)
				break
			}
			if r.code != 1 {
				t.Fatalf("run %s: exit %d with a single writer: %s", runID, r.code, r.stderr)
			}
			if strings.Contains(r.stderr, "outcome unknown") {
				unknown++
				mayHaveLanded = true
				if !strings.Contains(r.stderr, "re-run the same command") {
					t.Errorf("run %s: outcome unknown without the re-run hint: %s", runID, r.stderr)
				}
				continue
			}
			failed++
			if cur.Pointer.Generation != prev.Pointer.Generation && !(mayHaveLanded && cur.Pointer.RunID == runID) {
				violation(t, "I3", "run %s: exit 1 (%s) but the partition changed to %s", runID, strings.TrimSpace(r.stderr), cur.Pointer.Generation)
			}
		}
	}
	e.proxy.SetRule(nil)
	e.proxy.WaitIdle(30 * time.Second)
	state := e.check(t, checkOpts{duck: true, expect: []string{part}})
	var hist []string
	for _, h := range state[part].hist {
		hist = append([]string{h.RunID}, hist...)
	}
	if !slices.Equal(hist, committed) {
		violation(t, "I3/I4", "history has runs %v, the successful commits were %v", hist, committed)
	}
	faults, reqs := e.proxy.Injected(), e.proxy.Requests()
	totals.faults.Add(faults)
	totals.requests.Add(reqs)
	totals.commits.Add(int64(ok))
	totals.failures.Add(int64(failed))
	totals.unknowns.Add(int64(unknown))
	totals.reruns.Add(int64(reruns))
	t.Logf("CLI through faults: %d faults over %d requests %v; %d runs exit 0, %d exits 1 that changed nothing, %d outcome-unknown, %d re-runs",
		faults, reqs, e.proxy.Counts(), ok, failed, unknown, reruns)
}
