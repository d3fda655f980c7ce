package pqscan

import (
	"github.com/pswap/pswap/internal/checksum"

	"context"

	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pswap/pswap/internal/testing/duckcheck"
)

// benchBatch is the rows of the records BenchmarkRowHash hashes (staging's
// writer batch).
const benchBatch = 8 << 10

// benchFiles writes the flat and nested DuckDB files of n rows into dir.
func benchFiles(b *testing.B, dir string, n int) map[string]string {
	ctx := context.Background()
	out := map[string]string{}
	for name, sql := range benchSQL {
		path := filepath.Join(dir, name+".parquet")
		if _, err := duckcheck.Run(ctx, "COPY ("+fmt.Sprintf(sql, n)+") TO "+duckcheck.Quote(path)+" (FORMAT parquet)"); err != nil {
			b.Fatal(err)
		}
		out[name] = path
	}
	return out
}

var benchSQL = map[string]string{
	"flat": "SELECT range AS id, (range %% 1000)::INTEGER AS k, range * 0.5 AS v, 'name-' || (range %% 1000) AS s, " +
		"to_timestamp(1800000000 + range) AS t FROM range(%d)",
	// primitive columns only (the fast scan's; flat's v is a decimal), one
	// of them mostly null
	"primitive": "SELECT range AS id, (range %% 1000)::INTEGER AS k, (range * 0.5)::DOUBLE AS v, 'name-' || (range %% 1000) AS s, " +
		"to_timestamp(1800000000 + range) AS t, CASE WHEN range %% 7 = 0 THEN 'note-' || range END AS note FROM range(%d)",
	"nested": "SELECT range AS id, [range, range + 1, NULL] AS l, {'a': range * 0.5, 'b': 'name-' || (range %% 1000)} AS st, " +
		"MAP {'k': range %% 7, 'j': range %% 3} AS m, [{'x': range %% 5, 'y': [range %% 2]}] AS ls FROM range(%d)",
}

// BenchmarkRowHash measures the row hash alone (canonical encoding and
// XXH3-128 of each row, on one core) over batches already decoded from
// the flat and nested files of BenchmarkScanExisting (200k rows): rows/s,
// and MB/s of canonical row encoding hashed.
func BenchmarkRowHash(b *testing.B) {
	duckcheck.SkipIfUnavailable(b)
	ctx := context.Background()
	const n = 200_000
	for name, path := range benchFiles(b, b.TempDir(), n) {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		fi, _ := f.Stat()
		pr, err := Open(f, fi.Size())
		if err != nil {
			b.Fatal(err)
		}
		_, canon, err := CheckFooter(pr, fi.Size())
		if err != nil {
			b.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: benchBatch}, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		tbl, err := fr.ReadTable(ctx)
		if err != nil {
			b.Fatal(err)
		}
		tr := array.NewTableReader(tbl, benchBatch)
		var recs []arrow.RecordBatch
		for tr.Next() {
			rec := tr.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		var encoded int64
		for _, rec := range recs {
			encs := make([]checksum.ArrowEnc, rec.NumCols())
			for i, col := range rec.Columns() {
				encs[i], _ = checksum.ArrowEncoder(col, canon.Arrow.Field(i).Type)
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				var buf []byte
				for _, e := range encs {
					buf = e(buf, i)
				}
				encoded += int64(len(buf))
			}
		}
		b.Run(name, func(b *testing.B) {
			var sum checksum.Sum
			var buf []byte
			for b.Loop() {
				for _, rec := range recs {
					if buf, err = hashBatch(rec, canon, &sum, buf); err != nil {
						b.Fatal(err)
					}
				}
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(n)*float64(b.N)/sec, "rows/s")
			b.ReportMetric(float64(encoded)*float64(b.N)/1e6/sec, "MB/s")
			b.ReportMetric(float64(encoded)/n, "B/row")
		})
		for _, rec := range recs {
			rec.Release()
		}
		tr.Release()
		tbl.Release()
		pr.Close()
		f.Close()
	}
}

// BenchmarkScanExisting measures the check of AddParquetFile (page CRCs,
// decode, row hash) without the upload, on DuckDB files of
// PSWAP_BENCH_ROWS (default 1M) rows: flat sales-like rows, and rows with
// a list, a struct and a map. Reports rows/s and MB/s of the file, and
// the time against the Arrow path alone (the fast scan off), alternating
// in the same run ("x-arrow": median of the per-round ratios).
func BenchmarkScanExisting(b *testing.B) {
	duckcheck.SkipIfUnavailable(b)
	ctx := context.Background()
	n := 1_000_000
	if v, err := fmt.Sscan(os.Getenv("PSWAP_BENCH_ROWS"), &n); err != nil || v != 1 {
		n = 1_000_000
	}
	for name, path := range benchFiles(b, b.TempDir(), n) {
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		scan := func(arrowOnly bool) time.Duration {
			noFastScan = arrowOnly
			defer func() { noFastScan = false }()
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			start := time.Now()
			rows, _, _, err := Scan(ctx, f, fi.Size(), false, false)
			d := time.Since(start)
			if err != nil || rows != int64(n) {
				b.Fatalf("%d rows, %v", rows, err)
			}
			return d
		}
		b.Run(name, func(b *testing.B) {
			var d time.Duration
			var ratios []float64
			for b.Loop() {
				fast := scan(false)
				d += fast
				ratios = append(ratios, fast.Seconds()/scan(true).Seconds())
			}
			sort.Float64s(ratios)
			b.ReportMetric(float64(n)*float64(b.N)/d.Seconds(), "rows/s")
			b.ReportMetric(float64(fi.Size())*float64(b.N)/1e6/d.Seconds(), "fileMB/s")
			b.ReportMetric(ratios[len(ratios)/2], "x-arrow")
		})
	}
}
