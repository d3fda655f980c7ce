package main

import (
	"database/sql"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// catalogRow is the table's row of a SQLite catalog ("" when none).
func catalogRow(t *testing.T, db string) (loc string, rows int) {
	t.Helper()
	d, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.QueryRow(`SELECT COUNT(*) FROM iceberg_tables`).Scan(&rows); err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return "", 0
		}
		t.Fatal(err)
	}
	_ = d.QueryRow(`SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'lake' AND table_namespace = 'db' AND table_name = 'sales'`).Scan(&loc)
	return loc, rows
}

// TestCatalogFlag: commit --catalog registers the table in the catalog
// and records the catalog as one of the table's views ($PSWAP_CATALOG
// too), so that every later writer moves its name without the flag; a
// catalog that is down leaves the commit standing with published=false
// and the reason, and the next publish, with no flag, converges it; a bad
// URL or a foreign table is refused (exit 2) with nothing registered or
// overwritten.
func TestCatalogFlag(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "sales")
	catDir := filepath.Join(dir, "cat")
	if err := os.Mkdir(catDir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(catDir, "cat.db")
	url := "sql+sqlite://" + db + "?catalog=lake&namespace=db&table=sales&create-namespace=true"
	csv := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csv, []byte("id,amount\n1,2.5\n2,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	commit := func(part string, extra ...string) (int, resultJSON, string) {
		t.Helper()
		args := append([]string{"commit", "--table", table, "--partition", part, "--json", "--force"}, extra...)
		code, out, errOut := invoke(t, env, "", append(args, csv)...)
		var r resultJSON
		if code == exitOK {
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		return code, r, errOut
	}
	// outage makes the catalog unreachable (its folder gone) until the
	// returned function restores it.
	outage := func() func() {
		t.Helper()
		if err := os.Rename(catDir, catDir+".off"); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := os.Rename(catDir+".off", catDir); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A bad URL is refused before the commit: nothing is written.
	for _, bad := range []string{"rest+http://localhost:1/x?catalog=a&namespace=b&table=c", "mysql://h/db", url + "&tabel=x", strings.Replace(url, "catalog=lake&", "", 1)} {
		code, _, errOut := commit("dt=2026-01-01", "--catalog", bad)
		if code != exitUsage || !strings.Contains(errOut, "catalog URL") {
			t.Fatalf("--catalog %s: exit %d, %s", bad, code, errOut)
		}
	}
	if _, err := os.Stat(table); !os.IsNotExist(err) {
		t.Fatalf("a refused --catalog committed: %v", err)
	}

	code, r, errOut := commit("dt=2026-01-01", "--catalog", url)
	if code != exitOK || !r.Published {
		t.Fatalf("commit: exit %d %+v %s", code, r, errOut)
	}
	if loc, n := catalogRow(t, db); loc != r.MetadataLocation || n != 1 {
		t.Fatalf("the catalog names %q (%d rows), want %q", loc, n, r.MetadataLocation)
	}

	env[envCatalog] = url
	code, r, _ = commit("dt=2026-01-02")
	if loc, _ := catalogRow(t, db); code != exitOK || !r.Published || loc != r.MetadataLocation {
		t.Fatalf("$%s: exit %d %+v, the catalog names %q", envCatalog, code, r, loc)
	}
	delete(env, envCatalog)

	// The catalog is one of the table's views: a commit without the flag
	// or the variable moves it too.
	code, r, errOut = commit("dt=2026-01-05")
	if loc, _ := catalogRow(t, db); code != exitOK || !r.Published || loc != r.MetadataLocation || !hasView(r.Views, "catalog", true) {
		t.Fatalf("commit without --catalog: exit %d %+v %s; the catalog names %q", code, r, errOut, loc)
	}

	// The catalog is down: the commit stands, its publication says why.
	restore := outage()
	code, r, errOut = commit("dt=2026-01-03")
	if code != exitOK || r.Published || r.MetadataLocation == "" || !strings.Contains(r.PublishError, "catalog") ||
		!strings.Contains(errOut, "warning") || !hasView(r.Views, "catalog", false) || !hasView(r.Views, "iceberg", true) {
		t.Fatalf("catalog down: exit %d %+v %s", code, r, errOut)
	}
	latest := r.MetadataLocation
	restore()
	code, out, errOut := invoke(t, env, "", "publish", "--table", table)
	if loc, _ := catalogRow(t, db); code != exitOK || loc != latest {
		t.Fatalf("publish after the outage: exit %d %s %s; the catalog names %q, want %q", code, out, errOut, loc, latest)
	}

	// gc brings a lagging catalog to the latest version before it
	// expires anything, and deletes nothing when it cannot.
	commit("dt=2026-01-04", "--publish=false") // a retired generation for gc to collect
	restore = outage()
	code, r, _ = commit("dt=2026-01-04")
	if code != exitOK || r.Published {
		t.Fatalf("catalog down: exit %d %+v", code, r)
	}
	latest = r.MetadataLocation
	before := files(t, table)
	code, _, errOut = invoke(t, env, "", "gc", "--table", table, "--catalog", url, "--min-age", "0", "--keep", "0", "--snapshot-retention", "0")
	if code != exitFailure || !strings.Contains(errOut, "nothing was deleted") {
		t.Fatalf("gc with the catalog down: exit %d %s", code, errOut)
	}
	if after := files(t, table); !slices.Equal(after, before) {
		t.Fatalf("gc with the catalog down deleted %d files", len(before)-len(after))
	}
	restore()
	code, _, errOut = invoke(t, env, "", "gc", "--table", table, "--catalog", url)
	if loc, _ := catalogRow(t, db); code != exitOK || loc != latest {
		t.Fatalf("gc --catalog: exit %d %s; the catalog names %q, want the latest %q", code, errOut, loc, latest)
	}

	// Another table of that name: refused, its row untouched.
	other := filepath.Join(dir, "other")
	code, _, errOut = invoke(t, env, "", "commit", "--table", other, "--partition", "dt=2026-01-01", "--publish=false", csv)
	if code != exitOK {
		t.Fatal(errOut)
	}
	code, _, errOut = invoke(t, env, "", "publish", "--table", other, "--catalog", url)
	if loc, n := catalogRow(t, db); code != exitUsage || !strings.Contains(errOut, "another table") || loc != latest || n != 1 {
		t.Fatalf("publish of another table under the name: exit %d %s; the catalog names %q (%d rows)", code, errOut, loc, n)
	}
}

// hasView reports whether a --json document's views hold a view of that
// name with that published state.
func hasView(vs []viewJSON, view string, published bool) bool {
	for _, v := range vs {
		if v.View == view && v.Published == published {
			return true
		}
	}
	return false
}

// files lists every file under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
