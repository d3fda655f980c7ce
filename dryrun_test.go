package pswap_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// keysOf lists every key of st.
func keysOf(t *testing.T, st store.Store) []string {
	t.Helper()
	var out []string
	for a, err := range st.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a.Key)
	}
	return out
}

// TestDryRunWritesNothing: a dry run of a new table, of a new generation
// and of a schema the table refuses leaves the store exactly as it was,
// and refuses what Begin refuses (MustExist, a key that does not fit, a
// column the table lacks) with Begin's errors.
func TestDryRunWritesNothing(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	table := pswap.NewTable(st)
	day, _ := table.Partition("dt=2026-11-29")
	add := func(w *pswap.Writer) error { return pswap.Write(w, Sale{1, "Lisbon", 10}) }

	if _, err := day.DryRun(ctx, pswap.WriteOptions{MustExist: true}, add); !errors.Is(err, pswap.ErrNoTable) {
		t.Fatalf("dry run of a new table with MustExist: %v, want ErrNoTable", err)
	}
	d, err := day.DryRun(ctx, pswap.WriteOptions{}, add)
	if err != nil || d.Outcome != pswap.WouldCommit || d.Rows != 1 || d.Files != 1 || d.Bytes == 0 {
		t.Fatalf("dry run of a new table: %+v, %v", d, err)
	}
	if keys := keysOf(t, st); len(keys) != 0 {
		t.Fatalf("a dry run wrote %v", keys)
	}

	w, err := day.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := add(w); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := keysOf(t, st)

	type Wider struct {
		OrderID int64   `parquet:"order_id"`
		City    string  `parquet:"city"`
		Amount  float64 `parquet:"amount"`
		Note    string  `parquet:"note"`
	}
	wider := func(w *pswap.Writer) error { return pswap.Write(w, Wider{2, "Porto", 20, "x"}) }
	if _, err := day.DryRun(ctx, pswap.WriteOptions{}, wider); !errors.Is(err, pswap.ErrSchemaMismatch) {
		t.Fatalf("dry run of a column the table lacks: %v, want ErrSchemaMismatch", err)
	}
	d, err = day.DryRun(ctx, pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: true}}, wider)
	if err != nil || d.Outcome != pswap.WouldCommit || d.Current != res.Generation || d.CurrentRows != 1 {
		t.Fatalf("dry run of an evolution: %+v, %v", d, err)
	}
	hourly, _ := table.Partition("dt=2026-11-29/hr=01")
	if _, err := hourly.DryRun(ctx, pswap.WriteOptions{}, add); !errors.Is(err, pswap.ErrPartitionMismatch) {
		t.Fatalf("dry run of a key that does not fit: %v, want ErrPartitionMismatch", err)
	}
	if after := keysOf(t, st); !slices.Equal(after, before) {
		t.Fatalf("dry runs changed the store:\nbefore %v\nafter  %v", before, after)
	}
	if s, err := table.Schema(ctx); err != nil || len(s.Columns) != 3 {
		t.Fatalf("a dry run evolved the schema: %+v, %v", s, err)
	}
}
