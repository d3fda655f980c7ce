package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store/s3store"
)

// envRows overrides the row count of the big benchmarks.
const envRows = "PSWAP_BENCH_ROWS"

// rowsOr returns $PSWAP_BENCH_ROWS, or def.
func rowsOr(def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(envRows), 10, 64); err == nil && v > 0 {
		return v
	}
	return def
}

// batchRows is how many structs the producer hands to pswap.Write at once.
const batchRows = 8192

// s3env is a fresh bucket on the S3 server, reached through one counting
// HTTP client by pswap's stores and by the plain SDK client alike.
type s3env struct {
	bucket string
	http   *CountingClient
	opts   s3store.Options
	raw    *s3.Client
}

// newS3Env skips the benchmark when no S3 server is configured.
func newS3Env(tb testing.TB) *s3env {
	tb.Helper()
	opts := testenv.S3Options(tb)
	// The AWS configuration loader refuses a custom HTTP client (ours
	// counts requests) when a CA bundle is configured; against a plain
	// HTTP endpoint the bundle has no effect, so drop it.
	if strings.HasPrefix(os.Getenv("AWS_ENDPOINT_URL"), "http://") {
		tb.Setenv("AWS_CA_BUNDLE", "")
	}
	bucket, _ := testenv.S3Bucket(tb)
	hc := NewCountingClient(256)
	opts.HTTPClient = hc
	raw, err := s3store.NewClient(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return &s3env{bucket: bucket, http: hc, opts: opts, raw: raw}
}

// table opens a pswap table at prefix of the bucket with the env's client.
func (e *s3env) table(ctx context.Context, prefix string) (*pswap.Table, error) {
	st, err := s3store.New(ctx, e.bucket, prefix, e.opts)
	if err != nil {
		return nil, err
	}
	return pswap.NewTable(st), nil
}

// writeResult is one pswap write of the sales rows.
type writeResult struct {
	dur  time.Duration
	res  pswap.Result
	reqs map[string]int // HTTP requests by operation
}

// writeSales writes rows [0, n) to a partition as one generation and
// commits it: the end-to-end pswap pipeline. The clock runs from Begin to
// the end of Commit.
func writeSales(ctx context.Context, t *pswap.Table, e *s3env, part string, n int64, wo pswap.WriteOptions) (writeResult, error) {
	p, err := t.Partition(part)
	if err != nil {
		return writeResult{}, err
	}
	var before map[string]int
	if e != nil {
		before = e.http.Counts()
	}
	batch := make([]Sale, batchRows)
	start := time.Now()
	w, err := p.Begin(ctx, wo)
	if err != nil {
		return writeResult{}, err
	}
	for i := int64(0); i < n; i += batchRows {
		k := min(batchRows, n-i)
		if err := pswap.Write(w, Sales(batch[:k], i)...); err != nil {
			w.Abort(ctx)
			return writeResult{}, err
		}
	}
	res, err := w.Commit(ctx)
	if err != nil {
		return writeResult{}, err
	}
	r := writeResult{dur: time.Since(start), res: res}
	if e != nil {
		r.reqs = Diff(e.http.Counts(), before)
	}
	return r, nil
}

// writeSlice writes rows that already exist in memory (in batches of
// batchRows, as a producer streaming them would) as one generation of
// part: pswap alone, without generating the rows.
func writeSlice(ctx context.Context, t *pswap.Table, part string, rows []Sale, wo pswap.WriteOptions) (time.Duration, pswap.Result, error) {
	p, err := t.Partition(part)
	if err != nil {
		return 0, pswap.Result{}, err
	}
	start := time.Now()
	w, err := p.Begin(ctx, wo)
	if err != nil {
		return 0, pswap.Result{}, err
	}
	for len(rows) > 0 {
		k := min(batchRows, len(rows))
		if err := pswap.Write(w, rows[:k]...); err != nil {
			w.Abort(ctx)
			return 0, pswap.Result{}, err
		}
		rows = rows[k:]
	}
	res, err := w.Commit(ctx)
	return time.Since(start), res, err
}

// putBytes is one plain PutObject of data: the raw limit.
func (e *s3env) putBytes(ctx context.Context, key string, data []byte) (time.Duration, error) {
	start := time.Now()
	_, err := e.raw.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &e.bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	return time.Since(start), err
}

// putFile is one plain PutObject of a local file, as a user's script
// would upload it.
func (e *s3env) putFile(ctx context.Context, key, path string) (time.Duration, error) {
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	_, err = e.raw.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &e.bucket, Key: &key, Body: f, ContentLength: aws.Int64(fi.Size()),
	})
	return time.Since(start), err
}

// readGeneration returns the bytes of the current generation's files,
// concatenated (they are uploaded again as one object by the raw PUT).
func readGeneration(ctx context.Context, t *pswap.Table, part string) ([]byte, error) {
	p, err := t.Partition(part)
	if err != nil {
		return nil, err
	}
	snap, err := p.Current(ctx)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, f := range snap.Files {
		rc, _, err := t.Store().Get(ctx, f.Key)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(&buf, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// duckCopyTable materializes rows [0, n) in a DuckDB table (untimed) and
// returns the time of COPY of that table to a local Parquet file: DuckDB
// alone, without generating the rows.
func duckCopyTable(ctx context.Context, path string, n int64) (time.Duration, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	r, err := duckcheck.Run(ctx, "CREATE TABLE sales AS "+SalesSQL(n),
		fmt.Sprintf("COPY sales TO %s (FORMAT parquet)", duckcheck.Quote(path)))
	if err != nil {
		return 0, err
	}
	return r.Durations[1], nil
}

// duckCopy writes rows [0, n) to a local Parquet file with DuckDB and
// returns the time of the COPY statement alone, measured inside the
// DuckDB process (its start-up is not counted against the naive pipeline).
func duckCopy(ctx context.Context, path string, n int64) (time.Duration, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	r, err := duckcheck.Run(ctx, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet)", SalesSQL(n), duckcheck.Quote(path)))
	if err != nil {
		return 0, err
	}
	return r.Durations[0], nil
}
