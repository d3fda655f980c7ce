package engines

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap"
)

// order is what a Go ingestion job writes with pswap.Write: required
// columns and a timestamp (pswap.Write takes flat structs; nested columns
// come from Arrow, JSON Lines or Parquet).
type order struct {
	ID     int64     `parquet:"id"`
	Store  string    `parquet:"store"`
	Amount float64   `parquet:"amount"`
	At     time.Time `parquet:"at,timestamp(microsecond)"`
}

// TestLibraryStructsAndArrow: the Go library's two writers, Go structs
// (pswap.Write) and Arrow records (Writer.WriteRecord), each committed and
// published as the README says (Commit, then Publish), on both stores; the
// Arrow day widens a column (int32 in the records, long in the table).
func TestLibraryStructsAndArrow(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		ctx := context.Background()
		tbl, err := pswap.Open(ctx, tb.url, pswap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		commit := func(part string, write func(w *pswap.Writer) error) {
			t.Helper()
			p, err := tbl.Partition(part)
			if err != nil {
				t.Fatal(err)
			}
			w, err := p.Begin(ctx, pswap.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := write(w); err != nil {
				w.Abort(ctx)
				t.Fatal(err)
			}
			if _, err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if pub := w.Publish(ctx, pswap.PublishOptions{}); !pub.Published {
				t.Fatalf("publish %s: %v", part, pub.Err)
			}
			tb.record(part)
		}
		at := time.Date(2026, 11, 29, 8, 30, 0, 123456000, time.UTC)
		commit("dt=2026-11-28", func(w *pswap.Writer) error {
			var rows []order
			for i := range 20 {
				rows = append(rows, order{ID: int64(i), Store: []string{"lisbon", "porto"}[i%2], Amount: float64(i) + 0.25, At: at.Add(time.Duration(i) * time.Minute)})
			}
			return pswap.Write(w, rows...)
		})
		commit("dt=2026-11-29", func(w *pswap.Writer) error {
			rec := arrowDay(t, at)
			defer rec.Release()
			return w.WriteRecord(rec)
		})
		tb.checkEngines("dt")
	})
}

// arrowDay is a day of the same table as Arrow records: id as int32 (the
// table's long), nullable columns where the structs' were required.
func arrowDay(t *testing.T, at time.Time) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "store", Type: arrow.BinaryTypes.String},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range 7 {
		b.Field(0).(*array.Int32Builder).Append(int32(100 + i))
		b.Field(1).(*array.StringBuilder).Append("braga")
		b.Field(2).(*array.Float64Builder).Append(float64(i) * 1.5)
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(at.Add(time.Duration(i) * time.Hour).UnixMicro()))
	}
	return b.NewRecordBatch()
}
