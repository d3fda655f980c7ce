package pswap_test

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/swap"
)

// wire counts the HTTP requests an S3 store sends, by kind, on the wire
// (SDK retries and clock probes included). It hooks the transport's Proxy
// func, which runs for every request: the SDK takes only its own client
// type when a CA bundle is configured.
type wire struct {
	mu     sync.Mutex
	counts map[string]int
}

func (w *wire) proxy(r *http.Request) (*url.URL, error) {
	q := r.URL.Query()
	op := r.Method
	switch {
	case r.Method == http.MethodGet && q.Has("list-type"):
		op = "list"
	case r.Method == http.MethodGet && r.Header.Get("Range") != "":
		op = "get-range"
	case r.Method == http.MethodGet:
		op = "get"
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" && q.Has("partNumber"):
		op = "upload-part-copy"
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		op = "copy-object"
	case r.Method == http.MethodPut && q.Has("partNumber"):
		op = "upload-part"
	case r.Method == http.MethodPut:
		op = "put"
	case r.Method == http.MethodPost && q.Has("uploads"):
		op = "create-multipart"
	case r.Method == http.MethodPost && q.Has("uploadId"):
		op = "complete-multipart"
	case r.Method == http.MethodHead:
		op = "head"
	case r.Method == http.MethodDelete:
		op = "delete"
	}
	w.mu.Lock()
	w.counts[op]++
	w.mu.Unlock()
	return nil, nil
}

func (w *wire) take() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := maps.Clone(w.counts)
	w.counts = map[string]int{}
	return c
}

func total(c map[string]int) int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

func show(c map[string]int) string {
	var parts []string
	for k, v := range c {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// countedS3 opens a store on a fresh bucket whose requests w counts.
func countedS3(t *testing.T, w *wire) *s3store.Store {
	t.Helper()
	opts := testenv.S3Options(t)
	opts.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) { tr.Proxy = w.proxy })
	bucket, _ := testenv.S3Bucket(t)
	s, err := s3store.New(ctx, bucket, "table", opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAdoptOnMinIORequests adopts 3 and 100 files that an engine wrote into
// a reservation on MinIO and counts the requests on the wire: one listing
// page, one ranged GET per file, no full GET of data, no data PUT.
func TestAdoptOnMinIORequests(t *testing.T) {
	for _, n := range []int{3, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := &wire{counts: map[string]int{}}
			st := countedS3(t, w)
			table := pswap.NewTable(st)
			firstCommit(t, table, st)
			p, res := reserve(t, table)
			for i := range n {
				putObj(t, st, fmt.Sprintf("%spart-%05d-c000.snappy.parquet", res.Prefix, i), parquetBytes(t, i*100, 100))
			}
			putObj(t, st, res.Prefix+"_SUCCESS", nil)
			w.take()
			r, err := p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
			if err != nil || !r.Changed || r.Rows != int64(100*n) || r.Files != n {
				t.Fatalf("adopt: %+v %v", r, err)
			}
			c := w.take()
			t.Logf("adopting %d files on MinIO: %d requests: %s", n, total(c), show(c))
			if c["list"] != 1 || c["get-range"] != n || c["get"] != 2 || c["put"] != 2 || c["delete"] != 1 || total(c) != n+6 {
				t.Fatalf("adopting %d files: %s; want list=1 get-range=%d get=2 (record, table.json) put=2 (manifest, pointer) delete=1", n, show(c), n)
			}
			rep, err := p.Verify(ctx)
			if err != nil || !rep.OK {
				t.Fatalf("verify: %+v %v", rep, err)
			}
			if c := w.take(); c["get"] != 2 {
				t.Fatalf("verify of adopted files downloaded data: %s", show(c))
			}
		})
	}
}

// TestCommitObjectsServerSide commits objects of another bucket: copied
// server-side (no GET of data, no data PUT), byte-exact, verified; a
// source replaced during the copy fails the commit and nothing is visible.
func TestCommitObjectsServerSide(t *testing.T) {
	w := &wire{counts: map[string]int{}}
	st := countedS3(t, w)
	srcBucket, _ := testenv.S3Bucket(t)
	src, err := st.Sibling(srcBucket, "")
	if err != nil {
		t.Fatal(err)
	}
	table := pswap.NewTable(st)
	for i := range 3 {
		putObj(t, src, fmt.Sprintf("spark-out/dt=2026-09-01/part-%05d.snappy.parquet", i), parquetBytes(t, i*50, 50))
	}
	putObj(t, src, "spark-out/dt=2026-09-01/_SUCCESS", nil)
	p, err := table.Partition("dt=2026-09-01")
	if err != nil {
		t.Fatal(err)
	}
	w.take()
	r, err := p.CommitObjects(ctx, []string{"s3://" + srcBucket + "/spark-out/dt=2026-09-01/"}, pswap.WriteOptions{})
	if err != nil || !r.Changed || r.Rows != 150 {
		t.Fatalf("commit objects: %+v %v", r, err)
	}
	c := w.take()
	t.Logf("committing 3 objects by server-side copy: %d requests: %s", total(c), show(c))
	// get<=3: the pointer, table.json, and (the table has no table.json
	// yet, so it may be one written before table.json existed) the
	// partition's pointer at its legacy key.
	if c["get"] > 3 || c["upload-part"] != 0 || c["upload-part-copy"] != 3 {
		t.Fatalf("server-side commit: %s; want no data downloaded (get<=3: the pointer at both keys, table.json) or uploaded", show(c))
	}
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range snap.Files {
		got, _, err := store.ReadAll(ctx, st, f.Key)
		if err != nil || string(got) != string(parquetBytes(t, i*50, 50)) {
			t.Fatalf("copied %s: %d bytes, %v", f.Path, len(got), err)
		}
	}
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// The same objects again: identical content, a no-op.
	r, err = p.CommitObjects(ctx, []string{"s3://" + srcBucket + "/spark-out/dt=2026-09-01/"}, pswap.WriteOptions{})
	if err != nil || r.Changed || r.Outcome != swap.Identical {
		t.Fatalf("same objects again: %+v %v", r, err)
	}
	// A run that committed here re-run with its run id: the same-run no-op
	// describing its generation, with nothing copied.
	rerun := pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "job-7"}}
	first, err := p.CommitObjects(ctx, []string{"s3://" + srcBucket + "/spark-out/dt=2026-09-01/part-00000.snappy.parquet"}, rerun)
	if err != nil || !first.Changed || first.Rows != 50 {
		t.Fatalf("commit one object as job-7: %+v %v", first, err)
	}
	w.take()
	again, err := p.CommitObjects(ctx, []string{"s3://" + srcBucket + "/spark-out/dt=2026-09-01/part-00001.snappy.parquet"}, rerun)
	if c := w.take(); err != nil || again.Changed || again.Outcome != swap.SameRun || again.Generation != first.Generation ||
		again.Seq != first.Seq || again.Rows != 50 || again.Files != 1 || again.RunID != "job-7" ||
		again.IdempotencyKey != first.IdempotencyKey || c["upload-part-copy"] != 0 || c["put"] != 1 {
		// put=1: the no-op's attempt record (the audit's no-op row), as a
		// Writer's retry writes.
		t.Fatalf("job-7 again: %+v %v (requests %s), want the same-run no-op of %+v (one PUT, its attempt record)", again, err, show(c), first)
	}

	// A source replaced while it is being copied.
	q, _ := table.Partition("dt=2026-09-02")
	putObj(t, src, "in/a.parquet", parquetBytes(t, 0, 10))
	opts := pswap.WriteOptions{}
	var replaced atomic.Bool
	w2 := &wire{counts: map[string]int{}}
	hooked := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.Proxy = func(r *http.Request) (*url.URL, error) {
			if r.Header.Get("X-Amz-Copy-Source") != "" && replaced.CompareAndSwap(false, true) {
				putObj(t, src, "in/a.parquet", parquetBytes(t, 5, 10))
			}
			return w2.proxy(r)
		}
	})
	o := testenv.S3Options(t)
	o.HTTPClient = hooked
	st2, err := s3store.New(ctx, st.Bucket(), "table", o)
	if err != nil {
		t.Fatal(err)
	}
	q2, _ := pswap.NewTable(st2).Partition(q.Key())
	_, err = q2.CommitObjects(ctx, []string{"s3://" + srcBucket + "/in/a.parquet"}, opts)
	if !errors.Is(err, store.ErrPrecondition) || !replaced.Load() {
		t.Fatalf("source replaced during the copy: %v (replaced %v)", err, replaced.Load())
	}
	if _, err := q.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
		t.Fatalf("a failed copy made something visible: %v", err)
	}
	if keys := listKeys(t, st, q.Key()+"/"); len(keys) != 0 {
		t.Fatalf("a failed copy left %q", keys)
	}
}
