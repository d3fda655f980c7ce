package lakehouse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// fakeCatalog is an in-memory catalog for the publish's side of the
// protocol (the catalog package's tests run real SQLite and PostgreSQL):
// its hooks fail or race a call.
type fakeCatalog struct {
	mu    sync.Mutex
	loc   string
	swaps int
	// beforeSwap runs before a swap applies: it may move the name first
	// (a racing publisher), or fail the swap without applying it.
	beforeSwap func(c *fakeCatalog) error
	// afterSwap fails a swap after it applied (a lost reply).
	afterSwap error
}

func (c *fakeCatalog) String() string { return "fake catalog" }

func (c *fakeCatalog) Current(context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loc == "" {
		return "", catalog.ErrNotRegistered
	}
	return c.loc, nil
}

func (c *fakeCatalog) Register(_ context.Context, loc string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loc != "" {
		return catalog.ErrCatalogConflict
	}
	c.loc = loc
	return nil
}

func (c *fakeCatalog) Swap(_ context.Context, prev, loc string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.beforeSwap; f != nil {
		c.beforeSwap = nil
		if err := f(c); err != nil {
			return err
		}
	}
	if c.loc != prev {
		return catalog.ErrCatalogConflict
	}
	c.loc = loc
	c.swaps++
	if err := c.afterSwap; err != nil {
		c.afterSwap = nil
		return err
	}
	return nil
}

// TestCatalogOutcomes: a swap whose reply is lost but which applied is a
// success (read back, never sent again); one that did not apply fails
// the publication with ErrCatalog and the published files' Result; a lost
// compare-and-swap is read again; a catalog already at a later version is
// left as it is.
func TestCatalogOutcomes(t *testing.T) {
	st := memstore.New()
	cat := &fakeCatalog{}
	pub := func(part string) (lakehouse.Result, error) {
		res := commit(t, st, part, 3, "c", swap.Options{OnConflict: swap.Overwrite, Force: true})
		return lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{Catalog: cat})
	}
	r, err := pub("dt=1")
	if err != nil || cat.loc != r.MetadataLocation {
		t.Fatalf("register: %+v %v, catalog at %q", r, err, cat.loc)
	}

	lost := errors.New("connection reset")
	cat.afterSwap = lost
	r, err = pub("dt=2")
	if err != nil || cat.loc != r.MetadataLocation || cat.swaps != 1 {
		t.Fatalf("a lost reply of an applied swap: %+v %v, catalog at %q after %d swaps", r, err, cat.loc, cat.swaps)
	}

	cat.beforeSwap = func(*fakeCatalog) error { return lost }
	r, err = pub("dt=3")
	if !errors.Is(err, catalog.ErrCatalog) || !errors.Is(err, lost) || r.Version != 3 || cat.swaps != 1 {
		t.Fatalf("a failed swap: %+v %v after %d swaps", r, err, cat.swaps)
	}

	// The table is dropped from the catalog before the swap: the lost
	// compare-and-swap reads it again and registers the table anew.
	cat.beforeSwap = func(c *fakeCatalog) error { c.loc = ""; return nil }
	r, err = pub("dt=4")
	if err != nil || cat.loc != r.MetadataLocation || r.Version != 4 {
		t.Fatalf("a dropped table is registered again: %+v %v at %q", r, err, cat.loc)
	}
	// A catalog at a later version of this table (its file exists, with
	// this table's uuid) is left as it is.
	later := r.MetadataLocation[:len(r.MetadataLocation)-len("v4.metadata.json")] + "v9.metadata.json"
	v4, _, err := store.ReadAll(ctx, st, lakehouse.MetadataKey(4))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, lakehouse.MetadataKey(9), v4, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	cat.loc = later
	r, err = pub("dt=5")
	if err != nil || cat.loc != later {
		t.Fatalf("a catalog at a later version was moved back: %+v %v, at %q", r, err, cat.loc)
	}
	if err := st.Delete(ctx, lakehouse.MetadataKey(9)); err != nil {
		t.Fatal(err)
	}
	// Another publisher moves the name (from v3 to v5) first: the swap
	// is lost, read again, and moves on from v5.
	cat.beforeSwap = func(c *fakeCatalog) error { c.loc = r.MetadataLocation; return nil }
	cat.loc = r.MetadataLocation[:len(r.MetadataLocation)-len("v5.metadata.json")] + "v3.metadata.json"
	r, err = pub("dt=6")
	if err != nil || cat.loc != r.MetadataLocation {
		t.Fatalf("a lost compare-and-swap: %+v %v, at %q", r, err, cat.loc)
	}
}

// TestCatalogAhead: a catalog that names a version past the one the
// publish found latest is up to date only if that version's file exists
// and carries the table's uuid: a missing one (a row set by hand, a table
// created again at the same location) is repaired, moved to the latest
// version; one of another table's uuid is refused (ErrCatalogForeign).
// The requests to the store per publish are counted: a catalog that is
// behind or current costs none beyond the publish's own, one that is
// ahead costs one GET of the version it names.
func TestCatalogAhead(t *testing.T) {
	mem := publishedTable(t, 3)
	cat := &fakeCatalog{}
	count := func(name string, c *storetest.Counting, f func(st store.Store) (lakehouse.Result, error)) (lakehouse.Result, int, error) {
		c.Reset()
		r, err := f(c)
		t.Logf("%s: %d requests %v, catalog at %s", name, c.Total(), c.Counts(), cat.loc)
		return r, c.Total(), err
	}
	st := storetest.NewCounting(mem)
	publish := func(st store.Store) (lakehouse.Result, error) {
		return lakehouse.Publish(ctx, st, lakehouse.Options{Catalog: cat})
	}
	// Registered; the same publish again costs its own requests only.
	r, _, err := count("register", st, publish)
	if err != nil || cat.loc != r.MetadataLocation {
		t.Fatalf("register: %+v %v", r, err)
	}
	_, plain, _ := count("no catalog", st, func(st store.Store) (lakehouse.Result, error) {
		return lakehouse.Publish(ctx, st, lakehouse.Options{})
	})
	_, current, err := count("current", st, publish)
	if err != nil || current != plain {
		t.Fatalf("a publish to a current catalog: %v, %d requests, %d without a catalog", err, current, plain)
	}
	root := r.MetadataLocation[:len(r.MetadataLocation)-len(lakehouse.MetadataKey(r.Version))]

	cat.loc = root + lakehouse.MetadataKey(99)
	r2, ahead, err := count("ahead, missing", st, publish)
	if err != nil || cat.loc != r.MetadataLocation || r2.Version != r.Version {
		t.Fatalf("a catalog naming a missing v99: %+v %v, catalog at %s", r2, err, cat.loc)
	}
	if ahead != plain+1 {
		t.Errorf("a publish repairing a catalog ahead: %d requests, want %d", ahead, plain+1)
	}

	// Another table's version copied to v7 of this location.
	other := publishedTable(t, 1)
	doc, _, err := store.ReadAll(ctx, other, lakehouse.MetadataKey(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Put(ctx, lakehouse.MetadataKey(7), doc, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	cat.loc = root + lakehouse.MetadataKey(7)
	_, _, err = count("ahead, another uuid", st, publish)
	if !errors.Is(err, catalog.ErrCatalogForeign) || !errors.Is(err, catalog.ErrCatalog) || cat.loc != root+lakehouse.MetadataKey(7) {
		t.Fatalf("a catalog naming another table's v7: %v, catalog at %s", err, cat.loc)
	}

	// This table's own later version (another publisher's) stays named.
	own, _, err := store.ReadAll(ctx, mem, lakehouse.MetadataKey(r.Version))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Put(ctx, lakehouse.MetadataKey(7), own, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = count("ahead, this table's", st, publish)
	if err != nil || cat.loc != root+lakehouse.MetadataKey(7) {
		t.Fatalf("a catalog naming this table's later v7: %v, catalog at %s", err, cat.loc)
	}
	// CommitLatest (garbage collection's) has no document at hand: it
	// reads the latest version's too.
	st.Reset()
	if _, err := lakehouse.CommitLatest(ctx, st, cat); err != nil || cat.loc != root+lakehouse.MetadataKey(7) {
		t.Fatalf("CommitLatest: %v, catalog at %s", err, cat.loc)
	}
}

// TestCatalogNamesMissingVersion: the metadata folder is deleted outside
// pswap (Spark's Delta VACUUM RETAIN 0 HOURS and delta-rs's full vacuum
// list it as garbage), so the next publish starts the history again at
// v1 while the catalog still names the old latest version, a file the
// store no longer has. The catalog is moved to the new version instead of
// being taken for a later publish's (TestCatalogOutcomes: a later version
// that exists is left alone).
func TestCatalogNamesMissingVersion(t *testing.T) {
	st := memstore.New()
	cat := &fakeCatalog{}
	for _, part := range []string{"dt=1", "dt=2", "dt=3"} {
		publish(t, st, commit(t, st, part, 2, "a", swap.Options{}))
		if _, err := lakehouse.CommitLatest(ctx, st, cat); err != nil {
			t.Fatal(err)
		}
	}
	if want := "/v3.metadata.json"; len(cat.loc) < len(want) || cat.loc[len(cat.loc)-len(want):] != want {
		t.Fatalf("the catalog names %q, want v3", cat.loc)
	}
	for a, err := range st.List(ctx, lakehouse.MetadataPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, a.Key); err != nil {
			t.Fatal(err)
		}
	}
	r, err := lakehouse.Publish(ctx, st, lakehouse.Options{Catalog: cat})
	if err != nil || r.Version != 1 {
		t.Fatalf("publish after the metadata folder was deleted: %+v %v, want v1", r, err)
	}
	if cat.loc != r.MetadataLocation {
		t.Fatalf("the catalog names %q, which the store no longer has; want the republished %q", cat.loc, r.MetadataLocation)
	}
}

// TestCatalogAfterPeerExpiry: Spark's or PyIceberg's expire_snapshots run
// through the catalog writes a metadata file of its own (the version's
// snapshots less the expired ones, its metadata log naming pswap's
// version) and points the catalog at it. pswap takes that file for the
// version it descends from: the catalog stays (same rows) until the next
// version, which it then names. A file that adds a snapshot (a foreign
// writer's) is still refused.
func TestCatalogAfterPeerExpiry(t *testing.T) {
	st := memstore.New()
	cat := &fakeCatalog{}
	for _, part := range []string{"dt=1", "dt=2", "dt=3"} {
		publish(t, st, commit(t, st, part, 2, "a", swap.Options{}))
	}
	if _, err := lakehouse.CommitLatest(ctx, st, cat); err != nil {
		t.Fatal(err)
	}
	v3 := cat.loc
	expired := peerExpiry(t, st, v3, "metadata/00004-expired.metadata.json", false)
	cat.loc = expired
	if _, err := lakehouse.CommitLatest(ctx, st, cat); err != nil || cat.loc != expired {
		t.Fatalf("a publish with nothing new: %v, catalog at %q, want the expiry's file left as it is", err, cat.loc)
	}
	res := commit(t, st, "dt=4", 2, "b", swap.Options{})
	r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{Catalog: cat})
	if err != nil || r.Version != 4 || cat.loc != r.MetadataLocation {
		t.Fatalf("the next commit after a peer's expiry: %+v %v, catalog at %q", r, err, cat.loc)
	}
	cat.loc = peerExpiry(t, st, r.MetadataLocation, "metadata/00005-foreign.metadata.json", true)
	if _, err := lakehouse.CommitLatest(ctx, st, cat); !errors.Is(err, catalog.ErrCatalogForeign) {
		t.Fatalf("a file with a snapshot pswap did not write: %v, want ErrCatalogForeign", err)
	}
}

// peerExpiry writes at key what a peer's expire_snapshots makes of the
// version at loc: its current snapshot only, and loc in its metadata log;
// with extra, also a snapshot of its own (a foreign writer's), current.
func peerExpiry(t *testing.T, st store.Store, loc, key string, extra bool) string {
	t.Helper()
	root := loc[:strings.Index(loc, "/metadata/")]
	data, _, err := store.ReadAll(ctx, st, strings.TrimPrefix(loc, root+"/"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // snapshot ids need all 64 bits
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	cur := m["current-snapshot-id"].(json.Number)
	var keep []any
	for _, s := range m["snapshots"].([]any) {
		if s.(map[string]any)["snapshot-id"] == cur {
			keep = append(keep, s)
		}
	}
	var logKeep []any
	for _, e := range m["snapshot-log"].([]any) {
		if e.(map[string]any)["snapshot-id"] == cur {
			logKeep = append(logKeep, e)
		}
	}
	if extra {
		id, _ := cur.Int64()
		seq, _ := keep[0].(map[string]any)["sequence-number"].(json.Number).Int64()
		s := maps.Clone(keep[0].(map[string]any))
		s["snapshot-id"], s["parent-snapshot-id"], s["sequence-number"] = id+1, cur, seq+1
		keep = append(keep, s)
		m["current-snapshot-id"], m["last-sequence-number"] = id+1, seq+1
		m["refs"] = map[string]any{"main": map[string]any{"snapshot-id": id + 1, "type": "branch"}}
		logKeep = append(logKeep, map[string]any{"snapshot-id": id + 1, "timestamp-ms": s["timestamp-ms"]})
	}
	m["snapshots"], m["snapshot-log"] = keep, logKeep
	mlog, _ := m["metadata-log"].([]any)
	m["metadata-log"] = append(mlog, map[string]any{"metadata-file": loc, "timestamp-ms": m["last-updated-ms"]})
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, key, out, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return root + "/" + key
}
