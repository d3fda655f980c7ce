package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/testing/faultproxy"
)

// Kill phases of the crash test.
const (
	phaseUpload   = "upload"         // while the data files are uploading
	phasePointer  = "before-pointer" // after the manifest, before the pointer swap lands
	phaseLanded   = "after-pointer"  // the pointer swap landed, its reply did not arrive yet
	phaseAnytime  = "anytime"        // uniformly over the whole command
	phaseGC       = "gc"             // a garbage collection, uniformly over its run
	phaseFinished = "finished"       // the process ended before the kill came
)

// TestCrashCommit kills real `pswap commit` processes with SIGKILL at random
// moments (during the upload, between manifest and pointer swap, anywhere)
// and garbage collections in the middle of their work. After every kill the
// invariants hold, the partition shows either the previous generation or
// the killed run's whole generation, and re-running the same command (same
// run id) converges: exit 0, that run id current, exactly one generation
// of it in the history. PSWAP_STRESS=1 runs hundreds of kills.
func TestCrashCommit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *tableEnv) {
		newCrash(t, e).run(scale(10, 150))
	})
}

type crash struct {
	t      *testing.T
	e      *tableEnv
	parts  []string
	inputs []string // the big inputs every run shares
	huge   string   // a multipart-sized input for every third run (MinIO)
	dir    string
	rng    *rand.Rand

	upload, total, gcTime time.Duration // calibrated durations
	phases                map[string]int
	landed, reruns        int
	gcKills, gcRuns       int
}

func newCrash(t *testing.T, e *tableEnv) *crash {
	c := &crash{t: t, e: e, parts: []string{"dt=2026-11-01", "dt=2026-11-02"}, dir: t.TempDir(),
		rng: newRand(t), phases: map[string]int{}}
	// Two inputs of about 1.5 MB of incompressible rows; on MinIO every
	// third run adds one of about 9 MB, which goes up as a multipart upload
	// (8 MiB parts), so that kills leave abandoned uploads behind for GC.
	for i := range 2 {
		c.inputs = append(c.inputs, writeParquetInput(t, c.dir, fmt.Sprintf("big-%d.parquet", i), 9000, 160, fmt.Sprint(i)))
	}
	if e.kind == "minio" {
		c.huge = writeParquetInput(t, c.dir, "huge.parquet", 52000, 160, "h")
	}
	return c
}

// args is the command line of run i.
func (c *crash) args(i int) (part, runID string, args []string) {
	part = c.parts[i%len(c.parts)]
	runID = fmt.Sprintf("crash-%04d", i)
	// A small input unique to the run: every run's content differs, so no
	// commit is an identical-content no-op.
	tag := writeParquetInput(c.t, c.dir, fmt.Sprintf("tag-%04d.parquet", i), 1+i%7, 0, runID)
	args = append([]string{"commit", "--table", c.e.url, "--partition", part, "--run-id", runID, "--json"}, c.inputs...)
	if c.huge != "" && i%3 == 0 {
		args = append(args, c.huge)
	}
	return part, runID, append(args, tag)
}

// slowUploads makes MinIO uploads of data files slow, so that a kill lands
// in the middle of them.
func (c *crash) slowUploads() {
	if p := c.e.proxy; p != nil {
		p.SetDelayRange(20*time.Millisecond, 60*time.Millisecond)
		p.SetRule(func(r faultproxy.Request) faultproxy.Action {
			if (r.IsPut() || r.IsPart()) && pathKind(r.Path) == layout.KindData {
				return faultproxy.Delay
			}
			return faultproxy.Pass
		})
	}
}

func (c *crash) clearFaults() {
	if p := c.e.proxy; p != nil {
		p.SetRule(nil)
		p.SetOnApplied(nil)
		if !p.WaitIdle(30 * time.Second) {
			c.t.Fatal("requests of a killed process never settled")
		}
	}
}

func (c *crash) run(kills int) {
	t, e := c.t, c.e
	for _, p := range c.parts {
		r := e.runCLI(t, "commit", "--table", e.url, "--partition", p, "--run-id", "init-"+p, "--json", c.inputs[0])
		if r.code != 0 {
			t.Fatalf("initial commit: %d %s", r.code, r.stderr)
		}
	}
	// Calibrate: one whole commit (with the multipart input on MinIO), with
	// the upload slowed down on MinIO.
	c.slowUploads()
	_, _, args := c.args(3 * kills)
	r := e.runCLI(t, args...)
	c.clearFaults()
	if r.code != 0 {
		t.Fatalf("calibration commit: %d %s", r.code, r.stderr)
	}
	c.total = r.elapsed
	c.upload = r.elapsed * 8 / 10
	prev := e.check(t, checkOpts{expect: c.parts, duck: true})

	// Every fourth kill is a garbage collection's (the first one only
	// calibrates its duration).
	for i := range kills {
		if i%4 == 3 {
			prev = c.killGC(prev)
		} else {
			prev = c.killCommit(i, prev, i%5 == 4)
		}
		if t.Failed() {
			t.Fatalf("stopping after the first failure (kill %d)", i)
		}
	}
	final := e.check(t, checkOpts{expect: c.parts, duck: true})
	leaked := c.leakedTemps()
	t.Logf("%s: %d kills survived (%v), %d had landed before the kill, %d re-runs converged, %d GC kills + %d GC runs, "+
		"calibrated commit %s; %d generations current+retained; file-store temp files left by killed writers: %d",
		e.kind, c.phases[phaseUpload]+c.phases[phasePointer]+c.phases[phaseLanded]+c.phases[phaseAnytime]+c.gcKills, c.phases, c.landed, c.reruns,
		c.gcKills, c.gcRuns, c.total.Round(time.Millisecond), len(final[c.parts[0]].hist)+len(final[c.parts[1]].hist), leaked)
}

// killCommit runs commit i, kills it in a random phase, checks, and
// re-runs it to convergence. It returns the state after the re-run.
func (c *crash) killCommit(i int, prev tableState, duck bool) tableState {
	t, e := c.t, c.e
	part, runID, args := c.args(i)
	prevGen := prev[part].gen()
	phase := []string{phaseUpload, phasePointer, phaseLanded, phaseAnytime}[c.rng.IntN(4)]

	var delay time.Duration
	var pointerHit chan struct{}
	switch phase {
	case phaseUpload:
		c.slowUploads()
		delay = time.Duration(c.rng.Int64N(int64(c.upload) + 1))
	case phaseAnytime:
		c.slowUploads()
		delay = time.Duration(c.rng.Int64N(int64(c.total)*11/10 + 1))
	case phasePointer, phaseLanded:
		pointerHit = make(chan struct{}, 1)
		if p := e.proxy; p != nil {
			// Hold the pointer PUT before it reaches MinIO (the manifest is
			// written, the swap not yet), or hold its reply after MinIO
			// applied it.
			act := faultproxy.Delay
			if phase == phaseLanded {
				act = faultproxy.SlowReply
			}
			p.SetDelay(500 * time.Millisecond)
			p.SetOnApplied(func(faultproxy.Request, faultproxy.Action, int) { notify(pointerHit) })
			p.SetRule(func(r faultproxy.Request) faultproxy.Action {
				if r.IsPut() && pathKind(r.Path) == layout.KindPointer {
					if act == faultproxy.Delay {
						notify(pointerHit)
					}
					return act
				}
				return faultproxy.Pass
			})
		}
	}
	manifests := c.manifestCount(part)
	pointer, _ := c.e.rawRead("sales/" + layout.PointerKey(part))
	pr := startProc(t, e.cli(t, args...))
	done := make(chan cliResult, 1)
	go func() { done <- pr.wait() }()
	if pointerHit != nil && e.proxy == nil {
		// file://: watch for the manifest (or the new pointer), then kill
		// at once.
		go func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if phase == phasePointer && c.manifestCount(part) > manifests {
					notify(pointerHit)
					return
				}
				if phase == phaseLanded {
					if now, err := c.e.rawRead("sales/" + layout.PointerKey(part)); err == nil && string(now) != string(pointer) {
						notify(pointerHit)
						return
					}
				}
				time.Sleep(100 * time.Microsecond)
			}
		}()
	}
	var res cliResult
	killed := true
	if pointerHit != nil {
		select {
		case <-pointerHit:
			pr.kill()
			res = <-done
		case res = <-done:
			killed = false
		case <-time.After(2 * time.Minute):
			pr.kill()
			<-done
			t.Fatalf("kill %d: the pointer PUT never came", i)
		}
	} else {
		select {
		case <-time.After(delay):
			pr.kill()
			res = <-done
		case res = <-done:
			killed = false
		}
	}
	if killed && res.code != -1 {
		killed = false // it finished just before the signal
	}
	c.clearFaults()
	if !killed {
		phase = phaseFinished
		if res.code != 0 {
			t.Fatalf("kill %d: commit finished on its own with %d: %s", i, res.code, res.stderr)
		}
	} else {
		totals.kills.Add(1)
	}
	c.phases[phase]++
	if testing.Verbose() {
		t.Logf("kill %d (%s, %s): %s after %s", i, part, runID, phase, res.elapsed.Round(time.Millisecond))
	}

	// Right after the kill: the previous generation, or the killed run's
	// whole generation on top of it; nothing else.
	after := e.check(t, checkOpts{expect: c.parts})
	cur := after[part]
	landed := false
	switch {
	case cur == nil:
	case cur.gen() == prevGen:
	case cur.snap.Pointer.RunID == runID && cur.snap.Manifest.Parent == prevGen:
		landed = true
	default:
		violation(t, "I3", "kill %d: %s went from %s to %s (run %q), neither the previous generation nor run %s",
			i, part, prevGen, cur.gen(), cur.snap.Pointer.RunID, runID)
	}
	if killed && landed {
		c.landed++
		totals.killsLanded.Add(1)
	}
	if killed && phase == phaseLanded && !landed {
		t.Errorf("kill %d: killed after its pointer swap was seen, but the partition does not show it", i)
	}
	for p, ps := range after {
		if p != part && ps.gen() != prev[p].gen() {
			violation(t, "I3", "kill %d on %s changed another partition %s", i, part, p)
		}
	}

	// Re-run the same command: it converges.
	r := e.runCLI(t, args...)
	c.reruns++
	totals.reruns.Add(1)
	if r.code != 0 {
		t.Fatalf("kill %d: re-run exited %d: %s", i, r.code, r.stderr)
	}
	out := r.commit(t)
	if out.RunID != runID || out.Changed == landed {
		t.Errorf("kill %d: re-run says %+v; the killed attempt had landed: %v", i, out, landed)
	}
	final := e.check(t, checkOpts{expect: c.parts, duck: duck})
	fp := final[part]
	if fp == nil || fp.gen() != out.Generation || fp.snap.Pointer.RunID != runID {
		violation(t, "I4", "kill %d: after the re-run %s is not run %s's generation %s", i, part, runID, out.Generation)
	} else if n := fp.runCount(runID); n != 1 {
		violation(t, "I4", "kill %d: run %s has %d generations in the history of %s", i, runID, n, part)
	}
	return final
}

// killGC runs a garbage collection (with everything old enough collected)
// and kills it at a random moment; then checks, and collects again to
// completion.
func (c *crash) killGC(prev tableState) tableState {
	t, e := c.t, c.e
	if p := e.proxy; p != nil {
		// Make deletions and reads slow enough to be interrupted.
		p.SetDelayRange(5*time.Millisecond, 30*time.Millisecond)
		p.SetRule(func(r faultproxy.Request) faultproxy.Action {
			if r.IsDelete() || r.IsRead() {
				return faultproxy.Delay
			}
			return faultproxy.Pass
		})
	}
	// Orphans of killed commits are collected once 2s (the GC's clock
	// slack) older than the tiny orphan age: no writer runs meanwhile.
	cmd := e.gcCmd(t, time.Millisecond)
	pr := startProc(t, cmd)
	if c.gcTime == 0 {
		r := pr.wait()
		c.gcTime = r.elapsed
		c.gcRuns++
		c.clearFaults()
		if r.code != 0 {
			t.Fatalf("gc: %d %s", r.code, r.stderr)
		}
		return e.check(t, checkOpts{expect: c.parts})
	}
	done := make(chan cliResult, 1)
	go func() { done <- pr.wait() }()
	var res cliResult
	select {
	case <-time.After(time.Duration(c.rng.Int64N(int64(c.gcTime) + 1))):
		pr.kill()
		res = <-done
	case res = <-done:
	}
	c.clearFaults()
	if res.code == -1 {
		c.gcKills++
		totals.kills.Add(1)
	} else if res.code != 0 {
		t.Fatalf("gc: %d %s", res.code, res.stderr)
	}
	mid := e.check(t, checkOpts{expect: c.parts})
	for p, ps := range mid {
		if ps.gen() != prev[p].gen() {
			violation(t, "I5", "gc changed the current generation of %s", p)
		}
	}
	r := startProc(t, e.gcCmd(t, time.Millisecond)).wait()
	c.gcRuns++
	if r.code != 0 {
		t.Fatalf("gc after a killed gc: %d %s", r.code, r.stderr)
	}
	return e.check(t, checkOpts{expect: c.parts})
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// manifestCount counts the manifests of a partition (file:// only).
func (c *crash) manifestCount(part string) int {
	if c.e.kind != "file" {
		return 0
	}
	ents, _ := os.ReadDir(filepath.Join(c.e.dir, filepath.FromSlash(layout.ManifestsPrefix(part))))
	n := 0
	for _, d := range ents {
		if strings.HasSuffix(d.Name(), ".json") && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
	}
	return n
}

// leakedTemps counts the file store's temporary files under the table:
// what killed writers left that no listing (and so no GC) sees.
func (c *crash) leakedTemps() int {
	n := 0
	for _, o := range c.e.rawList(c.t) {
		if strings.HasSuffix(o.key, ".pswap-tmp") {
			n++
		}
	}
	return n
}
