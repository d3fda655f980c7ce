package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/pswap/pswap/store"
)

// testMissingBucket opens a store on a bucket (or root) that does not exist:
// either opening fails, or every request fails, with an error matching
// store.ErrBucketNotFound, so that callers tell a wrong bucket from a missing
// key. A stat may say only "not found": S3 answers a HEAD without a body, so
// the missing key and the missing bucket look alike there.
func testMissingBucket(t *testing.T, h harness) {
	if h.opts.NewMissing == nil {
		t.Skip("the backend has no store on a missing bucket (Options.NewMissing is nil)")
	}
	ctx := context.Background()
	s, err := h.opts.NewMissing(t)
	if err != nil {
		if !errors.Is(err, store.ErrBucketNotFound) {
			t.Fatalf("open on a missing bucket: got %v, want ErrBucketNotFound", err)
		}
		return
	}
	type result struct {
		op  string
		err error
	}
	var results []result
	if c, ok := s.(store.Clock); ok {
		_, err := c.Now(ctx) // first, before any other response
		results = append(results, result{"Now", err})
	}
	_, err = s.Put(ctx, "k", []byte("x"), store.PutOptions{})
	results = append(results, result{"Put", err})
	_, err = s.Put(ctx, "k", []byte("x"), store.PutOptions{IfNoneMatch: true})
	results = append(results, result{"Put IfNoneMatch", err})
	_, _, err = s.Get(ctx, "k")
	results = append(results, result{"Get", err})
	err = errors.New("List yielded no error")
	for _, lerr := range s.List(ctx, "") {
		if err = lerr; err != nil {
			break
		}
	}
	results = append(results, result{"List", err})
	results = append(results, result{"Delete", s.Delete(ctx, "k")})
	w, err := s.NewWriter(ctx, "w", store.WriterOptions{})
	if err == nil {
		if _, err := w.Write([]byte("x")); err != nil && !errors.Is(err, store.ErrBucketNotFound) {
			t.Errorf("Writer.Write: got %v, want nil or ErrBucketNotFound", err)
		}
		_, err = w.Commit()
		w.Abort()
	}
	results = append(results, result{"NewWriter+Commit", err})
	for _, r := range results {
		if !errors.Is(r.err, store.ErrBucketNotFound) {
			t.Errorf("%s on a missing bucket: got %v, want ErrBucketNotFound", r.op, r.err)
		}
	}
	if _, err := s.Stat(ctx, "k"); !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrBucketNotFound) {
		t.Errorf("Stat on a missing bucket: got %v, want ErrNotFound or ErrBucketNotFound", err)
	}
}
