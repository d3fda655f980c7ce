package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"sync/atomic"
	"testing"

	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
)

// TestStreamingWriteRetriesData: a client configured for a single attempt
// (as the CLI configures it, since pswap's own loops retry its metadata
// requests) still survives a 503 SlowDown on a part, on the multipart
// upload's creation and completion, and on a small object's PutObject, on a
// real MinIO behind a fault proxy: nothing above a Writer retries a part.
func TestStreamingWriteRetriesData(t *testing.T) {
	opts := testenv.S3Options(t)
	bucket, _ := testenv.S3Bucket(t)
	p, err := faultproxy.Start(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	opts.Endpoint = p.URL
	opts.RetryMaxAttempts = 1
	ctx := context.Background()
	st, err := s3store.New(ctx, bucket, "dataretry", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	for _, tc := range []struct {
		name  string
		size  int
		fault func(faultproxy.Request) bool
	}{
		{"part", 11 << 20, func(r faultproxy.Request) bool { return r.IsPart() }},
		{"create", 11 << 20, func(r faultproxy.Request) bool { return r.Method == "POST" && r.Query.Has("uploads") }},
		{"complete", 11 << 20, func(r faultproxy.Request) bool { return r.Method == "POST" && r.Query.Get("uploadId") != "" }},
		{"small", 1 << 10, func(r faultproxy.Request) bool { return r.IsPut() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var injected atomic.Int64
			p.SetRule(func(r faultproxy.Request) faultproxy.Action {
				// One fault on the first matching request only.
				if tc.fault(r) && injected.CompareAndSwap(0, 1) {
					return faultproxy.SlowDown
				}
				return faultproxy.Pass
			})
			defer p.SetRule(nil)
			data := make([]byte, tc.size)
			rand.Read(data)
			key := "obj-" + tc.name
			w, err := st.NewWriter(ctx, key, store.WriterOptions{PutOptions: store.PutOptions{IfNoneMatch: true}, PartSize: 5 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data); err != nil {
				t.Fatalf("write: %v", err)
			}
			if _, err := w.Commit(); err != nil {
				t.Fatalf("commit after one 503 on %s: %v", tc.name, err)
			}
			if injected.Load() != 1 {
				t.Fatalf("the fault was never injected: the case tests nothing")
			}
			got, _, err := store.ReadAll(ctx, st, key)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes, not the %d written", len(got), len(data))
			}
		})
	}
}
