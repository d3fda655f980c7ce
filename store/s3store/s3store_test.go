package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/store/storetest"
)

// TestConformance runs the store conformance suite against MinIO (or any
// S3 server that testenv is configured for).
func TestConformance(t *testing.T) {
	t.Parallel()
	testenv.S3Options(t) // skip early, with the message, when S3 is off
	storetest.Run(t, func(t *testing.T) store.Store { return testenv.S3(t) }, storetest.Options{
		NewMissing: func(t *testing.T) (store.Store, error) {
			s, err := s3store.New(context.Background(), "pswap-missing-"+strconv.FormatInt(time.Now().UnixNano(), 36), "p", testenv.S3Options(t))
			if err == nil {
				t.Cleanup(func() { _ = s.Close() })
			}
			return s, err
		},
	})
}

func TestAbortedWriterLeavesNoUpload(t *testing.T) {
	t.Parallel()
	s := testenv.S3Store(t)
	ctx := context.Background()
	data := make([]byte, 2*s3store.MinPartSize+100)
	rand.Read(data)

	// Abort after two parts were handed to uploaders.
	w, err := s.NewWriter(ctx, "gen/aborted.bin", store.WriterOptions{PartSize: s3store.MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	// The upload is created in the background, as the first part fills.
	deadline := time.Now().Add(20 * time.Second)
	for countUploads(t, s, "") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d multipart uploads in progress, want 1", countUploads(t, s, ""))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if n := countUploads(t, s, ""); n != 0 {
		t.Fatalf("%d multipart uploads left after Abort", n)
	}
	if _, err := s.Stat(ctx, "gen/aborted.bin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("aborted object: Stat = %v, want ErrNotFound", err)
	}

	// Cancel the context and never call Abort: the upload goes all the same.
	cctx, cancel := context.WithCancel(ctx)
	w, err = s.NewWriter(cctx, "gen/cancelled.bin", store.WriterOptions{PartSize: s3store.MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline = time.Now().Add(20 * time.Second)
	for countUploads(t, s, "") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("multipart upload still listed after the writer's context was cancelled")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := w.Commit(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit after cancel = %v, want context.Canceled", err)
	}
	if keys := listKeys(t, s, ""); len(keys) != 0 {
		t.Fatalf("objects left: %q", keys)
	}
}

func countUploads(t *testing.T, s *s3store.Store, prefix string) int {
	t.Helper()
	n := 0
	for _, err := range s.ListUploads(context.Background(), prefix) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func listKeys(t *testing.T, s store.Store, prefix string) []string {
	t.Helper()
	var keys []string
	for a, err := range s.List(context.Background(), prefix) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, a.Key)
	}
	return keys
}

func TestUploadsListAndAbort(t *testing.T) {
	t.Parallel()
	s := testenv.S3Store(t)
	ctx := context.Background()
	c := s.Client()
	for _, k := range []string{"gen/1/a", "gen/2/b", "other/c"} {
		_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
			Bucket: aws.String(s.Bucket()), Key: aws.String(s.Prefix() + k),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var ups []store.Upload
	for u, err := range s.ListUploads(ctx, "gen/") {
		if err != nil {
			t.Fatal(err)
		}
		ups = append(ups, u)
	}
	if len(ups) != 2 || ups[0].Key != "gen/1/a" || ups[1].Key != "gen/2/b" || ups[0].ID == "" || ups[0].Initiated.IsZero() {
		t.Fatalf("ListUploads(gen/) = %+v", ups)
	}
	for _, u := range ups {
		if err := s.AbortUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := s.AbortUpload(ctx, u); err != nil {
			t.Fatalf("aborting an aborted upload: %v", err)
		}
	}
	if n := countUploads(t, s, "gen/"); n != 0 {
		t.Fatalf("%d uploads left under gen/", n)
	}
	if n := countUploads(t, s, ""); n != 1 {
		t.Fatalf("%d uploads left in all, want the one under other/", n)
	}
}

func TestChecksumWhenRequired(t *testing.T) {
	t.Parallel()
	opts := testenv.S3Options(t)
	opts.ChecksumWhenRequired = true
	bucket, _ := testenv.S3Bucket(t)
	s, err := s3store.New(context.Background(), bucket, "when-required", opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a1, err := s.Put(ctx, "ptr", []byte("one"), store.PutOptions{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "ptr", []byte("two"), store.PutOptions{IfMatch: a1.ETag}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "ptr", []byte("three"), store.PutOptions{IfMatch: a1.ETag}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("stale If-Match in when_required mode: %v", err)
	}
	data := make([]byte, 2*s3store.MinPartSize+4321)
	rand.Read(data)
	w, err := s.NewWriter(ctx, "big", store.WriterOptions{PartSize: s3store.MinPartSize, PutOptions: store.PutOptions{IfNoneMatch: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _, err := store.ReadAll(ctx, s, "big")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("multipart object in when_required mode: %d bytes, %v", len(got), err)
	}
	if err := s.DeleteMany(ctx, []string{"ptr", "big", "never-existed"}); err != nil {
		t.Fatal(err)
	}
	if keys := listKeys(t, s, ""); len(keys) != 0 {
		t.Fatalf("left after DeleteMany: %q", keys)
	}
}

func TestWrongCredentials(t *testing.T) {
	t.Parallel()
	opts := testenv.S3Options(t)
	bucket, _ := testenv.S3Bucket(t)
	ctx := context.Background()
	realSecret := os.Getenv("AWS_SECRET_ACCESS_KEY")
	for _, tc := range []struct{ name, id, secret string }{
		{"wrong secret", os.Getenv("AWS_ACCESS_KEY_ID"), "wrong-secret-4f1d7c2a9b"},
		{"unknown key id", "AKIDNOSUCHUSER", "another-wrong-secret-77a1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			o.Credentials = credentials.NewStaticCredentialsProvider(tc.id, tc.secret, "")
			o.RetryMaxAttempts = 1
			s, err := s3store.New(ctx, bucket, "p", o)
			if err != nil {
				t.Fatal(err)
			}
			// Now first: with no response seen yet, it must ask the server.
			_, nowErr := s.Now(ctx)
			_, putErr := s.Put(ctx, "k", []byte("x"), store.PutOptions{IfNoneMatch: true})
			_, _, getErr := s.Get(ctx, "k")
			_, statErr := s.Stat(ctx, "k")
			var listErr error
			for _, err := range s.List(ctx, "") {
				listErr = err
			}
			for name, err := range map[string]error{"put": putErr, "get": getErr, "stat": statErr, "list": listErr, "now": nowErr} {
				if !errors.Is(err, store.ErrAccessDenied) {
					t.Errorf("%s: %v, want ErrAccessDenied", name, err)
					continue
				}
				if store.IsRetryable(err) {
					t.Errorf("%s: access denied is retryable: %v", name, err)
				}
				msg := err.Error()
				if strings.Contains(msg, tc.secret) || (realSecret != "" && strings.Contains(msg, realSecret)) {
					t.Errorf("%s: error message contains a secret key", name)
				}
			}
		})
	}
}

func TestMissingBucket(t *testing.T) {
	t.Parallel()
	opts := testenv.S3Options(t)
	ctx := context.Background()
	s, err := s3store.New(ctx, "pswap-missing-"+strconv.FormatInt(time.Now().UnixNano(), 36), "p", opts)
	if err != nil {
		t.Fatal(err)
	}
	_, nowErr := s.Now(ctx) // first: no response seen yet, so it asks the server
	_, putErr := s.Put(ctx, "k", []byte("x"), store.PutOptions{})
	_, _, getErr := s.Get(ctx, "k")
	var listErr error
	for _, err := range s.List(ctx, "") {
		listErr = err
	}
	delErr := s.Delete(ctx, "k")
	w, _ := s.NewWriter(ctx, "w", store.WriterOptions{})
	w.Write([]byte("x"))
	_, commitErr := w.Commit()
	for name, err := range map[string]error{"put": putErr, "get": getErr, "list": listErr, "delete": delErr, "now": nowErr, "commit": commitErr} {
		if !errors.Is(err, store.ErrBucketNotFound) {
			t.Errorf("%s: %v, want ErrBucketNotFound", name, err)
		}
		if err != nil && !strings.Contains(err.Error(), s.Bucket()) {
			t.Errorf("%s: message %q does not name the bucket", name, err)
		}
	}
}

func TestClockAndETags(t *testing.T) {
	t.Parallel()
	s := testenv.S3Store(t)
	ctx := context.Background()
	a, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.ETag, `"`) || !strings.HasSuffix(a.ETag, `"`) {
		t.Errorf("ETag %q is not as S3 returns it (quoted)", a.ETag)
	}
	st, err := s.Stat(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// MinIO runs on this machine: its clock is ours, give or take.
	if d := time.Since(now); d < -time.Minute || d > time.Minute {
		t.Errorf("store clock %v is %v away from the local clock", now, d)
	}
	if now.Add(time.Second).Before(st.ModTime) {
		t.Errorf("store clock %v is before the object's ModTime %v", now, st.ModTime)
	}
	if a.ModTime.IsZero() || a.ModTime.Sub(st.ModTime).Abs() > 2*time.Second {
		t.Errorf("Put ModTime %v, Stat ModTime %v", a.ModTime, st.ModTime)
	}
}

func TestOpenURL(t *testing.T) {
	t.Parallel()
	u := testenv.S3URL(t)
	ctx := context.Background()
	s, err := s3store.Open(ctx, u, testenv.S3Options(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "dt=2026-11-29/x", []byte("y"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := s.URI("dt=2026-11-29/x"); got != u+"/dt=2026-11-29/x" {
		t.Errorf("URI = %q, want under %q", got, u)
	}
}
