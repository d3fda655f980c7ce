package pqscan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pswap/pswap/internal/pqscan"
)

// manyGroups writes a Parquet file of n rows in row groups of 500.
func manyGroups(t *testing.T, n int) string {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%5 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(string(rune('a' + i%26)))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "groups.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(500)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPrescanScans: a prescan computes what Scan does, whether its result
// is asked for at once (all workers from the start) or after it ran on one
// worker alone; a cancelled one reports the cancellation; Stop forgets it
// (TakePrescan finds nothing) and is a no-op on nil.
func TestPrescanScans(t *testing.T) {
	ctx := context.Background()
	path := manyGroups(t, 20_000)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	rows, sum, _, err := pqscan.Scan(ctx, f, fi.Size(), false, false)
	if err != nil || rows != 20_000 {
		t.Fatalf("Scan: %d rows, %v", rows, err)
	}
	for _, early := range []bool{true, false} {
		p := pqscan.StartPrescan(ctx, path)
		if !early {
			// Taken later: the one worker may have done it all.
			if q := pqscan.TakePrescan(path, fi, false); q != p {
				t.Fatalf("TakePrescan: %p, want %p", q, p)
			}
		}
		r, s, err := p.Wait(ctx)
		if err != nil || r != rows || s != sum {
			t.Errorf("early %v: %d rows, %v, sum equal %v", early, r, err, s == sum)
		}
		p.Stop()
		if q := pqscan.TakePrescan(path, fi, false); q != nil {
			t.Errorf("early %v: a stopped prescan was taken", early)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	p := pqscan.StartPrescan(cctx, path)
	if _, _, err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled prescan: %v, want context.Canceled", err)
	}
	p.Stop()
	(*pqscan.Prescan)(nil).Stop()
	if p := pqscan.StartPrescan(ctx, filepath.Join(t.TempDir(), "missing.parquet")); p != nil {
		t.Errorf("a missing file started a prescan")
	}
}
