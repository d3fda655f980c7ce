package staging

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap/internal/testing/pqfiles"
)

// BenchmarkAddParquetPromoted compares adding an existing Parquet file of
// 1M rows copied as it is (its int64 column is the table's type) with the
// same values in int32 that must be rewritten as int64: the cost of a
// promotion is a decode and an encode on top of the check's decode.
func BenchmarkAddParquetPromoted(b *testing.B) {
	const n = 1 << 20
	dir := b.TempDir()
	write := func(name string, dt arrow.DataType) string {
		var arr arrow.Array
		if dt.ID() == arrow.INT32 {
			bl := array.NewInt32Builder(memory.DefaultAllocator)
			for i := range n {
				bl.Append(int32(i % 100000))
			}
			arr = bl.NewArray()
		} else {
			bl := array.NewInt64Builder(memory.DefaultAllocator)
			for i := range n {
				bl.Append(int64(i % 100000))
			}
			arr = bl.NewArray()
		}
		defer arr.Release()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: dt}}, nil), []arrow.Array{arr}, n)
		defer rec.Release()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pqfiles.ArrowParquet(b, rec, nil), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	long := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, c := range []struct {
		name string
		path string
	}{{"copy-int64", write("a.parquet", arrow.PrimitiveTypes.Int64)}, {"promote-int32", write("b.parquet", arrow.PrimitiveTypes.Int32)}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, s := newMem(b, Options{Conform: conformTo(long)})
				if err := s.AddParquetFile(context.Background(), c.path); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Finish(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
