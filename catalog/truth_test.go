package catalog_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/catalog"

	"github.com/pswap/pswap/internal/lakehouse"
)

// metadataUUID reads the table-uuid of a file:// metadata location; ok is
// false when the file does not exist.
func metadataUUID(t testing.TB, loc string) (id string, ok bool) {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "file" {
		t.Fatalf("metadata location %q: %v", loc, err)
	}
	data, err := os.ReadFile(u.Path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		UUID string `json:"table-uuid"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.UUID == "" {
		t.Fatalf("%s: table-uuid %q: %v", loc, doc.UUID, err)
	}
	return doc.UUID, true
}

// checkRowLoads fails unless the catalog's row names the table's latest
// version, a file that exists and carries the table's uuid: what PyIceberg
// loads by name.
func checkRowLoads(t testing.TB, b backend, tb *pswap.Table) {
	t.Helper()
	latest, _, err := lakehouse.Latest(ctx, tb.Store())
	if err != nil {
		t.Fatal(err)
	}
	want, ok := metadataUUID(t, latest)
	if !ok {
		t.Fatalf("the latest version %s does not exist", latest)
	}
	got, _, _ := row(t, b.db)
	id, ok := metadataUUID(t, got)
	switch {
	case !ok:
		t.Fatalf("the catalog names %s, which does not exist (latest %s)", got, latest)
	case id != want:
		t.Fatalf("the catalog names %s, of table %s, not this table's %s", got, id, want)
	case got != latest:
		t.Fatalf("the catalog names %s, not the latest %s", got, latest)
	}
}

// setRow points the catalog's row at loc, as a user or a tool would.
func setRow(t testing.TB, b backend, loc string) {
	t.Helper()
	if _, err := b.db.Exec(`UPDATE iceberg_tables SET metadata_location = $1`, loc); err != nil {
		t.Fatal(err)
	}
}

// TestRowNamesMissingVersion: a row naming a version of the table past its
// latest that does not exist (set by hand to v99) is not up to date: the
// next commit's publish, and a plain publish, move it to the latest
// version, and the catalog then names an existing file of this table.
func TestRowNamesMissingVersion(t *testing.T) { backends(t, testRowNamesMissingVersion) }

func testRowNamesMissingVersion(t *testing.T, b backend) {
	tb := openTable(t, t.TempDir())
	opts := pswap.PublishOptions{Catalog: openCatalog(t, b.url("&create-namespace=true"))}
	first := commitPart(t, tb, "dt=2026-01-01", 3, opts)
	if !first.Published {
		t.Fatal(first.Err)
	}
	v99 := strings.Replace(first.MetadataLocation, "/v1.metadata.json", "/v99.metadata.json", 1)
	setRow(t, b, v99)
	pub := commitPart(t, tb, "dt=2026-01-02", 4, opts)
	if !pub.Published || pub.Err != nil {
		t.Fatalf("the commit after the row was set to v99: %+v", pub)
	}
	checkRowLoads(t, b, tb)
	if _, prev, _ := row(t, b.db); prev != v99 {
		t.Fatalf("the repair recorded %q as the previous location, want %q", prev, v99)
	}

	// An up-to-date table's publish repairs the row as well.
	setRow(t, b, v99)
	r, err := tb.Publish(ctx, opts)
	if err != nil || r.Changed {
		t.Fatalf("publish: %+v %v", r, err)
	}
	checkRowLoads(t, b, tb)
}

// TestTableRecreated: a table deleted and created again at the same URL
// (a new uuid, its versions starting again at v1) while the catalog's row
// names the old table's v3 gets the row moved to its own latest version,
// which engines can load; never a publish that says published while the
// row names a file that is gone.
func TestTableRecreated(t *testing.T) { backends(t, testTableRecreated) }

func testTableRecreated(t *testing.T, b backend) {
	dir := t.TempDir()
	cat := openCatalog(t, b.url("&create-namespace=true"))
	old, err := pswap.Open(ctx, filepath.Join(dir, "sales"), pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"dt=2026-01-01", "dt=2026-01-02", "dt=2026-01-03"} {
		if pub := commitPart(t, old, part, 3, pswap.PublishOptions{Catalog: cat}); !pub.Published {
			t.Fatal(pub.Err)
		}
	}
	oldRow, _, _ := row(t, b.db)
	old.Close()
	if err := os.RemoveAll(filepath.Join(dir, "sales")); err != nil {
		t.Fatal(err)
	}

	tb := openTable(t, dir)
	pub := commitPart(t, tb, "dt=2026-02-01", 5, pswap.PublishOptions{Catalog: cat})
	if pub.Version != 1 || !pub.Published || pub.Err != nil {
		t.Fatalf("the re-created table's first commit (the row named %s): %+v", oldRow, pub)
	}
	checkRowLoads(t, b, tb)
	pub = commitPart(t, tb, "dt=2026-02-02", 5, pswap.PublishOptions{Catalog: cat})
	if !pub.Published || pub.Err != nil {
		t.Fatalf("its second commit: %+v", pub)
	}
	checkRowLoads(t, b, tb)
}

// TestRowNamesOtherUUID: a row naming a version file at this table's
// location that carries another table's uuid (copied there) is refused as
// another table, as a REST catalog's table of another uuid is: the publish
// says ErrCatalogForeign and leaves the row as it is.
func TestRowNamesOtherUUID(t *testing.T) { backends(t, testRowNamesOtherUUID) }

func testRowNamesOtherUUID(t *testing.T, b backend) {
	dir := t.TempDir()
	other, err := pswap.Open(ctx, filepath.Join(dir, "other"), pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otherPub := commitPart(t, other, "dt=2026-01-01", 2, pswap.PublishOptions{})
	if !otherPub.Published {
		t.Fatal(otherPub.Err)
	}

	tb := openTable(t, dir)
	opts := pswap.PublishOptions{Catalog: openCatalog(t, b.url("&create-namespace=true"))}
	first := commitPart(t, tb, "dt=2026-01-01", 3, opts)
	if !first.Published {
		t.Fatal(first.Err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "other", "metadata", "v1.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sales", "metadata", "v7.metadata.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	v7 := strings.Replace(first.MetadataLocation, "/v1.metadata.json", "/v7.metadata.json", 1)
	setRow(t, b, v7)
	pub := commitPart(t, tb, "dt=2026-01-02", 4, opts)
	if pub.Published || !errors.Is(pub.Err, catalog.ErrCatalogForeign) || pub.MetadataLocation == "" {
		t.Fatalf("a row naming another table's file at this location: %+v", pub)
	}
	if !strings.Contains(pub.Err.Error(), "uuid") {
		t.Errorf("the refusal does not name the uuid: %v", pub.Err)
	}
	if got, _, _ := row(t, b.db); got != v7 {
		t.Fatalf("the refused row was changed to %s", got)
	}
}
