package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/bench/internal/link"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store/s3store"
)

// BenchmarkExistingFile is the focused form of run.sh's existing-file
// case: committing DuckDB's Parquet file of PSWAP_BENCH_ROWS (default 2M)
// sales rows with the library (Begin + AddPath + Commit) against one
// plain PutObject of the same file, alternating in the same run. It
// reports the median ratio commit/PUT ("x-put") and the file's size.
// Needs S3 (PSWAP_TEST_S3=1, e.g. scripts/minio.sh).
//
// Sub-benchmarks: full (the default check) and footer (the opt-in
// footer-only check, staging.CheckFooter), each at the loopback's own speed
// and, as a modelled condition, with commit and PUT alike through one
// bandwidth limit of 100 MB/s (-100MBps: about one S3 PUT stream), where
// the check should hide behind the upload.
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
	for _, c := range []struct {
		name  string
		check staging.Check
		mbps  float64 // 0: unlimited
	}{
		{"full", staging.CheckFull, 0},
		{"footer", staging.CheckFooter, 0},
		{"full-100MBps", staging.CheckFull, 100},
		{"footer-100MBps", staging.CheckFooter, 100},
	} {
		b.Run(c.name, func(b *testing.B) {
			env := e
			if c.mbps > 0 {
				env = e.throttled(b, c.mbps*1e6)
			}
			t, err := env.table(ctx, "existing-"+c.name)
			if err != nil {
				b.Fatal(err)
			}
			wo := pswap.WriteOptions{Staging: staging.Options{Check: c.check}}
			r := &reporter{ctx: ctx}
			var commits, puts []float64
			round := 0
			for b.Loop() {
				for _, step := range rotate(2, round) {
					if step == 0 {
						d, err := commitPathWith(r, t, fmt.Sprintf("dt=2026-11-29/round=%d", round), path, wo)
						if err != nil {
							b.Fatal(err)
						}
						commits = append(commits, d.Seconds())
					} else {
						d, err := env.putFile(ctx, fmt.Sprintf("put/%s/round=%d/sales.parquet", c.name, round), path)
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
		})
	}
}

// commitPathWith is commitPath with write options.
func commitPathWith(r *reporter, t *pswap.Table, part, path string, wo pswap.WriteOptions) (time.Duration, error) {
	ctx := r.ctx
	p, err := t.Partition(part)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	w, err := p.Begin(ctx, wo)
	if err != nil {
		return 0, err
	}
	if err := w.AddPath(ctx, path, pswap.FormatParquet); err != nil {
		w.Abort(ctx)
		return 0, err
	}
	if _, err := w.Commit(ctx); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// throttled returns a copy of the env whose requests (pswap's and the plain
// SDK client's alike) send their bodies through one shared limit of
// bytesPerSec: a modelled uplink.
func (e *s3env) throttled(tb testing.TB, bytesPerSec float64) *s3env {
	tb.Helper()
	t := *e
	lim := link.NewLimiter(bytesPerSec)
	t.opts.HTTPClient = throttledClient{inner: e.http, lim: lim}
	raw, err := s3store.NewClient(context.Background(), t.opts)
	if err != nil {
		tb.Fatal(err)
	}
	t.raw = raw
	return &t
}

// throttledClient sends request bodies through lim.
type throttledClient struct {
	inner aws.HTTPClient
	lim   *link.Limiter
}

func (c throttledClient) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = link.Body(r.Body, c.lim)
	}
	return c.inner.Do(r)
}
