package pswap_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/memstore"
)

// commitFile commits one local file into a partition of tbl and returns
// the commit's error.
func commitFile(t testing.TB, tbl *pswap.Table, key, path string, to pswap.TableOptions) (pswap.Result, error) {
	t.Helper()
	ctx := context.Background()
	p, err := tbl.Partition(key)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{Table: to})
	if err != nil {
		return pswap.Result{}, err
	}
	if err := w.AddPath(ctx, path, pswap.FormatAuto); err != nil {
		w.Abort(ctx)
		return pswap.Result{}, err
	}
	return w.Commit(ctx)
}

// sameRefusal checks that err is ErrSchemaMismatch with the message want
// (the input's name aside).
func sameRefusal(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !errors.Is(err, pswap.ErrSchemaMismatch) {
		t.Fatalf("%s: %v, want ErrSchemaMismatch", what, err)
	}
	if got := err.Error(); got != want {
		t.Errorf("%s: message\n  %s\nwant\n  %s", what, got, want)
	}
}

// TestJSONLMissingColumnRefused: a JSON Lines extract that lacks a table
// column is refused as the same data in CSV is, with the same message,
// instead of being committed with the column NULL in every row (issue 39,
// item 1). A key absent from some lines only is NULL there (sparse JSON).
func TestJSONLMissingColumnRefused(t *testing.T) {
	dir := t.TempDir()
	tbl := pswap.NewTable(memstore.New())
	if _, err := commitFile(t, tbl, "dt=2026-11-27", writeFile(t, dir, "a.csv", "id,amount\n1,2.5\n2,3.5\n"), pswap.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	const want = `schema mismatch: column "amount" of the table is missing from the data (a table's columns are never dropped) (in %s)`
	_, err := commitFile(t, tbl, "dt=2026-11-28", writeFile(t, dir, "b.csv", "id\n1\n2\n"), pswap.TableOptions{})
	sameRefusal(t, "CSV", err, strings.Replace(want, "%s", "CSV b.csv", 1))
	_, err = commitFile(t, tbl, "dt=2026-11-28", writeFile(t, dir, "b.jsonl", "{\"id\":1}\n{\"id\":2}\n"), pswap.TableOptions{})
	sameRefusal(t, "JSON Lines", err, strings.Replace(want, "%s", "JSON Lines b.jsonl", 1))
	if _, err := tbl.Partition("dt=2026-11-28"); err == nil {
		if ptr := pointers(t, tbl.Store())["dt=2026-11-28"]; ptr != "" {
			t.Errorf("the refused day was committed (generation %s)", ptr)
		}
	}
	// Sparse: the key is in one line of two.
	if _, err := commitFile(t, tbl, "dt=2026-11-29", writeFile(t, dir, "c.jsonl", "{\"id\":1}\n{\"id\":2,\"amount\":1.5}\n"), pswap.TableOptions{}); err != nil {
		t.Errorf("a key absent from some lines only: %v", err)
	}
}

// TestJSONLNewKeyHint: a JSON Lines key the table lacks is refused with
// the message (and the --evolve-schema hint) of the same CSV column
// (issue 39, item 10).
func TestJSONLNewKeyHint(t *testing.T) {
	dir := t.TempDir()
	tbl := pswap.NewTable(memstore.New())
	if _, err := commitFile(t, tbl, "dt=2026-11-27", writeFile(t, dir, "a.csv", "id,amount\n1,2.5\n"), pswap.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	const want = `schema mismatch: column "channel" is not in the table's schema (add it on purpose with --evolve-schema, or the library's TableOptions.EvolveSchema) (in %s)`
	_, err := commitFile(t, tbl, "dt=2026-11-28", writeFile(t, dir, "c.csv", "id,amount,channel\n1,1.5,x\n"), pswap.TableOptions{})
	sameRefusal(t, "CSV", err, strings.Replace(want, "%s", "CSV c.csv", 1))
	_, err = commitFile(t, tbl, "dt=2026-11-28", writeFile(t, dir, "c.jsonl", "{\"id\":1,\"amount\":1.5,\"channel\":\"x\"}\n"), pswap.TableOptions{})
	sameRefusal(t, "JSON Lines", err, strings.Replace(want, "%s", "JSON Lines c.jsonl", 1))
}
