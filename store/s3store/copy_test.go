package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
)

// partHook calls onPart before sending the n-th UploadPartCopy request. It
// sits in the transport's Proxy func, which runs for every request: the SDK
// accepts only its own client type when a CA bundle is configured.
type partHook struct {
	n      int32
	parts  atomic.Int32
	onPart func()
}

func (h *partHook) proxy(r *http.Request) (*url.URL, error) {
	if r.Method == http.MethodPut && r.URL.Query().Has("partNumber") && r.Header.Get("X-Amz-Copy-Source") != "" {
		if h.parts.Add(1) == h.n && h.onPart != nil {
			h.onPart()
		}
	}
	return nil, nil
}

func putRandom(t *testing.T, s store.Store, key string, n int) []byte {
	t.Helper()
	data := make([]byte, n)
	rand.Read(data)
	w, err := s.NewWriter(context.Background(), key, store.WriterOptions{PartSize: s3store.MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestMultipartCopy runs the UploadPartCopy path (used above 5 GiB) on a
// 12 MiB object with lowered limits: the copy is byte-exact, and a source
// replaced between two parts fails the copy and leaves neither the object
// nor an unfinished upload.
func TestMultipartCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := testenv.S3Options(t)
	hook := &partHook{n: 2}
	opts.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) { tr.Proxy = hook.proxy })
	bucket, _ := testenv.S3Bucket(t)
	s, err := s3store.New(ctx, bucket, "copy", opts)
	if err != nil {
		t.Fatal(err)
	}
	s3store.SetCopyLimits(s, 1<<20, s3store.MinPartSize)
	data := putRandom(t, s, "in/big.bin", 12<<20)
	src, err := s.Stat(ctx, "in/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Copy(ctx, "gen/1/big.bin", "in/big.bin", store.CopyOptions{SourceIfMatch: src.ETag, IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := store.ReadAll(ctx, s, "gen/1/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) || a.Size != int64(len(data)) {
		t.Fatalf("multipart copy: %d bytes (attrs %d), want %d equal bytes", len(got), a.Size, len(data))
	}
	if n := hook.parts.Load(); n != 3 {
		t.Fatalf("%d UploadPartCopy requests for 12 MiB in 5 MiB parts, want 3", n)
	}
	// The destination exists now: create-if-absent refuses (at Complete).
	if _, err := s.Copy(ctx, "gen/1/big.bin", "in/big.bin", store.CopyOptions{IfNoneMatch: true}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("multipart copy onto an existing key: got %v, want ErrPrecondition", err)
	}

	// Replace the source after the first part of the next copy.
	hook.parts.Store(0)
	hook.onPart = func() { putRandom(t, s, "in/big.bin", 12<<20) }
	_, err = s.Copy(ctx, "gen/2/big.bin", "in/big.bin", store.CopyOptions{SourceIfMatch: src.ETag, IfNoneMatch: true})
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("copy of a source replaced mid-copy: got %v, want ErrPrecondition", err)
	}
	if _, err := s.Stat(ctx, "gen/2/big.bin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed copy is visible: %v", err)
	}
	if n := countUploads(t, s, ""); n != 0 {
		t.Fatalf("%d multipart uploads left by the failed copy", n)
	}
}

// TestCopyFromOtherBucket copies server-side from a second bucket, with a
// key that needs escaping, and refuses a stale source version.
func TestCopyFromOtherBucket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.S3Store(t)
	other, _ := testenv.S3Bucket(t)
	src, err := s3store.New(ctx, other, "", testenv.S3Options(t))
	if err != nil {
		t.Fatal(err)
	}
	key := "spark-out/dt=2026-09-01/part-00000 é+%.parquet"
	a, err := src.Put(ctx, key, []byte("from another bucket"), store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.CopyFrom(ctx, "gen/x/part.parquet", other, key, -1, store.CopyOptions{SourceIfMatch: a.ETag})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := store.ReadAll(ctx, s, "gen/x/part.parquet")
	if err != nil || string(b) != "from another bucket" || got.Size != int64(len(b)) {
		t.Fatalf("copied %q (attrs %+v), %v", b, got, err)
	}
	if _, err := s.CopyFrom(ctx, "gen/y/part.parquet", other, key, 19, store.CopyOptions{SourceIfMatch: strings.Repeat("0", 32)}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("stale source version: got %v, want ErrPrecondition", err)
	}
	if _, err := s.CopyFrom(ctx, "gen/z/part.parquet", other, "missing", -1, store.CopyOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing source: got %v, want ErrNotFound", err)
	}
}
