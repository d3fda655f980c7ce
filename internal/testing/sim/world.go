package sim

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
)

// Epoch is the simulated clock's start.
var Epoch = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// actor states.
const (
	waiting = iota // not started yet
	running        // executing its own code between two requests
	pending        // blocked in a request until the scheduler picks it
	done           // returned, or killed
)

// actor is one goroutine of pswap code (a writer, a rollback, GC, a reader)
// whose requests the scheduler interleaves.
type actor struct {
	w     *World
	id    int
	name  string
	kind  string // writer, rollback, gc, reader
	start int    // first step at which it may start
	after *actor // starts only once this one is done (a retry after a kill)
	// gcWait: a rollback waiting for the next GC collection to begin
	// (ActorSpec.WithGC, World.releaseWithGC).
	gcWait bool
	// killable: the scheduler may kill it between two requests.
	killable bool
	// window: its metadata requests expire CommitWindow after its latest
	// clock read (see Config.CommitWindow).
	window bool
	body   func(ctx context.Context, a *actor) string
	// group: committers of one staged generation share it (0: none).
	group int

	rng     *rand.Rand
	env     *env.Env // what its code sees of the world: actorEnv
	state   int
	started int // the step at which it started
	req     *request
	killed  bool
	cancel  context.CancelFunc
	lastNow time.Time // the store clock at its latest Now
	// firstNow: at its first Now (for the planted writer bug).
	firstNow time.Time
	// lastPointerGet: when its latest successful GET of a pointer was applied.
	lastPointerGet time.Time
	// pubStart: a publisher's first pointer GET since its latest PUT of a
	// metadata version (the start of its attempt's window); pubPut: it has
	// PUT a version since.
	pubStart time.Time
	pubPut   bool
	// stall: a publisher that stalls once before its manifest list's PUT
	// (Config.StallPublish).
	stall    bool
	requests int
	outcome  string
}

func (a *actor) String() string { return a.name }

// Event is one line of a run's trace.
type Event struct {
	Step    int
	At      time.Duration // simulated time since Epoch
	Actor   string
	Request string
	Fault   string
	Outcome string
}

func (e Event) String() string {
	f := ""
	if e.Fault != "" {
		f = " [" + e.Fault + "]"
	}
	req := e.Request
	if req != "" {
		req = " " + req
	}
	return fmt.Sprintf("%4d %7.3fs %-14s%s%s -> %s", e.Step, e.At.Seconds(), e.Actor, req, f, e.Outcome)
}

// Violation is a broken invariant.
type Violation struct {
	Step      int
	Invariant string // I1..I5, or "sim" for a stuck or runaway run
	Detail    string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("step %d: %s violated: %s", v.Step, v.Invariant, v.Detail)
}

// World is one simulated run: the store's state, the clock, the actors and
// the scheduler, the ground truth of every partition, and the trace.
type World struct {
	cfg Config
	st  *Store

	mu       sync.Mutex
	cond     *sync.Cond
	rng      *rand.Rand // scheduling and faults
	clock    time.Time
	objs     map[string]object
	pageSize int
	actors   []*actor
	byEnv    map[*env.Env]*actor // actorOf: filled by build, only read after
	cur      *actor              // the actor whose request is being applied
	step     int
	faults   map[string]int
	trace    []Event
	names    map[string]string // generation ids -> short names in the trace
	failure  *Violation
	stopped  bool
	ids      uint64
	// decisions counts fault decisions (ordinals for Config.Suppressed).
	decisions int
	killedID  uint64
	// generation is the last GCS generation handed out (Config.Generations).
	generation int64
	wg         sync.WaitGroup

	parts   map[string]*partTruth
	mergeIn map[*actor][]Row // what each merger's input holds (merge.go)
	mergers []*actor
	// appendIn is each appender's spec, appenders the appenders in
	// Config.Appenders' order, ackedAppends the generation each
	// acknowledged append run named (append.go).
	appendIn     map[*actor]AppendSpec
	appenders    []*actor
	ackedAppends map[string]string
	readers      map[*actor]*readState
	checks       int
	reports      int
	coldWrites   int // cold manifests written (lakehouse, cold.go)
	// gcSeen: per GC actor, the pointer bytes it read first in its current
	// collection (for the planted stale re-read).
	gcSeen map[*actor]map[string]object
	// gcKeys: per GC actor, the keys that existed at its first listing in
	// its current collection (for the planted skipped re-list).
	gcKeys map[*actor]map[string]bool
	// rbSeen: per rollback actor, manifests it read (for the planted bug).
	rbSeen map[*actor]map[string]object
	// gcBlind: per GC actor, whether it is asking what the Iceberg
	// snapshots name (for the planted bug).
	gcBlind map[*actor]bool

	// iceberg: the run publishes Iceberg metadata.
	iceberg bool
	// iceLatest is the latest metadata version written, iceGens what its
	// current snapshot names per partition hash (the generation).
	iceLatest int
	iceGens   map[string]string
	// pendingPubs are the publications that returned pending (the
	// publish lease's holder folds them, lakehouse lease.go), checked
	// when every actor is done (checkPending).
	pendingPubs []pendingPub
	// iceIDs and iceLast are its current schema's top-level field ids by
	// name and its last-column-id (checkMark).
	iceIDs    map[string]int
	iceLast   int
	iceChecks int
	memos     map[string]any // decoded objects by kind and ETag (checkStore)
	// lost: the Iceberg objects an operator deleted (faults.go); repaired:
	// the lost manifests a successful reconcile has had to write anew
	// since, which no version may name any more.
	lost     map[string]lostObject
	repaired map[string]bool

	// views: what the simulation knows of table.json and the Delta log
	// (views.go).
	views viewsTruth
}

// newWorld returns an empty world for cfg.
func newWorld(cfg Config) *World {
	w := &World{
		cfg:          cfg,
		rng:          rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		clock:        Epoch,
		objs:         map[string]object{},
		pageSize:     cfg.PageSize,
		faults:       map[string]int{},
		names:        map[string]string{},
		byEnv:        map[*env.Env]*actor{},
		parts:        map[string]*partTruth{},
		mergeIn:      map[*actor][]Row{},
		appendIn:     map[*actor]AppendSpec{},
		ackedAppends: map[string]string{},
		readers:      map[*actor]*readState{},
		gcSeen:       map[*actor]map[string]object{},
		gcKeys:       map[*actor]map[string]bool{},
		rbSeen:       map[*actor]map[string]object{},
		gcBlind:      map[*actor]bool{},
		memos:        map[string]any{},
		lost:         map[string]lostObject{},
		repaired:     map[string]bool{},
		views:        viewsTruth{deltaOff: -1},
	}
	if w.pageSize <= 0 {
		w.pageSize = DefaultPageSize
	}
	w.cond = sync.NewCond(&w.mu)
	w.st = &Store{w: w}
	return w
}

// NewStore returns a simulated store outside any run: every request is
// applied at once, timestamps come from the wall clock. The conformance
// suite runs against it.
func NewStore() *Store {
	w := newWorld(Config{Seed: 1})
	w.cfg.wallClock = true
	return w.st
}

// errKilled is what every request of a killed actor returns: it never
// reaches the store.
var errKilled = fmt.Errorf("sim: actor killed: %w", context.Canceled)

// do runs one request: at once without an actor, else through the scheduler.
func (w *World) do(ctx context.Context, r *request) error {
	a := w.actorOf(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if a == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.cfg.wallClock {
			w.clock = time.Now().UTC()
		}
		w.apply(r)
		return r.err
	}
	if a.killed || w.stopped || a.state == done {
		return errKilled
	}
	if a.req != nil {
		// The model is one request at a time per actor (the scheduler
		// waits for every actor to block); two goroutines of one actor
		// requesting at once would make the run depend on Go's scheduler.
		w.fail("sim", "%s made two requests at once (%s and %s)", a, a.req, r)
		return errKilled
	}
	a.req = r
	a.state = pending
	w.cond.Broadcast()
	for a.req == r {
		w.cond.Wait()
	}
	return r.err
}

// now is the store clock as an actor reads it (truncated to the second).
func (w *World) now(ctx context.Context) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cfg.wallClock {
		return time.Now().UTC().Truncate(time.Second)
	}
	t := w.clock.Truncate(time.Second)
	if a := w.actorOf(ctx); a != nil && !a.killed {
		a.lastNow = t
		if a.firstNow.IsZero() {
			a.firstNow = t
		}
		if w.cfg.Plant == PlantWriterSkipGrace && a.kind == "writer" {
			return a.firstNow
		}
	}
	return t
}

// newGenerationID returns a UUIDv7 made from the simulated clock and a
// counter: unique, time-ordered, and the same on every run of a seed.
func (w *World) newGenerationID() string { return w.generationIDOf(nil) }

// generationIDOf is newGenerationID for actor a's code (nil: outside any
// actor, or the running one): an actor killed between two requests goes
// on running its own code beside the others, and its ids must come from
// its own sequence, not the one of the actor the scheduler let run.
func (w *World) generationIDOf(a *actor) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a == nil {
		a = w.runningActor()
	}
	var n uint64
	if a != nil && a.killed {
		// A killed actor's ids never reach the store; keep them out of
		// the sequence the others see.
		w.killedID++
		n = w.killedID | 1<<40
	} else {
		w.ids++
		n = w.ids
	}
	var b [16]byte
	ms := uint64(w.clock.UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = 0x70
	binary.BigEndian.PutUint64(b[8:], n)
	b[8] = 0x80 | (b[8] & 0x3f)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}`)

// short replaces generation ids by g1, g2... in order of appearance.
func (w *World) short(s string) string {
	return uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		n, ok := w.names[id]
		if !ok {
			n = fmt.Sprintf("g%d", len(w.names)+1)
			w.names[id] = n
		}
		return n
	})
}

func (w *World) record(e Event) {
	e.Step = w.step
	e.At = w.clock.Sub(Epoch)
	e.Request = w.short(e.Request)
	e.Outcome = w.short(e.Outcome)
	w.trace = append(w.trace, e)
}

func (w *World) fail(inv, format string, args ...any) {
	if w.failure != nil {
		return
	}
	w.failure = &Violation{Step: w.step, Invariant: inv, Detail: w.short(fmt.Sprintf(format, args...))}
	w.record(Event{Actor: "CHECK", Outcome: "VIOLATION " + w.failure.Invariant + ": " + w.failure.Detail})
}

// spawn starts an actor's goroutine. The lock is held.
func (w *World) spawn(a *actor) {
	a.state = running
	a.started = w.step
	ctx, cancel := context.WithCancel(env.With(context.Background(), a.env))
	a.cancel = cancel
	w.record(Event{Actor: a.name, Outcome: "start"})
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer cancel()
		out := a.body(ctx, a)
		w.mu.Lock()
		defer w.mu.Unlock()
		if !a.killed && a.state != done {
			a.state = done
			a.outcome = out
			w.record(Event{Actor: a.name, Outcome: "done: " + out})
		}
		w.cond.Broadcast()
	}()
}

// kill stops an actor between two requests: its pending request never
// reaches the store, nor does any later one. The lock is held.
func (w *World) kill(a *actor) {
	a.killed = true
	a.state = done
	a.outcome = "killed"
	a.cancel()
	if a.req != nil {
		a.req.err = errKilled
		a.req = nil
	}
	delete(w.readers, a)
	w.cond.Broadcast()
}

// run schedules the actors until all are done, a violation is found, or
// the step limit is reached.
func (w *World) run() {
	w.mu.Lock()
	stop := make(chan struct{})
	go func() { // wakes the scheduler up to notice a stuck actor
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				w.mu.Lock()
				w.cond.Broadcast()
				w.mu.Unlock()
			}
		}
	}()
	for w.failure == nil {
		// The actor whose request was applied last runs its own code until
		// its next request (or its end) before anyone starts: else what it
		// does and what a starting actor does would race.
		w.waitQuiet()
		// Actors start one at a time, each running alone until its first
		// request, so that whatever they do before it happens in one order.
		for _, a := range w.actors {
			if a.state == waiting && w.cfg.Disabled[a.id] {
				a.state, a.outcome = done, "disabled"
			}
			if a.state == waiting && a.start <= w.step && (a.after == nil || a.after.state == done) {
				w.spawn(a)
				w.waitQuiet()
			}
		}
		w.waitQuiet()
		if w.failure != nil {
			break
		}
		var pend []*actor
		wake := -1 // the earliest step a paused actor waits for
		for _, a := range w.actors {
			if a.state != pending {
				continue
			}
			if a.req.op == "pause" && a.req.until > w.step {
				if wake < 0 || a.req.until < wake {
					wake = a.req.until
				}
				continue
			}
			pend = append(pend, a)
		}
		if len(pend) == 0 && wake >= 0 {
			for _, a := range w.actors {
				if a.state == waiting && (a.after == nil || a.after.state == done) && a.start > w.step {
					wake = min(wake, a.start)
				}
			}
			w.step = max(w.step+1, wake)
			continue
		}
		if len(pend) == 0 {
			next := -1
			for _, a := range w.actors {
				if a.state == waiting && (a.after == nil || a.after.state == done) && (next < 0 || a.start < next) {
					next = a.start
				}
			}
			if next < 0 {
				break
			}
			w.step = max(w.step, next)
			continue
		}
		if w.step >= w.cfg.MaxSteps {
			w.fail("sim", "still running after %d steps", w.step)
			break
		}
		w.schedule(pend[w.rng.IntN(len(pend))])
		w.step++
		w.checkStore()
		w.checkIceberg()
	}
	w.stopped = true
	for _, a := range w.actors {
		if a.state != done && a.state != waiting {
			w.kill(a)
		}
	}
	close(stop)
	w.mu.Unlock()
	w.wg.Wait()
}

// waitQuiet waits until no actor is running: each is blocked in a request
// or done. The lock is held.
func (w *World) waitQuiet() {
	start := time.Now()
	for w.anyRunning() && w.failure == nil {
		if time.Since(start) > w.cfg.StallTimeout {
			w.fail("sim", "actor %s ran for %s without making a request or finishing (blocked outside the store?)",
				w.runningNames(), w.cfg.StallTimeout)
			return
		}
		w.cond.Wait()
	}
}

// runningActor is the actor executing its own code (the one whose request
// was granted last, or the one just started), or nil.
func (w *World) runningActor() *actor {
	for _, a := range w.actors {
		if a.state == running {
			return a
		}
	}
	return nil
}

func (w *World) anyRunning() bool {
	for _, a := range w.actors {
		if a.state == running {
			return true
		}
	}
	return false
}

func (w *World) runningNames() string {
	var n []string
	for _, a := range w.actors {
		if a.state == running {
			n = append(n, a.name)
		}
	}
	return strings.Join(n, ",")
}

// Fault kinds the scheduler injects.
const (
	FaultUnavailable = "503"         // refused before it was applied (5xx, SlowDown, reset before sending)
	FaultConflict    = "409"         // ConditionalRequestConflict (conditional PUTs only), not applied
	FaultLostReply   = "lost-reply"  // applied, but the caller sees a transient error
	FaultLost412     = "lost-412"    // applied; the SDK's retry of it got 412 (conditional PUTs)
	FaultDelay       = "delay"       // the store's clock jumps forward before it is applied
	FaultKill        = "kill"        // the actor dies before this request is sent
	FaultExpired     = "expired"     // arrived past the actor's commit window (see Config.CommitWindow)
	FaultStaleRead   = "stale-read"  // planted bug: served an older version
	FaultPlantedSkip = "planted-hit" // planted bug: the real answer was replaced
)

// schedule lets one pending request proceed (or kills its actor), with a
// fault chosen by the seeded RNG. The lock is held.
func (w *World) schedule(a *actor) {
	r := a.req
	ev := Event{Actor: a.name, Request: r.String()}
	w.clock = w.clock.Add(time.Duration(w.rng.Int64N(int64(w.cfg.StepTime) + 1)))
	// Both draws are made whatever they decide, so that a suppressed fault
	// leaves the rest of the RNG stream where it was.
	killDraw, faultDraw := w.rng.Float64(), w.rng.Float64()
	kindDraw, delayDraw := w.rng.Uint64(), w.rng.Int64N(int64(w.cfg.MaxDelay-time.Second)+1)
	suppressed := func() bool {
		n := w.decisions
		w.decisions++
		return w.cfg.Suppressed[n]
	}
	if a.killable && killDraw < w.cfg.KillRate && !suppressed() {
		w.faults[FaultKill]++
		ev.Fault = FaultKill
		ev.Outcome = "killed; the request is never sent"
		w.record(ev)
		w.kill(a)
		return
	}
	fault := ""
	if faultDraw < w.cfg.FaultRate && r.op != "pause" && !suppressed() {
		kinds := []string{FaultUnavailable, FaultDelay}
		if r.isWrite() {
			kinds = append(kinds, FaultLostReply)
		}
		if r.isConditional() {
			kinds = append(kinds, FaultConflict, FaultLost412)
		}
		fault = kinds[kindDraw%uint64(len(kinds))]
	}
	if fault == FaultDelay {
		w.clock = w.clock.Add(time.Second + time.Duration(delayDraw))
	}
	if a.window && !a.lastNow.IsZero() && isMetadata(r) && w.clock.Sub(a.lastNow) > w.cfg.CommitWindow {
		fault = FaultExpired
	}
	// A publisher's version (and hint) PUT lands within CommitWindow of the
	// pointer reads of its attempt (lakehouse.Options.MaxElapsed on its clock, and
	// request timeouts): later, it is refused as in flight too long.
	_, isVersion := lakehouse.VersionOfKey(r.key)
	if a.kind == "publisher" && r.op == "put" && (isVersion || r.key == lakehouse.VersionHintKey) &&
		!a.pubStart.IsZero() && w.clock.Sub(a.pubStart) > w.cfg.CommitWindow {
		fault = FaultExpired
	}
	w.cur = a
	a.requests++
	switch fault {
	case FaultUnavailable:
		r.err = fmt.Errorf("sim: 503 SlowDown (not applied): %w", store.ErrTransient)
	case FaultConflict:
		r.err = fmt.Errorf("sim: 409 ConditionalRequestConflict (not applied): %w", store.ErrTransient)
	case FaultExpired:
		r.err = fmt.Errorf("sim: request arrived past the actor's commit window (not applied): %w", store.ErrTransient)
	case FaultLostReply:
		w.apply(r)
		ev.Outcome = "applied: " + outcomeOf(r) + "; "
		r.err = fmt.Errorf("sim: reply lost (the request was applied): %w", store.ErrTransient)
	case FaultLost412:
		w.apply(r)
		ev.Outcome = "applied: " + outcomeOf(r) + "; "
		if r.err == nil {
			r.err = fmt.Errorf("sim: 412 on the SDK's retry of our own write: %w", store.ErrPrecondition)
		}
	default:
		served, hit := w.plantedServe(a, r)
		if !served {
			w.apply(r)
		}
		if hit {
			fault = FaultPlantedSkip
		}
	}
	w.cur = nil
	if fault != "" {
		w.faults[fault]++
	}
	if r.op == "get" && r.err == nil && isPointerKey(r.key) {
		a.lastPointerGet = w.clock
		if a.pubStart.IsZero() || a.pubPut {
			a.pubStart, a.pubPut = w.clock, false
		}
	}
	if r.op == "put" && isVersion {
		a.pubPut = true
	}
	ev.Fault = fault
	ev.Outcome += outcomeOf(r)
	w.record(ev)
	a.req = nil
	a.state = running
	w.cond.Broadcast()
}

func outcomeOf(r *request) string {
	switch {
	case r.err == nil && r.op == "list":
		keys := make([]string, len(r.page))
		for i, a := range r.page {
			keys[i] = a.Key
		}
		more := ""
		if r.more {
			more = " (more)"
		}
		return fmt.Sprintf("%d keys%s", len(keys), more)
	case r.err == nil && (r.op == "put" || r.op == "get"):
		return "ok etag=" + shortETag(r.attrs.ETag)
	case r.err == nil:
		return "ok"
	case errors.Is(r.err, context.Canceled):
		return "killed"
	case errors.Is(r.err, store.ErrPrecondition):
		return "412"
	case errors.Is(r.err, store.ErrNotFound):
		return "404"
	case errors.Is(r.err, store.ErrTransient):
		return "transient error"
	}
	return "error: " + r.err.Error()
}

// metadataDigest is a digest of every Iceberg metadata object (keys and
// bytes), for comparing runs.
func (w *World) metadataDigest() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := sha256.New()
	n := 0
	for _, k := range slices.Sorted(maps.Keys(w.objs)) {
		if strings.HasPrefix(k, lakehouse.MetadataPrefix) {
			n++
			fmt.Fprintf(h, "%s\x00%d\x00", k, len(w.objs[k].data))
			h.Write(w.objs[k].data)
		}
	}
	return fmt.Sprintf("%d objects %x", n, h.Sum(nil)[:8])
}

// Trace returns the run's events.
func (w *World) Trace() []Event { return slices.Clone(w.trace) }
