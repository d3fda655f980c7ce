package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/store/memstore"
)

// The Benchmark functions below run one pipeline each, for profiling and
// ad hoc use (`go test -bench EndToEnd ./bench`). The report that compares
// them round by round is TestReport.

// BenchmarkEndToEnd writes PSWAP_BENCH_ROWS (default 1M) sales rows to
// MinIO: through pswap (encode, upload, commit), through the naive
// pipeline (DuckDB COPY to a local file, one PutObject), and as one raw
// PutObject of pswap's Parquet bytes.
func BenchmarkEndToEnd(b *testing.B) {
	ctx := context.Background()
	n := rowsOr(1_000_000)
	e := newS3Env(b)
	t, err := e.table(ctx, "e2e")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("pswap", func(b *testing.B) {
		var bytes int64
		for i := 0; b.Loop(); i++ {
			r, err := writeSales(ctx, t, e, fmt.Sprintf("dt=2026-11-29/run=%d", i), n, pswap.WriteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			bytes = r.res.Bytes
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(bytes), "parquet-bytes")
	})
	b.Run("naive", func(b *testing.B) {
		duckcheck.SkipIfUnavailable(b)
		path := filepath.Join(b.TempDir(), "sales.parquet")
		for i := 0; b.Loop(); i++ {
			if _, err := duckCopy(ctx, path, n); err != nil {
				b.Fatal(err)
			}
			if _, err := e.putFile(ctx, fmt.Sprintf("naive/%d.parquet", i), path); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("rawput", func(b *testing.B) {
		if _, err := writeSales(ctx, t, e, "dt=2026-11-29/run=raw", n, pswap.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		data, err := readGeneration(ctx, t, "dt=2026-11-29/run=raw")
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		for i := 0; b.Loop(); i++ {
			if _, err := e.putBytes(ctx, fmt.Sprintf("raw/%d.parquet", i), data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEncode is the pswap write into a memory store: the CPU cost of
// encoding, hashing and committing without the network.
func BenchmarkEncode(b *testing.B) {
	ctx := context.Background()
	n := rowsOr(1_000_000)
	t := pswap.NewTable(memstore.New())
	var bytes int64
	for i := 0; b.Loop(); i++ {
		r, err := writeSales(ctx, t, nil, fmt.Sprintf("dt=2026-11-29/run=%d", i), n, pswap.WriteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		bytes = r.res.Bytes
		if err := t.Store().Close(); err != nil {
			b.Fatal(err)
		}
		t = pswap.NewTable(memstore.New())
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(bytes)/float64(n), "bytes/row")
}

// BenchmarkCommitFile commits DuckDB's Parquet file of PSWAP_BENCH_ROWS
// (default 1M) rows through the library (Begin, AddPath, Commit) and, for
// comparison, uploads it with one PutObject.
func BenchmarkCommitFile(b *testing.B) {
	duckcheck.SkipIfUnavailable(b)
	ctx := context.Background()
	n := rowsOr(1_000_000)
	e := newS3Env(b)
	path := filepath.Join(b.TempDir(), "sales.parquet")
	if _, err := duckCopy(ctx, path, n); err != nil {
		b.Fatal(err)
	}
	t, err := e.table(ctx, "commitfile")
	if err != nil {
		b.Fatal(err)
	}
	r := &reporter{ctx: ctx}
	b.Run("pswap", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := commitPath(r, t, fmt.Sprintf("dt=2026-11-29/run=%d", i), path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("put", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := e.putFile(ctx, fmt.Sprintf("put/%d.parquet", i), path); err != nil {
				b.Fatal(err)
			}
		}
	})
}
