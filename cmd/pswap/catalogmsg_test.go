package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogMessages: what the CLI says about a catalog is what happened
// and what fixes it (issue 40 item 6).
//   - A name clash (the catalog's table of that name is another table)
//     leaves the commit and its Iceberg metadata standing: the warning says
//     the metadata reflects it, and does not send the user to `pswap
//     publish`, which cannot fix a clash, but says what can; `pswap views`
//     says the catalog names another table's metadata, not that it lags.
//   - `pswap publish` with a catalog whose namespace is missing exits 2
//     without saying "up to date" first.
//   - `pswap publish` that moves a lagging catalog from version 1 to
//     version 3 says so, and not "up to date".
func TestCatalogMessages(t *testing.T) {
	dir := t.TempDir()
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
	sales, other := filepath.Join(dir, "sales"), filepath.Join(dir, "other")
	commit := func(table, part string, extra ...string) (int, string, string) {
		t.Helper()
		args := append([]string{"commit", "--table", table, "--partition", part}, extra...)
		return invoke(t, nil, "", append(args, csv)...)
	}
	if code, _, errOut := commit(sales, "dt=2026-01-01", "--catalog", url); code != exitOK {
		t.Fatalf("commit: exit %d %s", code, errOut)
	}

	// A name clash: another table under the catalog's name.
	code, out, errOut := commit(other, "dt=2026-01-01", "--catalog", url)
	if code != exitOK {
		t.Fatalf("commit of another table under the name: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(other, "metadata", "v1.metadata.json")); err != nil {
		t.Fatalf("the clash's commit wrote no Iceberg metadata: %v", err)
	}
	if !strings.Contains(out, "v1.metadata.json") {
		t.Errorf("the clash's commit does not show its Iceberg metadata:\n%s", out)
	}
	if strings.Contains(errOut, "pswap publish") || strings.Contains(errOut, "Iceberg metadata was not published") ||
		!strings.Contains(errOut, "Iceberg metadata reflects it") || !strings.Contains(errOut, "rename") {
		t.Errorf("the clash's warning sends the user to pswap publish, or does not say the Iceberg metadata reflects the commit and what fixes it:\n%s", errOut)
	}

	// The views of the clashing table say whose metadata the catalog
	// names, not that it lags at the other table's version.
	code, out, errOut = invoke(t, nil, "", "views", "--table", other)
	if code != exitOK || strings.Contains(out, "the latest is") || !strings.Contains(out, "another table's metadata") {
		t.Errorf("views of the clashing table: exit %d\n%s%s", code, out, errOut)
	}

	// A missing namespace: exit 2, and never "up to date" first.
	noNS := "sql+sqlite://" + db + "?catalog=lake&namespace=nons&table=sales"
	code, out, errOut = invoke(t, nil, "", "publish", "--table", sales, "--catalog", noNS)
	if code != exitUsage || strings.Contains(out, "up to date") || !strings.Contains(errOut, "namespace") {
		t.Errorf("publish with a missing namespace: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code, _, errOut := invoke(t, nil, "", "views", "--table", sales, "disable", "catalog", noNS); code != exitOK {
		t.Fatalf("views disable: exit %d %s", code, errOut)
	}

	// The catalog lags at version 1 while two commits publish versions 2
	// and 3 (it is down): the publish moves it from 1 to 3.
	if err := os.Rename(catDir, catDir+".off"); err != nil {
		t.Fatal(err)
	}
	for _, day := range []string{"dt=2026-01-02", "dt=2026-01-03"} {
		if code, _, errOut := commit(sales, day); code != exitOK {
			t.Fatalf("commit with the catalog down: exit %d %s", code, errOut)
		}
	}
	if err := os.Rename(catDir+".off", catDir); err != nil {
		t.Fatal(err)
	}
	if loc, _ := catalogRow(t, db); !strings.HasSuffix(loc, "/v1.metadata.json") {
		t.Fatalf("the catalog names %s, want version 1", loc)
	}
	code, out, errOut = invoke(t, nil, "", "publish", "--table", sales)
	if loc, _ := catalogRow(t, db); code != exitOK || !strings.HasSuffix(loc, "/v3.metadata.json") {
		t.Fatalf("publish: exit %d %s; the catalog names %s, want version 3", code, errOut, loc)
	}
	if strings.Contains(out, "up to date") || !strings.Contains(out, "moved from version 1 to version 3") {
		t.Errorf("publish that moved the catalog from version 1 to 3 says:\n%s", out)
	}
	code, out, _ = invoke(t, nil, "", "publish", "--table", sales)
	if code != exitOK || !strings.Contains(out, "up to date") || strings.Contains(out, "moved") {
		t.Errorf("a publish with nothing to do: exit %d, says:\n%s", code, out)
	}
}
