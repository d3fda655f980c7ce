package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pswap/pswap/internal/testing/duckcheck"
)

// BenchmarkScanParquet measures decoding every row of DuckDB's Parquet
// file of PSWAP_BENCH_ROWS (default 1M) rows with Arrow's record reader,
// the decoding half of what staging's AddParquetFile does before it
// uploads a file (it also hashes every row), with a few reader settings.
func BenchmarkScanParquet(b *testing.B) {
	duckcheck.SkipIfUnavailable(b)
	ctx := context.Background()
	n := rowsOr(1_000_000)
	path := filepath.Join(b.TempDir(), "sales.parquet")
	if _, err := duckCopy(ctx, path, n); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		batch    int64
		parallel bool
	}{{8 << 10, false}, {8 << 10, true}, {64 << 10, false}, {64 << 10, true}} {
		b.Run(fmt.Sprintf("batch=%d/parallel=%v", c.batch, c.parallel), func(b *testing.B) {
			for b.Loop() {
				rows, err := scanArrow(ctx, path, pqarrow.ArrowReadProperties{BatchSize: c.batch, Parallel: c.parallel})
				if err != nil {
					b.Fatal(err)
				}
				if rows != n {
					b.Fatalf("read %d rows, want %d", rows, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
		})
	}
}

// scanArrow reads every record of a Parquet file and returns the row count.
func scanArrow(ctx context.Context, path string, props pqarrow.ArrowReadProperties) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := file.NewParquetReader(f)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, props, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var rows int64
	for rr.Next() {
		rows += rr.RecordBatch().NumRows()
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return rows, err
	}
	return rows, nil
}
