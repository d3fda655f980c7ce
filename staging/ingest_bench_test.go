package staging

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/duckcheck"
)

// BenchmarkScanExisting measures the check of AddParquetFile (page CRCs,
// decode, row hash) without the upload, on DuckDB files of
// PSWAP_BENCH_ROWS (default 1M) rows: flat sales-like rows, and rows with
// a list, a struct and a map. Reports rows/s and MB/s of the file.
func BenchmarkScanExisting(b *testing.B) {
	duckcheck.SkipIfUnavailable(b)
	ctx := context.Background()
	n := 1_000_000
	if v, err := fmt.Sscan(os.Getenv("PSWAP_BENCH_ROWS"), &n); err != nil || v != 1 {
		n = 1_000_000
	}
	dir := b.TempDir()
	for name, sql := range map[string]string{
		"flat": "SELECT range AS id, (range %% 1000)::INTEGER AS k, range * 0.5 AS v, 'name-' || (range %% 1000) AS s, " +
			"to_timestamp(1800000000 + range) AS t FROM range(%d)",
		"nested": "SELECT range AS id, [range, range + 1, NULL] AS l, {'a': range * 0.5, 'b': 'name-' || (range %% 1000)} AS st, " +
			"MAP {'k': range %% 7, 'j': range %% 3} AS m, [{'x': range %% 5, 'y': [range %% 2]}] AS ls FROM range(%d)",
	} {
		path := filepath.Join(dir, name+".parquet")
		if _, err := duckcheck.Run(ctx, "COPY ("+fmt.Sprintf(sql, n)+") TO "+duckcheck.Quote(path)+" (FORMAT parquet)"); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			var d time.Duration
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				rows, _, _, err := scanParquet(ctx, f, fi.Size())
				d += time.Since(start)
				f.Close()
				if err != nil || rows != int64(n) {
					b.Fatalf("%d rows, %v", rows, err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/d.Seconds(), "rows/s")
			b.ReportMetric(float64(fi.Size())*float64(b.N)/1e6/d.Seconds(), "fileMB/s")
		})
	}
}
