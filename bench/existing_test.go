package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pswap/pswap/internal/duckcheck"
)

// BenchmarkExistingFile is the focused form of run.sh's existing-file
// case: committing DuckDB's Parquet file of PSWAP_BENCH_ROWS (default 2M)
// sales rows with the library (Begin + AddPath + Commit) against one
// plain PutObject of the same file, alternating in the same run. It
// reports the median ratio commit/PUT ("x-put") and the file's size.
// Needs S3 (PSWAP_TEST_S3=1, e.g. scripts/minio.sh).
func BenchmarkExistingFile(b *testing.B) {
	duckcheck.SkipIfUnavailable(b)
	e := newS3Env(b)
	ctx := context.Background()
	n := rowsOr(2_000_000)
	path := filepath.Join(b.TempDir(), "sales.parquet")
	if _, err := duckCopy(ctx, path, n); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	t, err := e.table(ctx, "existing")
	if err != nil {
		b.Fatal(err)
	}
	r := &reporter{ctx: ctx}
	var commits, puts []float64
	round := 0
	for b.Loop() {
		for _, step := range rotate(2, round) {
			if step == 0 {
				d, err := commitPath(r, t, fmt.Sprintf("dt=2026-11-29/round=%d", round), path)
				if err != nil {
					b.Fatal(err)
				}
				commits = append(commits, d.Seconds())
			} else {
				d, err := e.putFile(ctx, fmt.Sprintf("put/round=%d/sales.parquet", round), path)
				if err != nil {
					b.Fatal(err)
				}
				puts = append(puts, d.Seconds())
			}
		}
		round++
	}
	s := Summarize(Ratios(commits, puts))
	b.ReportMetric(s.Median, "x-put")
	b.ReportMetric(s.Min, "x-put-min")
	b.ReportMetric(s.Max, "x-put-max")
	b.ReportMetric(float64(fi.Size())/(1<<20), "MiB")
	b.ReportMetric(Summarize(puts).Median*1000, "put-ms")
	b.ReportMetric(Summarize(commits).Median*1000, "commit-ms")
}
