package pswap_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

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
	const want = `schema mismatch: column "amount" of the table is missing from the data (a table's columns are never dropped); to write NULL in a nullable column that an input lacks, --fill-missing-nullable (TableOptions.FillMissingNullable) (in %s)`
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

// TestFillMissingNullable: after EvolveSchema added the nullable column
// channel, an older extract without it is refused by default in every
// format (a dropped column must not pass unnoticed), and accepted with
// FillMissingNullable, which writes NULL there and reports the column
// (issue 39, item 2). A NOT NULL column is never filled.
func TestFillMissingNullable(t *testing.T) {
	tbl, dir := evolvedSalesTable(t)
	old := map[string]string{
		"old.csv":   writeFile(t, dir, "old.csv", "order_id,store,amount\n1,lisbon,10.5\n"),
		"old.jsonl": writeFile(t, dir, "old.jsonl", "{\"order_id\":1,\"store\":\"lisbon\",\"amount\":10.5}\n"),
	}
	for name, path := range old {
		_, err := commitFile(t, tbl, "dt=2026-11-27", path, pswap.TableOptions{})
		if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), `column "channel" of the table is missing`) {
			t.Errorf("%s by default: %v, want ErrSchemaMismatch naming channel", name, err)
		}
		ctx := context.Background()
		p, _ := tbl.Partition("dt=2026-11-27")
		w, err := p.Begin(ctx, pswap.WriteOptions{Table: pswap.TableOptions{FillMissingNullable: true}, Commit: pswap.CommitOptions{Force: true}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddPath(ctx, path, pswap.FormatAuto); err != nil {
			t.Fatalf("%s with FillMissingNullable: %v", name, err)
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatalf("%s with FillMissingNullable: %v", name, err)
		}
		if got := w.Filled(); !slices.Equal(got, []string{"channel"}) {
			t.Errorf("%s: Filled() = %q, want [channel]", name, got)
		}
		if got := columnValues(t, tbl.Store(), "dt=2026-11-27", "channel"); !slices.Equal(got, []string{"(null)"}) {
			t.Errorf("%s: channel holds %q", name, got)
		}
	}
	// A required column: a table created NOT NULL from a Parquet file.
	tbl2 := pswap.NewTable(memstore.New())
	if _, err := commitPath(t, tbl2, "dt=2026-11-27", parquetFile(t, keyRecord(t, arrow.PrimitiveTypes.Int64, `[1,2]`, "a", "b")), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := commitFile(t, tbl2, "dt=2026-11-28", writeFile(t, dir, "v.csv", "v\nx\n"), pswap.TableOptions{FillMissingNullable: true})
	if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), "NOT NULL") {
		t.Errorf("a NOT NULL column missing with FillMissingNullable: %v, want ErrSchemaMismatch saying NOT NULL", err)
	}
}
