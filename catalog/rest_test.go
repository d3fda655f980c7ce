package catalog_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/catalog/restcat"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
)

// The REST catalog tests run against the real server of
// scripts/restcatalog.sh (Apache Iceberg's catalog handlers, JdbcCatalog
// on SQLite, S3FileIO on MinIO), with pswap tables on MinIO.

var nsSeq atomic.Int64

// restNamespace is a namespace no other test uses (the server is shared).
func restNamespace() string {
	return fmt.Sprintf("t%d_%d", time.Now().UnixNano()%1_000_000_000, nsSeq.Add(1))
}

// counter counts a catalog's requests, by method and status.
type counter struct {
	mu       sync.Mutex
	requests int
	byStatus map[int]int
	commits  int // POST .../tables/{t}
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	if c.byStatus == nil {
		c.byStatus = map[int]int{}
	}
	if err == nil {
		c.byStatus[resp.StatusCode]++
	}
	if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/tables/") {
		c.commits++
	}
	return resp, err
}

func (c *counter) take() (requests int, byStatus map[int]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	requests, byStatus = c.requests, c.byStatus
	c.requests, c.byStatus = 0, nil
	return requests, byStatus
}

// openREST opens the table ns.sales of srv with its token, counting its
// requests.
func openREST(t testing.TB, srv *testenv.RESTServer, ns, extra string, o catalog.Options) (*restcat.Catalog, *counter) {
	t.Helper()
	cfg, err := restcat.ParseURL(srv.CatalogURL(ns, "sales", extra))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Token, cfg.Credential = o.Token, o.Credential
	if o.Token == "" && o.Credential == "" {
		cfg.Token = srv.Token
	}
	cnt := &counter{}
	cfg.Client = &http.Client{Transport: cnt, Timeout: 30 * time.Second}
	c, err := restcat.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, cnt
}

// versionDoc reads pswap's version at loc from the table's store.
func versionDoc(t testing.TB, st store.Store, loc string) *lakehouse.Metadata {
	t.Helper()
	i := strings.Index(loc, "/"+lakehouse.MetadataDir+"/")
	data, _, err := store.ReadAll(ctx, st, loc[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	m, err := lakehouse.ParseMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkReflects checks that the catalog's table is pswap's version loc:
// the property, the current snapshot, the same snapshots, and a linear
// snapshot log.
func checkReflects(t testing.TB, srv *testenv.RESTServer, ns string, st store.Store, loc string) *testenv.RESTTable {
	t.Helper()
	tj := srv.Table(t, ns, "sales")
	if tj == nil {
		t.Fatalf("the catalog has no table %s.sales", ns)
	}
	m := versionDoc(t, st, loc)
	if got := tj.Metadata.Properties[restcat.PropMetadataLocation]; got != loc && tj.MetadataLocation != loc {
		t.Fatalf("the catalog reflects %q (file %s), want %q", got, tj.MetadataLocation, loc)
	}
	if cs := m.CurrentSnapshot(); cs == nil || tj.Metadata.CurrentSnapshotID == nil || *tj.Metadata.CurrentSnapshotID != cs.SnapshotID {
		t.Fatalf("the catalog's current snapshot %v, pswap's %+v", tj.Metadata.CurrentSnapshotID, cs)
	}
	var want, got []int64
	for _, s := range m.Snapshots() {
		want = append(want, s.SnapshotID)
	}
	for _, s := range tj.Metadata.Snapshots {
		got = append(got, s.ID)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Fatalf("the catalog's snapshots %v, pswap's %v", got, want)
	}
	tj.CheckLinear(t)
	return tj
}

// TestRESTPublishMovesTheName: the first publish creates the namespace
// (asked to) and registers pswap's version; each later one commits the
// difference, after which the catalog's table is pswap's version exactly;
// an idempotent publish sends no commit.
func TestRESTPublishMovesTheName(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	ns := restNamespace()
	st := testenv.S3(t)
	tb := pswap.NewTable(st)
	cat, cnt := openREST(t, srv, ns, "&create-namespace=true", catalog.Options{})
	opts := pswap.PublishOptions{Catalog: cat}
	for i, part := range []string{"dt=2026-01-01", "dt=2026-01-02", "dt=2026-01-01"} {
		pub := commitPart(t, tb, part, 10+i, opts)
		if !pub.Published || pub.Err != nil {
			t.Fatalf("publish %d: %+v", i, pub)
		}
		checkReflects(t, srv, ns, st, pub.MetadataLocation)
		n, by := cnt.take()
		t.Logf("publish %d: %d requests to the catalog %v", i+1, n, by)
	}
	r, err := tb.Publish(ctx, opts)
	if err != nil || r.Changed {
		t.Fatalf("publish again: %+v %v", r, err)
	}
	if n, by := cnt.take(); by[http.StatusOK] != n || n > 1 {
		t.Fatalf("an idempotent publish sent %d requests (%v), want one read", n, by)
	}
}

// TestRESTRefusals: a missing namespace, wrong credentials and a table of
// that name that is another table are refused with errors naming them,
// nothing registered or changed, never showing a secret; OAuth2 client
// credentials work.
func TestRESTRefusals(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	ns := restNamespace()
	st := testenv.S3(t)
	tb := pswap.NewTable(st)

	cat, _ := openREST(t, srv, ns, "", catalog.Options{})
	pub := commitPart(t, tb, "dt=2026-01-01", 5, pswap.PublishOptions{Catalog: cat})
	if pub.Published || !errors.Is(pub.Err, catalog.ErrNoNamespace) || !errors.Is(pub.Err, pswap.ErrBadInput) ||
		!strings.Contains(pub.Err.Error(), ns) {
		t.Fatalf("a missing namespace: %+v", pub)
	}
	if srv.Table(t, ns, "sales") != nil {
		t.Fatal("a refused registration registered the table")
	}

	const badToken = "Xyzzy-not-the-token-42"
	for name, o := range map[string]catalog.Options{
		"token":      {Token: badToken},
		"credential": {Credential: "pswap-test:" + badToken},
	} {
		cat, _ := openREST(t, srv, ns, "&create-namespace=true", o)
		r, err := tb.Publish(ctx, pswap.PublishOptions{Catalog: cat})
		if !errors.Is(err, restcat.ErrUnauthorized) || !errors.Is(err, catalog.ErrCatalog) || r.MetadataLocation == "" ||
			strings.Contains(err.Error(), badToken) {
			t.Fatalf("wrong %s: %+v %v", name, r, err)
		}
	}
	if srv.Table(t, ns, "sales") != nil {
		t.Fatal("refused credentials registered the table")
	}

	// OAuth2 client credentials: the token endpoint's token is used.
	cat, _ = openREST(t, srv, ns, "&create-namespace=true", catalog.Options{Credential: srv.Credential})
	r, err := tb.Publish(ctx, pswap.PublishOptions{Catalog: cat})
	if err != nil {
		t.Fatalf("client credentials: %+v %v", r, err)
	}
	checkReflects(t, srv, ns, st, r.MetadataLocation)

	// Another pswap table under the same name: refused, nothing changed.
	other := pswap.NewTable(testenv.S3(t))
	before := srv.Table(t, ns, "sales")
	cat, _ = openREST(t, srv, ns, "", catalog.Options{})
	pub = commitPart(t, other, "dt=2026-01-01", 3, pswap.PublishOptions{Catalog: cat})
	if pub.Published || !errors.Is(pub.Err, catalog.ErrCatalogForeign) {
		t.Fatalf("a foreign table of that name: %+v", pub)
	}
	if after := srv.Table(t, ns, "sales"); after.MetadataLocation != before.MetadataLocation {
		t.Fatalf("the foreign table was changed: %s -> %s", before.MetadataLocation, after.MetadataLocation)
	}
}

// TestRESTConcurrentPublishers: 16 writers, each with its own catalog
// client, commit and publish a partition each at once. Every one is
// published or pending (the publish lease's holder, one of them, publishes
// it before it returns), at least one is published, the catalog reflects
// the latest version exactly, and its history is linear.
func TestRESTConcurrentPublishers(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	ns := restNamespace()
	st := testenv.S3(t)
	tb := pswap.NewTable(st)
	cat, _ := openREST(t, srv, ns, "&create-namespace=true", catalog.Options{})
	if first := commitPart(t, tb, "dt=2026-01-00", 1, pswap.PublishOptions{Catalog: cat}); !first.Published {
		t.Fatal(first.Err)
	}
	const n = 16
	var wg sync.WaitGroup
	var rebases, pending atomic.Int64
	counters := make([]*counter, n)
	start := time.Now()
	for i := range n {
		c, cnt := openREST(t, srv, ns, "", catalog.Options{})
		counters[i] = cnt
		wg.Go(func() {
			pub := commitPart(t, tb, fmt.Sprintf("dt=2026-01-%02d", i+1), 3+i, pswap.PublishOptions{Catalog: c})
			if pub.Err != nil || (!pub.Published && !pub.Pending) {
				t.Errorf("writer %d: neither published nor pending: %v", i, pub.Err)
				return
			}
			if pub.Pending {
				pending.Add(1)
			}
			rebases.Add(int64(pub.Rebases))
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if pending.Load() == n {
		t.Fatalf("all %d writers pending: none held the publish lease", n)
	}
	loc, v, err := lakehouse.Latest(ctx, tb.Store())
	if err != nil {
		t.Fatal(err)
	}
	tj := checkReflects(t, srv, ns, st, loc)
	var requests, conflicts, commits int
	for _, c := range counters {
		requests += c.requests
		conflicts += c.byStatus[http.StatusConflict]
		commits += c.commits
	}
	t.Logf("%d writers: all published or pending (%d) in %v, %d rebases, latest version %d, %d catalog requests, %d commits, %d conflicts (409), %d snapshots in the catalog",
		n, pending.Load(), elapsed.Round(time.Millisecond), rebases.Load(), v, requests, commits, conflicts, len(tj.Metadata.Snapshots))
}

// TestRESTExpiry: an expiry with the catalog commits the removal of the
// snapshots it expires (remove-snapshots) before it deletes metadata; the
// catalog's own metadata files in the table's metadata/ folder are never
// deleted. (The expiry runs on a clock two days ahead, which the server's
// own clock then refuses for a later commit: no publish follows here.)
func TestRESTExpiry(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	ns := restNamespace()
	st := testenv.S3(t)
	tb := pswap.NewTable(st)
	cat, _ := openREST(t, srv, ns, "&create-namespace=true", catalog.Options{})
	opts := pswap.PublishOptions{Catalog: cat}
	var last pswap.Publication
	for i, part := range []string{"dt=2026-01-01", "dt=2026-01-02", "dt=2026-01-01"} {
		if last = commitPart(t, tb, part, 3+i, opts); !last.Published {
			t.Fatal(last.Err)
		}
	}
	before := checkReflects(t, srv, ns, st, last.MetadataLocation)
	if len(before.Metadata.Snapshots) != 3 {
		t.Fatalf("%d snapshots before the expiry", len(before.Metadata.Snapshots))
	}
	later := time.Now().Add(48 * time.Hour)
	res, err := lakehouse.Expire(ctx, st, lakehouse.ExpireOptions{Retention: time.Hour, MinAge: time.Minute,
		Now: func() time.Time { return later }, Catalog: cat})
	if err != nil || len(res.Expired) != 2 || res.Version != 4 || len(res.Deleted) == 0 {
		t.Fatalf("expire: %+v %v", res, err)
	}
	loc, _, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	after := checkReflects(t, srv, ns, st, loc)
	if len(after.Metadata.Snapshots) != 1 {
		t.Fatalf("the catalog keeps %d snapshots after the expiry", len(after.Metadata.Snapshots))
	}
	// The catalog's metadata files are the catalog's: never deleted.
	for _, m := range []string{before.MetadataLocation, after.MetadataLocation} {
		i := strings.Index(m, "/"+lakehouse.MetadataDir+"/")
		if _, err := st.Stat(ctx, m[i+1:]); err != nil {
			t.Fatalf("the catalog's metadata file %s: %v", m, err)
		}
		for _, d := range res.Deleted {
			if strings.HasSuffix(m, "/"+d) {
				t.Fatalf("the expiry deleted the catalog's %s", d)
			}
		}
	}
}

// TestRESTLostReply: a commit whose reply is lost after the catalog took
// it (a proxy forwards it, then answers 502) is settled by reading the
// table back: published, never sent again; a commit the catalog never saw
// (503) fails the publication without a resend, and the next publish
// converges.
func TestRESTLostReply(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	ns := restNamespace()
	st := testenv.S3(t)
	tb := pswap.NewTable(st)
	target, err := url.Parse(srv.URI)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mode atomic.Value
	mode.Store("")
	var commits atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/tables/sales") {
			commits.Add(1)
			switch mode.Load() {
			case "lost":
				proxy.ServeHTTP(httptest.NewRecorder(), r)
				http.Error(w, "bad gateway", http.StatusBadGateway)
				return
			case "down":
				http.Error(w, "unavailable", http.StatusServiceUnavailable)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	fsrv := *srv
	fsrv.URI = front.URL
	cat, _ := openREST(t, &fsrv, ns, "&create-namespace=true", catalog.Options{})
	opts := pswap.PublishOptions{Catalog: cat}
	if pub := commitPart(t, tb, "dt=2026-01-01", 2, opts); !pub.Published {
		t.Fatal(pub.Err)
	}

	mode.Store("lost")
	commits.Store(0)
	pub := commitPart(t, tb, "dt=2026-01-02", 3, opts)
	if !pub.Published || pub.Err != nil || commits.Load() != 1 {
		t.Fatalf("a commit whose reply was lost: %+v, %d commits sent", pub, commits.Load())
	}
	checkReflects(t, srv, ns, st, pub.MetadataLocation)

	mode.Store("down")
	commits.Store(0)
	pub = commitPart(t, tb, "dt=2026-01-03", 4, opts)
	// A 503 is transient: the publish pipeline's one retry rule runs the
	// catalog's commit again (each run settled by reading the table back),
	// one commit per attempt, until its attempts are spent.
	cv, _ := pub.View(pswap.ViewCatalog)
	if pub.Published || !errors.Is(pub.Err, catalog.ErrCatalog) || cv.Attempts < 2 || commits.Load() != int64(cv.Attempts) {
		t.Fatalf("a commit refused with 503: %+v, %d commits sent", pub, commits.Load())
	}
	mode.Store("")
	if r, err := tb.Publish(ctx, opts); err != nil || r.Changed {
		t.Fatalf("publish after the outage: %+v %v", r, err)
	}
	checkReflects(t, srv, ns, st, pub.MetadataLocation)
}

// TestRESTTableRecreated: a table deleted (all but the catalog's own
// metadata files) and created again at the same location, while the REST catalog's table reflects the old table's v3,
// is refused as another table (its uuid differs, and a REST catalog cannot
// change a table's uuid): never published while the catalog's table is
// the old one.
func TestRESTTableRecreated(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	ns := restNamespace()
	st := testenv.S3(t)
	cat, _ := openREST(t, srv, ns, "&create-namespace=true", catalog.Options{})
	old := pswap.NewTable(st)
	for _, part := range []string{"dt=2026-01-01", "dt=2026-01-02", "dt=2026-01-03"} {
		if pub := commitPart(t, old, part, 3, pswap.PublishOptions{Catalog: cat}); !pub.Published {
			t.Fatal(pub.Err)
		}
	}
	before := srv.Table(t, ns, "sales")
	var keys []string
	for a, err := range st.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		// The catalog's own metadata files stay: without them the
		// catalog cannot load its table at all.
		if !strings.HasPrefix(a.Key, "metadata/0") {
			keys = append(keys, a.Key)
		}
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	tb := pswap.NewTable(st)
	pub := commitPart(t, tb, "dt=2026-02-01", 5, pswap.PublishOptions{Catalog: cat})
	if pub.Version != 1 || pub.Published || !errors.Is(pub.Err, catalog.ErrCatalogForeign) {
		t.Fatalf("the re-created table's first commit: %+v", pub)
	}
	if after := srv.Table(t, ns, "sales"); after.MetadataLocation != before.MetadataLocation {
		t.Fatalf("the old table's entry was changed: %s -> %s", before.MetadataLocation, after.MetadataLocation)
	}
}
