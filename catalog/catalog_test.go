package catalog_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/testing/testenv"
)

// An opened catalog is what the facade's publish takes.
var _ pswap.Catalog = catalog.Catalog(nil)

var ctx = context.Background()

type sale struct {
	ID     int64   `parquet:"id"`
	Amount float64 `parquet:"amount"`
}

// commitPart commits n rows to a partition of t and publishes the commit
// with opts.
func commitPart(t testing.TB, tb *pswap.Table, part string, n int, opts pswap.PublishOptions) pswap.Publication {
	t.Helper()
	p, err := tb.Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]sale, n)
	for i := range rows {
		rows[i] = sale{ID: int64(i), Amount: float64(i) / 4}
	}
	if err := pswap.Write(w, rows...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return w.Publish(ctx, opts)
}

func openCatalog(t testing.TB, url string) catalog.Conn {
	t.Helper()
	c, err := catalog.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// row reads the table's row straight from the database.
func row(t testing.TB, db *sql.DB) (loc, prev string, n int) {
	t.Helper()
	var p sql.NullString
	err := db.QueryRow(`SELECT metadata_location, previous_metadata_location FROM iceberg_tables
WHERE catalog_name = 'lake' AND table_namespace = 'db' AND table_name = 'sales'`).Scan(&loc, &p)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", 0
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM iceberg_tables`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return loc, p.String, n
}

func openTable(t testing.TB, dir string) *pswap.Table {
	t.Helper()
	tb, err := pswap.Open(ctx, filepath.Join(dir, "sales"), pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// TestPublishMovesTheName: the first publish creates the catalog's
// tables, the namespace (asked to) and the table's row; each later one
// moves the row to its version, the previous one recorded.
func TestPublishMovesTheName(t *testing.T) { backends(t, testPublishMovesTheName) }

func testPublishMovesTheName(t *testing.T, b backend) {
	dir := t.TempDir()
	tb := openTable(t, dir)
	cat := openCatalog(t, b.url("&create-namespace=true"))
	db := b.db
	opts := pswap.PublishOptions{Catalog: cat}
	var prev string
	for i, part := range []string{"dt=2026-01-01", "dt=2026-01-02", "dt=2026-01-01"} {
		pub := commitPart(t, tb, part, 10+i, opts)
		if !pub.Published || pub.Err != nil {
			t.Fatalf("publish %d: %+v", i, pub)
		}
		loc, p, n := row(t, db)
		if loc != pub.MetadataLocation || p != prev || n != 1 {
			t.Fatalf("after publish %d the catalog names %q (previous %q, %d rows), want %q (previous %q)", i, loc, p, n, pub.MetadataLocation, prev)
		}
		prev = loc
	}
	var ns int
	if err := db.QueryRow(`SELECT COUNT(*) FROM iceberg_namespace_properties WHERE catalog_name = 'lake' AND namespace = 'db'`).Scan(&ns); err != nil || ns != 1 {
		t.Fatalf("namespace rows: %d, %v", ns, err)
	}
	// An idempotent publish leaves the row as it is.
	r, err := tb.Publish(ctx, opts)
	if err != nil || r.Changed {
		t.Fatalf("publish again: %+v %v", r, err)
	}
	if loc, p, _ := row(t, db); loc != prev || p == "" {
		t.Fatalf("an idempotent publish moved the name to %q (previous %q)", loc, p)
	}
}

// TestCatalogDown: a catalog that cannot be reached fails the
// publication, not the commit; the metadata files are published, and the
// next publish with the catalog up registers the latest version.
func TestCatalogDown(t *testing.T) { backends(t, testCatalogDown) }

func testCatalogDown(t *testing.T, b backend) {
	dir := t.TempDir()
	tb := openTable(t, dir)
	down := openCatalog(t, b.down)
	pub := commitPart(t, tb, "dt=2026-01-01", 5, pswap.PublishOptions{Catalog: down})
	if pub.Published || !errors.Is(pub.Err, catalog.ErrCatalog) || pub.MetadataLocation == "" {
		t.Fatalf("a publish to an unreachable catalog: %+v", pub)
	}
	loc, v, err := lakehouse.Latest(ctx, tb.Store())
	if err != nil || v != 1 || loc != pub.MetadataLocation {
		t.Fatalf("the metadata files: %q %d %v", loc, v, err)
	}
	up := openCatalog(t, b.url("&create-namespace=true"))
	r, err := tb.Publish(ctx, pswap.PublishOptions{Catalog: up})
	if err != nil || r.Changed {
		t.Fatalf("publish with the catalog up: %+v %v", r, err)
	}
	if got, _, _ := row(t, b.db); got != loc {
		t.Fatalf("the catalog names %q, want the latest %q", got, loc)
	}
}

// TestRefusals: a table of that name that is another table, and a
// missing namespace, are refused and nothing is written to the catalog.
func TestRefusals(t *testing.T) { backends(t, testRefusals) }

func testRefusals(t *testing.T, b backend) {
	dir := t.TempDir()
	tb := openTable(t, dir)
	db := b.db

	pub := commitPart(t, tb, "dt=2026-01-01", 5, pswap.PublishOptions{Catalog: openCatalog(t, b.url(""))})
	if pub.Published || !errors.Is(pub.Err, catalog.ErrNoNamespace) || !errors.Is(pub.Err, pswap.ErrBadInput) {
		t.Fatalf("a missing namespace: %+v", pub)
	}
	if loc, _, n := row(t, db); n != 0 || loc != "" {
		t.Fatalf("a refused registration left %d rows", n)
	}

	other := "file:///elsewhere/metadata/v3.metadata.json"
	if _, err := db.Exec(`INSERT INTO iceberg_tables VALUES ('lake', 'db', 'sales', $1, NULL, 'TABLE')`, other); err != nil {
		t.Fatal(err)
	}
	r, err := tb.Publish(ctx, pswap.PublishOptions{Catalog: openCatalog(t, b.url(""))})
	if !errors.Is(err, catalog.ErrCatalogForeign) || r.MetadataLocation == "" {
		t.Fatalf("a foreign table of that name: %+v %v", r, err)
	}
	if loc, p, n := row(t, db); loc != other || p != "" || n != 1 {
		t.Fatalf("the foreign table's row was changed: %q %q %d", loc, p, n)
	}
}

// TestConcurrentPublishers: writers on separate connections commit
// and publish partitions at once. Each is published or pending (the
// publish lease's holder publishes it before it returns); every publish
// that says published is named by the catalog or followed by a later
// version, and the catalog's
// history (a trigger logs every update) only moves forward, each update
// from the row the previous one left.
func TestConcurrentPublishers(t *testing.T) { backends(t, testConcurrentPublishers) }

func testConcurrentPublishers(t *testing.T, b backend) {
	dir := t.TempDir()
	tb := openTable(t, dir)
	db := b.db
	first := commitPart(t, tb, "dt=2026-01-00", 1, pswap.PublishOptions{Catalog: openCatalog(t, b.url("&create-namespace=true"))})
	if !first.Published {
		t.Fatal(first.Err)
	}
	testenv.LogCatalogUpdates(t, db, b.driver)
	const n = 16
	var wg sync.WaitGroup
	var published, pending, rebases atomic.Int64
	versions := make([]int, n)
	pendings := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			cat, err := catalog.Open(b.url(""))
			if err != nil {
				t.Error(err)
				return
			}
			defer cat.Close()
			pub := commitPart(t, tb, fmt.Sprintf("dt=2026-01-%02d", i+1), 3+i, pswap.PublishOptions{Catalog: cat})
			if pub.Err != nil {
				t.Errorf("writer %d: %v", i, pub.Err)
				return
			}
			if pub.Pending {
				pending.Add(1)
				pendings[i] = true
				return
			}
			published.Add(1)
			rebases.Add(int64(pub.Rebases))
			versions[i] = pub.Version
		})
	}
	wg.Wait()
	loc, v, err := lakehouse.Latest(ctx, tb.Store())
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := row(t, db); got != loc {
		t.Fatalf("the catalog names %q, the latest version is %q", got, loc)
	}
	if published.Load() == 0 || published.Load()+pending.Load() != n {
		t.Errorf("%d published and %d pending of %d writers: want every one either, and one publisher at least", published.Load(), pending.Load(), n)
	}
	for i, pv := range versions {
		if !pendings[i] && (pv > v || pv == 0) {
			t.Errorf("writer %d published version %d, latest %d", i, pv, v)
		}
	}
	updates := testenv.CheckCatalogHistory(t, db, first.MetadataLocation, loc)
	if updates > n {
		t.Errorf("%d catalog updates for %d publishes", updates, n)
	}
	t.Logf("%d publishers: %d published, %d pending, %d rebases, %d catalog updates, latest version %d", n, published.Load(), pending.Load(), rebases.Load(), updates, v)
}

// TestPostgresWrongPassword: credentials the server refuses fail the
// publication with the server's reason, never showing the password, and
// register nothing.
func TestPostgresWrongPassword(t *testing.T) {
	b := postgresBackend(t)
	dir := t.TempDir()
	tb := openTable(t, dir)
	const secret = "Xyzzy-not-the-password-42"
	bad := strings.Replace(b.url("&create-namespace=true"), "sql+postgres://", "sql+postgres://pswap:"+secret+"@", 1)
	pub := commitPart(t, tb, "dt=2026-01-01", 3, pswap.PublishOptions{Catalog: openCatalog(t, bad)})
	if pub.Published || !errors.Is(pub.Err, catalog.ErrCatalog) || pub.MetadataLocation == "" {
		t.Fatalf("wrong password: %+v", pub)
	}
	msg := pub.Err.Error()
	if !strings.Contains(msg, "password authentication failed") || strings.Contains(msg, secret) {
		t.Fatalf("wrong password: %s", msg)
	}
	var n int
	if err := b.db.QueryRow(`SELECT COUNT(*) FROM pg_tables WHERE tablename = 'iceberg_tables'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a refused login created the catalog's tables: %d %v", n, err)
	}
}
