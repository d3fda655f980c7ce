package viewtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// The suite's tables: date partitions of sales, whose schema one
// evolving commit widens by the column Evolved.
type sale struct {
	OrderID int64   `parquet:"order_id"`
	City    string  `parquet:"city"`
	Amount  float64 `parquet:"amount"`
}

type wideSale struct {
	OrderID int64   `parquet:"order_id"`
	City    string  `parquet:"city"`
	Amount  float64 `parquet:"amount"`
	Region  string  `parquet:"region"`
}

// Evolved is the column the suite's evolving commits add: a view of a
// table whose table.json has it must have it too.
const Evolved = "region"

var (
	saleSchema = arrow.NewSchema([]arrow.Field{
		{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "city", Type: arrow.BinaryTypes.String},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	wideSchema = arrow.NewSchema(append(saleSchema.Fields(), arrow.Field{Name: Evolved, Type: arrow.BinaryTypes.String, Nullable: true}), nil)
)

// day is the partition of day i of November 2026.
func day(i int) string { return fmt.Sprintf("dt=2026-11-%02d", i) }

// newTable writes the table.json of a sales table to st.
func newTable(t testing.TB, st store.Store) {
	t.Helper()
	cols, err := tablemeta.InferPartitionColumns(day(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := tablemeta.New(cols, saleSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := tablemeta.Create(context.Background(), st, tbl); err != nil {
		t.Fatal(err)
	}
}

// evolve adds the column Evolved to table.json (a no-op when it has it),
// as a commit with schema evolution does before its pointer swap.
func evolve(ctx context.Context, st store.Store) error {
	for {
		tbl, etag, err := tablemeta.Read(ctx, st)
		if err != nil {
			return err
		}
		next, added, err := tbl.Evolve(wideSchema, tablemeta.PlanOptions{})
		if err != nil || len(added) == 0 {
			return err
		}
		if _, err := tablemeta.Update(ctx, st, next, etag); !errors.Is(err, tablemeta.ErrChanged) {
			return err
		}
	}
}

// commitRows writes rows as a new generation of part and swaps it in.
func commitRows[T any](ctx context.Context, st store.Store, part string, rows ...T) (swap.Result, error) {
	txn, err := swap.Begin(ctx, st, part, swap.Options{})
	if err != nil {
		return swap.Result{}, err
	}
	s := staging.New(ctx, st, txn.DataPrefix(), staging.Options{})
	if err := staging.Write(s, rows...); err != nil {
		return swap.Result{}, err
	}
	c, err := s.Finish(ctx)
	if err != nil {
		return swap.Result{}, err
	}
	return txn.Commit(ctx, c)
}

// Commit is a committed generation, as the commit path hands it to a
// view's publish.
type Commit struct {
	Partition  string
	Generation string
	Seq        int64 // the pointer's sequence number
}

func commitOf(r swap.Result) Commit {
	return Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq}
}

// commitDay commits one row of seed to day i.
func commitDay(t testing.TB, st store.Store, i int, seed int64) Commit {
	t.Helper()
	r, err := commitRows(context.Background(), st, day(i), sale{seed, "Lisbon", float64(seed)})
	if err != nil {
		t.Fatalf("commit %s: %v", day(i), err)
	}
	return commitOf(r)
}

// commitEvolved evolves the schema, then commits a row with the new
// column to day i.
func commitEvolved(ctx context.Context, st store.Store, i int) (Commit, error) {
	if err := evolve(ctx, st); err != nil {
		return Commit{}, fmt.Errorf("evolve the schema: %w", err)
	}
	r, err := commitRows(ctx, st, day(i), wideSale{int64(i), "Porto", 1, "north"})
	return commitOf(r), err
}
