package viewtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// Driver is a view under test.
type Driver interface {
	// Name names the view in subtests and reports.
	Name() string
	// PublishCommit brings the view up to date with one commit, as the
	// commit path does right after it.
	PublishCommit(ctx context.Context, st store.Store, c Commit) error
	// Publish brings the view up to date with every pointer.
	Publish(ctx context.Context, st store.Store) error
	// Check returns nil when the view's current version equals the
	// pointers: every partition's files and no other, with every column
	// of table.json; else an error saying how they differ.
	Check(ctx context.Context, st store.Store) error
	// IsVersion reports whether key is one of the view's versions, whose
	// create-if-absent PUT is its commit point.
	IsVersion(key string) bool
	// Prefix is the folder of the view's files: a refused publish writes
	// nothing under it.
	Prefix() string
	// Foreign changes the view as another writer would: an add without
	// pswap's tags, another engine's snapshot.
	Foreign(ctx context.Context, st store.Store) error
	// ErrForeign is the error a publish of a view another writer changed
	// matches (errors.Is).
	ErrForeign() error
	// DeleteNewest deletes the view's newest version, as a peer's
	// maintenance or a user could.
	DeleteNewest(ctx context.Context, st store.Store) error
}

// Options tune the suite. The zero value works.
type Options struct {
	// NewStore opens the store of an empty table (default: a memstore).
	NewStore func(t *testing.T) store.Store
	// Rounds of RacingEvolve (default 10, 3 with -short) and the plain
	// publishers of each (default 6).
	Rounds, Racers int
	// Report, when not nil, is told what each case did: n faults
	// injected (requests failed, publishes killed, rounds raced).
	Report func(driver, fault string, n int)
	// Known are the cases (by name) the driver is known to fail, with
	// why: skipped with that reason, unless the environment variable
	// KnownEnv is set to 1 (to see them fail, or pass once fixed).
	Known map[string]string
}

// KnownEnv, set to 1, runs the cases of Options.Known too.
const KnownEnv = "PSWAP_VIEWTEST_KNOWN"

func (o Options) withDefaults() Options {
	if o.NewStore == nil {
		o.NewStore = func(*testing.T) store.Store { return memstore.New() }
	}
	if o.Rounds <= 0 {
		o.Rounds = 10
		if testing.Short() {
			o.Rounds = 3
		}
	}
	if o.Racers <= 0 {
		o.Racers = 6
	}
	if o.Report == nil {
		o.Report = func(string, string, int) {}
	}
	return o
}

type harness struct {
	newDriver func() Driver
	opts      Options
}

// cases is the suite, in the order Run runs it; each name is a subtest.
var cases = []struct {
	name string
	fn   func(t *testing.T, h harness) int
}{
	{"Transient", testTransient},
	{"LostReply", testLostReply},
	{"HeldRaceCommit", func(t *testing.T, h harness) int { return testHeldRace(t, h, false) }},
	{"HeldRaceReconcile", func(t *testing.T, h harness) int { return testHeldRace(t, h, true) }},
	{"RacingEvolveCommits", func(t *testing.T, h harness) int { return testRacingEvolve(t, h, false) }},
	{"RacingEvolve", func(t *testing.T, h harness) int { return testRacingEvolve(t, h, true) }},
	{"Foreign", testForeign},
	{"Kill", testKill},
	{"DeleteNewest", testDeleteNewest},
}

// Run runs the suite against the drivers newDriver makes (one per
// publisher: a driver may keep state across its calls).
func Run(t *testing.T, newDriver func() Driver, opts Options) {
	h := harness{newDriver: newDriver, opts: opts.withDefaults()}
	name := newDriver().Name()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := h.opts.Known[c.name]; ok && os.Getenv(KnownEnv) != "1" {
				t.Skipf("known to fail (%s=1 runs it): %s", KnownEnv, why)
			}
			n := c.fn(t, h)
			if !t.Failed() {
				h.opts.Report(name, c.name, n)
			}
		})
	}
}

// published is a table of three partitions, the view published.
func (h harness) published(t *testing.T) (store.Store, Driver) {
	t.Helper()
	st := h.opts.NewStore(t)
	newTable(t, st)
	for i := 1; i <= 3; i++ {
		commitDay(t, st, i, int64(i))
	}
	d := h.newDriver()
	if err := d.Publish(context.Background(), st); err != nil {
		t.Fatalf("%s: first publish: %v", d.Name(), err)
	}
	mustEqual(t, d, st, "after the first publish")
	return st, d
}

func mustEqual(t *testing.T, d Driver, st store.Store, when string) {
	t.Helper()
	if err := d.Check(context.Background(), st); err != nil {
		t.Fatalf("%s %s: the view differs from the pointers: %v", d.Name(), when, err)
	}
}

var errInjected503 = fmt.Errorf("injected 503: %w", store.ErrTransient)

// isRead is a request that reads.
func isRead(op string) bool {
	return op == "get" || op == "get-range" || op == "stat" || op == "list"
}

// testTransient: one 503 on the first request of every key read; a
// commit's publish and a reconcile both publish.
func testTransient(t *testing.T, h harness) int {
	st, _ := h.published(t)
	var faults atomic.Int64
	flaky := storetest.NewFaulty(st, func(c storetest.Call) storetest.Fault {
		if c.N == 1 && isRead(c.Op) {
			faults.Add(1)
			return storetest.Fault{Before: errInjected503}
		}
		return storetest.Fault{}
	})
	ctx := context.Background()
	c := commitDay(t, st, 4, 40)
	d := h.newDriver()
	if err := d.PublishCommit(ctx, flaky, c); err != nil {
		t.Fatalf("publish a commit under one 503 per read (%d so far): %v", faults.Load(), err)
	}
	mustEqual(t, d, st, "after a commit's publish under 503s")
	commitDay(t, st, 1, 10)
	commitDay(t, st, 5, 50)
	if err := h.newDriver().Publish(ctx, flaky); err != nil {
		t.Fatalf("reconcile under one 503 per read (%d so far): %v", faults.Load(), err)
	}
	mustEqual(t, d, st, "after a reconcile under 503s")
	if faults.Load() == 0 {
		t.Fatal("no fault was injected")
	}
	return int(faults.Load())
}

// testLostReply: every version PUT is applied and its reply lost, and
// the first read of the version (the read-back that settles the PUT)
// fails with a 503.
func testLostReply(t *testing.T, h harness) int {
	st, _ := h.published(t)
	var faults atomic.Int64
	lossy := storetest.NewFaulty(st, func(c storetest.Call) storetest.Fault {
		if c.N != 1 || !h.newDriver().IsVersion(c.Key) {
			return storetest.Fault{}
		}
		switch {
		case c.Op == "put":
			faults.Add(1)
			return storetest.Fault{After: fmt.Errorf("injected lost reply: %w", store.ErrTransient)}
		case c.Op == "get" || c.Op == "get-range":
			return storetest.Fault{Before: errInjected503}
		}
		return storetest.Fault{}
	})
	ctx := context.Background()
	c := commitDay(t, st, 4, 40)
	d := h.newDriver()
	if err := d.PublishCommit(ctx, lossy, c); err != nil {
		t.Fatalf("publish a commit whose version PUT lost its reply: %v", err)
	}
	mustEqual(t, d, st, "after a commit's publish with a lost reply")
	commitDay(t, st, 2, 20)
	if err := h.newDriver().Publish(ctx, lossy); err != nil {
		t.Fatalf("reconcile whose version PUT lost its reply: %v", err)
	}
	mustEqual(t, d, st, "after a reconcile with a lost reply")
	if faults.Load() != 2 {
		t.Fatalf("%d replies lost, want 2 (one per version)", faults.Load())
	}
	return int(faults.Load())
}

// testHeldRace: a publish of a plain commit (or a reconcile) is held at
// its version PUT until a commit that evolved the schema, of a new
// partition, is published; it then loses the race and plans again. The
// view keeps the new column and the new partition.
func testHeldRace(t *testing.T, h harness, reconcile bool) int {
	{
		{
			st, _ := h.published(t)
			ctx := context.Background()
			c := commitDay(t, st, 4, 40)
			var once sync.Once
			held, release := make(chan struct{}), make(chan struct{})
			d := h.newDriver()
			slow := storetest.NewFaulty(st, func(c storetest.Call) storetest.Fault {
				if c.Op == "put" && d.IsVersion(c.Key) {
					once.Do(func() {
						close(held)
						<-release
					})
				}
				return storetest.Fault{}
			})
			done := make(chan error, 1)
			go func() {
				if !reconcile {
					done <- d.PublishCommit(ctx, slow, c)
				} else {
					done <- d.Publish(ctx, slow)
				}
			}()
			select {
			case <-held:
			case err := <-done:
				t.Fatalf("the publish ended before its version PUT: %v", err)
			}
			ec, err := commitEvolved(ctx, st, 5)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.newDriver().PublishCommit(ctx, st, ec); err != nil {
				t.Fatalf("the evolving commit's publish: %v", err)
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("the held publish: %v", err)
			}
			mustEqual(t, d, st, "after the held publish lost the race to a schema evolution")
		}
	}
	return 1
}

// testRacingEvolve: publishers of plain commits (half of them reconciles,
// with reconcile) race one commit that evolves the schema; every round
// ends with the view equal to the pointers, the new column included.
func testRacingEvolve(t *testing.T, h harness, reconcile bool) int {
	ctx := context.Background()
	for round := range h.opts.Rounds {
		st, _ := h.published(t)
		var plain []Commit
		for i := range h.opts.Racers {
			plain = append(plain, commitDay(t, st, 10+i, int64(i)))
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range h.opts.Racers {
			wg.Go(func() {
				<-start
				d := h.newDriver()
				var err error
				if i%2 == 0 || !reconcile {
					err = d.PublishCommit(ctx, st, plain[i])
				} else {
					err = d.Publish(ctx, st)
				}
				if err != nil {
					t.Errorf("round %d: publisher %d: %v", round, i, err)
				}
			})
		}
		wg.Go(func() {
			<-start
			ec, err := commitEvolved(ctx, st, 30)
			if err != nil {
				t.Errorf("round %d: %v", round, err)
				return
			}
			if err := h.newDriver().PublishCommit(ctx, st, ec); err != nil {
				t.Errorf("round %d: the evolving publish: %v", round, err)
			}
		})
		close(start)
		wg.Wait()
		if t.Failed() {
			return round
		}
		mustEqual(t, h.newDriver(), st, fmt.Sprintf("after round %d", round))
	}
	return h.opts.Rounds
}

// snapshot is every object under prefix with its tag.
func snapshot(t *testing.T, st store.Store, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for a, err := range st.List(context.Background(), prefix) {
		if err != nil {
			t.Fatal(err)
		}
		out[a.Key] = fmt.Sprintf("%d/%s", a.Size, a.ETag)
	}
	return out
}

// testForeign: after another writer changed the view, a commit's publish
// and a reconcile refuse with ErrForeign and write nothing.
func testForeign(t *testing.T, h harness) int {
	st, d := h.published(t)
	ctx := context.Background()
	if err := d.Foreign(ctx, st); err != nil {
		t.Fatalf("the foreign change: %v", err)
	}
	c := commitDay(t, st, 4, 40)
	before := snapshot(t, st, d.Prefix())
	err := h.newDriver().PublishCommit(ctx, st, c)
	if !errors.Is(err, d.ErrForeign()) {
		t.Fatalf("publish over a foreign change: %v, want %v", err, d.ErrForeign())
	}
	err = h.newDriver().Publish(ctx, st)
	if !errors.Is(err, d.ErrForeign()) {
		t.Fatalf("reconcile over a foreign change: %v, want %v", err, d.ErrForeign())
	}
	if after := snapshot(t, st, d.Prefix()); !maps.Equal(before, after) {
		t.Fatalf("a refused publish wrote under %s: %v, before %v", d.Prefix(), slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
	return 2
}

// killer cancels its context at request number at (1-based): before
// the request, or (after) once it was applied.
type killer struct {
	at     int64
	after  bool
	n      atomic.Int64
	cancel context.CancelFunc
}

func (k *killer) inject(storetest.Call) storetest.Fault {
	if k.n.Add(1) != k.at {
		return storetest.Fault{}
	}
	if k.after {
		return storetest.Fault{Hook: k.cancel, After: context.Canceled}
	}
	k.cancel()
	return storetest.Fault{Before: context.Canceled}
}

// testKill: a commit's publish killed at each of its requests in turn
// (its context cancelled there, before the request or once it was
// applied); whatever it left, the view equals the pointers after it
// returned nil, and a fresh reconcile converges it after it failed.
func testKill(t *testing.T, h harness) int {
	kills := 0
	for _, after := range []bool{false, true} {
		kills += killEach(t, h, after)
	}
	return kills
}

func killEach(t *testing.T, h harness, after bool) int {
	st, _ := h.published(t)
	const maxRequests = 500
	kills := 0
	for at := int64(1); at <= maxRequests; at++ {
		c := commitDay(t, st, 1+int(at%4), at)
		ctx, cancel := context.WithCancel(context.Background())
		k := &killer{at: at, after: after, cancel: cancel}
		d := h.newDriver()
		err := d.PublishCommit(ctx, storetest.NewFaulty(st, k.inject), c)
		cancel()
		if k.n.Load() < at {
			// Not killed: it made fewer requests. Done.
			if err != nil {
				t.Fatalf("the publish that was not killed: %v", err)
			}
			mustEqual(t, d, st, "after a whole publish")
			return kills
		}
		kills++
		if err == nil {
			mustEqual(t, d, st, fmt.Sprintf("after a publish killed at request %d that returned nil", at))
			continue
		}
		if !errors.Is(err, context.Canceled) {
			t.Logf("killed at request %d: %v", at, err)
		}
		if err := h.newDriver().Publish(context.Background(), st); err != nil {
			t.Fatalf("reconcile after a publish killed at request %d: %v", at, err)
		}
		mustEqual(t, d, st, fmt.Sprintf("after the reconcile that followed a kill at request %d", at))
	}
	t.Fatalf("a publish still ran past %d requests", maxRequests)
	return kills
}

// testDeleteNewest: the newest view version deleted from outside; the
// view then differs from the pointers, and the next publish regenerates
// it.
func testDeleteNewest(t *testing.T, h harness) int {
	st, d := h.published(t)
	ctx := context.Background()
	if err := d.PublishCommit(ctx, st, commitDay(t, st, 2, 20)); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, d, st, "after a commit's publish")
	if err := d.DeleteNewest(ctx, st); err != nil {
		t.Fatalf("delete the newest version: %v", err)
	}
	if err := d.Check(ctx, st); err == nil {
		t.Fatal("the view still equals the pointers after its newest version was deleted")
	}
	if err := h.newDriver().Publish(ctx, st); err != nil {
		t.Fatalf("reconcile after the newest version was deleted: %v", err)
	}
	mustEqual(t, d, st, "after the reconcile that followed the deletion")
	// And a commit after it publishes as usual.
	if err := h.newDriver().PublishCommit(ctx, st, commitDay(t, st, 3, 30)); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, d, st, "after the next commit")
	return 1
}

// Want are the pointers as a view must show them: by partition, the
// store keys of the current generation's files, sorted; and the columns
// of table.json (data and partition columns).
type Want struct {
	Files   map[string][]string
	Columns []string
}

// Compare reports how a view's files (by partition, store keys) and
// columns differ from want: nil when they are equal (the columns: when
// the view has every column of want).
func (w Want) Compare(files map[string][]string, columns []string) error {
	var diffs []string
	for _, p := range slices.Sorted(maps.Keys(w.Files)) {
		got := slices.Sorted(slices.Values(files[p]))
		if !slices.Equal(got, w.Files[p]) {
			diffs = append(diffs, fmt.Sprintf("%s: view %v, pointer %v", p, got, w.Files[p]))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if _, ok := w.Files[p]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: in the view %v, without a pointer", p, files[p]))
		}
	}
	for _, c := range w.Columns {
		if !slices.Contains(columns, c) {
			diffs = append(diffs, fmt.Sprintf("the view's schema %v lacks table.json's column %s", columns, c))
		}
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}
