package lakehouse_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// clone copies every object of src into a new memory store.
func clone(t *testing.T, src store.Store) store.Store {
	t.Helper()
	dst := memstore.New(memstore.Options{})
	for a, err := range src.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := store.ReadAll(ctx, src, a.Key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dst.Put(ctx, a.Key, data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// metadataObjects returns every object under metadata/, by key.
func metadataObjects(t *testing.T, st store.Store) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for a, err := range st.List(ctx, lakehouse.MetadataPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := store.ReadAll(ctx, st, a.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[a.Key] = data
	}
	return out
}

// With the same clock, random source and sleeps injected, two publishes of
// the same commits (a first publish, a commit's publish, a reconcile, an
// expiry) write byte-identical metadata under identical names; without
// them, the names differ (snapshot ids, manifest list names).
func TestInjectedSourcesAreDeterministic(t *testing.T) {
	base := memstore.New(memstore.Options{})
	first := commit(t, base, "dt=2026-11-01", 5, "a", swap.Options{})
	commit(t, base, "dt=2026-11-02", 4, "b", swap.Options{})

	// injected holds the environments (internal/env) of the publishes and
	// of the expiry.
	type injected struct{ publish, expire context.Context }
	publishAll := func(st store.Store, in injected, expire lakehouse.ExpireOptions) map[string][]byte {
		opts := lakehouse.Options{Concurrency: 1}
		if _, err := lakehouse.PublishCommit(in.publish, st, lakehouse.Commit{Partition: first.Partition, Generation: first.Generation, Seq: first.Seq}, opts); err != nil {
			t.Fatal(err)
		}
		if _, err := lakehouse.Publish(in.publish, st, opts); err != nil {
			t.Fatal(err)
		}
		// The same generation id on both stores.
		ids := env.With(ctx, &env.Env{GenerationIDs: func() string { return "01a2321e-ffff-7000-8000-000000000003" }})
		res, _, err := commitIn(ids, st, "dt=2026-11-01", swap.Options{OnConflict: swap.Overwrite, RunID: "r2"}, rows(3, "c")...)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := lakehouse.PublishCommit(in.publish, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, opts); err != nil || !r.Changed {
			t.Fatalf("publish: %+v %v", r, err)
		}
		if r, err := lakehouse.Expire(in.expire, st, expire); err != nil || len(r.Expired) == 0 {
			t.Fatalf("expire: %+v %v", r, err)
		}
		checkReaders(t, st)
		return metadataObjects(t, st)
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var slept []time.Duration
	inject := func(seed uint64) (injected, lakehouse.ExpireOptions) {
		rng := rand.New(rand.NewPCG(seed, 7))
		clock := at
		now := func() time.Time { clock = clock.Add(1500 * time.Millisecond); return clock }
		sleep := func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
		return injected{
				publish: env.With(ctx, &env.Env{Clock: now, Rand: rng, Timer: sleep}),
				expire:  env.With(ctx, &env.Env{Timer: sleep}),
			},
			lakehouse.ExpireOptions{Retention: time.Second, MinAge: time.Nanosecond, Now: func() time.Time { return at.Add(time.Hour) }}
	}
	o1, e1 := inject(1)
	o2, e2 := inject(1)
	a := publishAll(clone(t, base), o1, e1)
	b := publishAll(clone(t, base), o2, e2)
	if len(a) < 4 {
		t.Fatalf("only %d metadata objects", len(a))
	}
	for k, v := range a {
		if !bytes.Equal(b[k], v) {
			t.Fatalf("%s differs between two publishes with the same sources (or is missing: %v):\n%s\n%s", k, b[k] == nil, v, b[k])
		}
	}
	if len(a) != len(b) {
		t.Fatalf("%d vs %d metadata objects", len(a), len(b))
	}
	latest := string(a[lakehouse.MetadataKey(4)])
	if !strings.Contains(latest, `"last-updated-ms":`+strconv.FormatInt(at.Add(time.Hour).UnixMilli(), 10)) {
		t.Fatalf("the expiry's version is not stamped with its clock: %.300s", latest)
	}
	// Another seed names its objects differently.
	o3, e3 := inject(2)
	c := publishAll(clone(t, base), o3, e3)
	same := 0
	for k := range c {
		if a[k] != nil {
			same++
		}
	}
	if same == len(c) {
		t.Fatal("a different random source gave the same object names")
	}
	if len(slept) != 0 {
		t.Fatalf("slept %v without any failure", slept)
	}
}

// hookStore runs a function once, before the first request for a key.
type hookStore struct {
	store.Store
	key  string
	hook func()
}

func (h *hookStore) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	if key == h.key && h.hook != nil {
		f := h.hook
		h.hook = nil
		f()
	}
	return h.Store.Get(ctx, key)
}

// A reconcile that read the pointers before a later commit's publish landed
// must not put the older generation back over it (Publish
// Publish compared the metadata's sequence number with the pointer's for
// equality only, and so replaced the newer manifest with the older one;
// found while adding the publisher to the simulation).
func TestReconcileNeverGoesBack(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	part := "dt=2026-11-01"
	publish(t, mem, commit(t, mem, part, 10, "a", swap.Options{}))
	commit(t, mem, part, 7, "b", swap.Options{OnConflict: swap.Overwrite}) // not published
	hs := &hookStore{Store: mem, key: lakehouse.VersionHintKey}
	hs.hook = func() {
		// After the reconcile read the pointers (seq 2), before it loads the
		// metadata: a commit (seq 3) and its publish land.
		publish(t, mem, commit(t, mem, part, 3, "c", swap.Options{OnConflict: swap.Overwrite}))
	}
	r, err := lakehouse.Publish(ctx, hs, lakehouse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hs.hook != nil {
		t.Fatal("the hook never ran")
	}
	if r.Changed {
		t.Fatalf("the reconcile wrote a version over a newer one: %+v", r)
	}
	if got := checkReaders(t, mem); got[part] != 3 {
		t.Fatalf("rows %v, want the latest commit's 3", got)
	}
}

// putHookStore runs a function once, before the first PUT of a key with
// the prefix (other PUTs of a publish, which run at once, wait for it).
type putHookStore struct {
	store.Store
	prefix string
	mu     sync.Mutex
	hook   func()
}

func (h *putHookStore) Put(ctx context.Context, key string, data []byte, o store.PutOptions) (store.Attrs, error) {
	if strings.HasPrefix(key, h.prefix) {
		h.mu.Lock()
		if f := h.hook; f != nil {
			h.hook = nil
			f()
		}
		h.mu.Unlock()
	}
	return h.Store.Put(ctx, key, data, o)
}

// An attempt that takes longer than MaxElapsed from its pointer read to its
// version does not write that version (GC may have collected what the
// pointer named meanwhile, gc.Options.Protect): it plans again from a fresh
// read, and publishes what is current then (found by the simulation: a
// reconcile that took 8 s named a generation GC collected 2 s after it
// asked what the snapshots name).
func TestSlowAttemptPlansAgain(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	part := "dt=2026-11-01"
	first := commit(t, mem, part, 4, "a", swap.Options{})
	clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	hs := &putHookStore{Store: mem, prefix: lakehouse.MetadataPrefix + "pswap-"}
	hs.hook = func() {
		clock = clock.Add(2 * time.Minute)
		commit(t, mem, part, 6, "b", swap.Options{OnConflict: swap.Overwrite})
	}
	r, err := lakehouse.PublishCommit(clocked(now), hs, lakehouse.Commit{Partition: part, Generation: first.Generation, Seq: first.Seq},
		lakehouse.Options{MaxElapsed: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.Rebases != 1 || r.Version != 1 {
		t.Fatalf("publish: %+v, want one version after one re-plan", r)
	}
	if got := checkReaders(t, mem); got[part] != 6 {
		t.Fatalf("rows %v: the slow attempt's generation was published, not the current one", got)
	}
}

// failHint fails every PUT of the version hint.
type failHint struct{ store.Store }

func (f failHint) Put(ctx context.Context, key string, data []byte, o store.PutOptions) (store.Attrs, error) {
	if key == lakehouse.VersionHintKey {
		return store.Attrs{}, errors.New("hint PUT refused by the test")
	}
	return f.Store.Put(ctx, key, data, o)
}

// The expiry never deletes the version the hint names (a publish whose hint
// update failed leaves the hint behind; without its version every later
// publish found the metadata corrupt), and brings the hint up to date so
// that the next expiry can (found by the simulation: a lost reply on a
// version PUT, a 412 on its retry, the hint left at 1, v1 swept).
func TestExpireKeepsTheHintedVersion(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	part := "dt=2026-11-01"
	publish(t, mem, commit(t, mem, part, 4, "a", swap.Options{}))
	b := commit(t, mem, part, 5, "b", swap.Options{OnConflict: swap.Overwrite})
	if r, err := lakehouse.PublishCommit(ctx, failHint{mem}, lakehouse.Commit{Partition: part, Generation: b.Generation, Seq: b.Seq}, lakehouse.Options{}); err != nil || r.Version != 2 {
		t.Fatalf("publish: %+v %v", r, err)
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	expire := lakehouse.ExpireOptions{Retention: time.Millisecond, MinAge: time.Millisecond, Now: later}
	r, err := lakehouse.Expire(ctx, mem, expire)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(r.Deleted, lakehouse.MetadataKey(1)) {
		t.Fatalf("the expiry deleted the version the hint names: %v", r.Deleted)
	}
	// ... nor what it needs: a reader that trusts the hint opens v1, its
	// manifest lists and their manifests (found by the simulation: the
	// sweep kept v1 and deleted its manifest list).
	for _, snap := range readMeta(t, mem, 1).Snapshots() {
		key := snap.ManifestList[strings.Index(snap.ManifestList, lakehouse.MetadataPrefix):]
		if _, err := mem.Stat(ctx, key); err != nil {
			t.Fatalf("the hinted version's manifest list %s: %v (deleted %v)", key, err, r.Deleted)
		}
	}
	publish(t, mem, commit(t, mem, part, 6, "c", swap.Options{OnConflict: swap.Overwrite}))
	if got := checkReaders(t, mem); got[part] != 6 {
		t.Fatalf("rows %v", got)
	}
	r, err = lakehouse.Expire(ctx, mem, expire)
	if err != nil || !slices.Contains(r.Deleted, lakehouse.MetadataKey(1)) {
		t.Fatalf("the second expiry kept v1: %+v %v", r, err)
	}
}

// countPuts counts the PUTs of keys with a prefix.
type countPuts struct {
	store.Store
	prefix string
	n      int
}

func (c *countPuts) Put(ctx context.Context, key string, data []byte, o store.PutOptions) (store.Attrs, error) {
	if strings.HasPrefix(key, c.prefix) {
		c.n++
	}
	return c.Store.Put(ctx, key, data, o)
}

// A publish whose attempts span more than MaxElapsed writes its manifests
// anew (under a new snapshot id) instead of naming the ones an early
// attempt wrote: nothing names those yet, so the expiry may have deleted
// them as older than its MinAge (found by the simulation: a publisher that
// lost the race, planned again and waited named a manifest swept 40 s
// earlier).
func TestLateAttemptWritesItsManifestsAgain(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	a := commit(t, mem, "dt=2026-11-01", 4, "a", swap.Options{})
	b := commit(t, mem, "dt=2026-11-02", 5, "b", swap.Options{})
	clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	opts := lakehouse.Options{MaxElapsed: time.Minute}
	hook := &putHookStore{Store: mem, prefix: lakehouse.MetadataKey(1)}
	hook.hook = func() {
		// Another publisher wins version 1 (in line: not through the
		// lease this one holds); this one rebases much later.
		if _, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: b.Partition, Generation: b.Generation, Seq: b.Seq}, lakehouse.Options{WaitForView: true}); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(2 * time.Minute)
	}
	counted := &countPuts{Store: hook, prefix: lakehouse.MetadataPrefix + "pswap-"}
	r, err := lakehouse.PublishCommit(clocked(func() time.Time { return clock }), counted, lakehouse.Commit{Partition: a.Partition, Generation: a.Generation, Seq: a.Seq}, opts)
	if err != nil || r.Version != 2 || r.Rebases != 1 {
		t.Fatalf("publish: %+v %v", r, err)
	}
	if counted.n != 2 {
		t.Fatalf("%d manifest PUTs, want 2: the late attempt reused the early one's manifest", counted.n)
	}
	if got := checkReaders(t, mem); got["dt=2026-11-01"] != 4 || got["dt=2026-11-02"] != 5 {
		t.Fatalf("rows %v", got)
	}
}

// testClock is a clock that a test moves while a publish reads it from
// several goroutines.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
