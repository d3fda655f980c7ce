package gcsstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
)

// TestSiblingCopyFrom: a store on another bucket, sharing the client,
// lists and reads that bucket; CopyFrom copies its objects into this store
// server-side, byte-exact (the MD5 kept), pinned to the source generation
// given and create-if-absent; a missing source is not found and the error
// names it. Closing the sibling leaves the client open.
func TestSiblingCopyFrom(t *testing.T) {
	t.Parallel()
	s := testenv.GCSStore(t)
	other, _ := testenv.GCSBucket(t)
	ctx := context.Background()
	src, err := s.Sibling(other, "staging/")
	if err != nil {
		t.Fatal(err)
	}
	if src.Bucket() != other || src.Prefix() != "staging/" || src.URI("a") != "gs://"+other+"/staging/a" {
		t.Fatalf("sibling: bucket %q prefix %q URI %q", src.Bucket(), src.Prefix(), src.URI("a"))
	}
	data := []byte("parquet bytes, say")
	a, err := src.Put(ctx, "out/a.parquet", data, store.PutOptions{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	var listed []store.Attrs
	for e, err := range src.List(ctx, "out/") {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, e)
	}
	if len(listed) != 1 || listed[0].Key != "out/a.parquet" || listed[0].ETag != a.ETag {
		t.Fatalf("sibling listing: %+v, want out/a.parquet at %s", listed, a.ETag)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}

	c, err := s.CopyFrom(ctx, "gen/1/a.parquet", other, "staging/out/a.parquet", store.CopyOptions{SourceIfMatch: a.ETag, IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	got, ga, err := store.ReadAll(ctx, s, "gen/1/a.parquet")
	if err != nil || string(got) != string(data) || ga.ETag != c.ETag {
		t.Fatalf("copied: %q at %s (copy said %s), %v", got, ga.ETag, c.ETag, err)
	}
	if st, err := s.Stat(ctx, "gen/1/a.parquet"); err != nil || st.ContentMD5 == "" || st.ContentMD5 != a.ContentMD5 {
		t.Fatalf("copy's MD5 %q, source's %q (%v)", st.ContentMD5, a.ContentMD5, err)
	}
	// The source is untouched, and nothing was written beside the copy.
	if b, _, err := store.ReadAll(ctx, src, "out/a.parquet"); err != nil || string(b) != string(data) {
		t.Fatalf("source after the copy: %q %v", b, err)
	}

	_, err = s.CopyFrom(ctx, "gen/1/a.parquet", other, "staging/out/a.parquet", store.CopyOptions{SourceIfMatch: a.ETag, IfNoneMatch: true})
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("copy onto an existing key with IfNoneMatch: %v, want ErrPrecondition", err)
	}
	if _, err := src.Put(ctx, "out/a.parquet", []byte("replaced"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.CopyFrom(ctx, "gen/2/a.parquet", other, "staging/out/a.parquet", store.CopyOptions{SourceIfMatch: a.ETag, IfNoneMatch: true})
	if !errors.Is(err, store.ErrPrecondition) || !strings.Contains(err.Error(), "gs://"+other+"/staging/out/a.parquet") {
		t.Fatalf("copy of a replaced source: %v, want ErrPrecondition naming the source", err)
	}
	if _, err := s.Stat(ctx, "gen/2/a.parquet"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused copy wrote its destination: %v", err)
	}
	_, err = s.CopyFrom(ctx, "gen/3/a.parquet", other, "staging/missing.parquet", store.CopyOptions{IfNoneMatch: true})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "gs://"+other+"/staging/missing.parquet") {
		t.Fatalf("copy of a missing source: %v, want ErrNotFound naming it", err)
	}
	for _, bad := range []struct{ bucket, key string }{{"Bad_Bucket", "k"}, {other, ""}, {other, "a/../b"}} {
		if _, err := s.CopyFrom(ctx, "gen/4/a", bad.bucket, bad.key, store.CopyOptions{}); err == nil {
			t.Errorf("CopyFrom(%q, %q): no error", bad.bucket, bad.key)
		}
	}
	if _, err := s.Sibling("Bad_Bucket", ""); err == nil {
		t.Error("Sibling of an invalid bucket name: no error")
	}
}

// TestSiblingMissingBucket: a sibling on a bucket that does not exist
// reports store.ErrBucketNotFound, though requests on the table's bucket
// (the same client) succeeded; and the table's own misses stay plain
// ErrNotFound. Whether a bucket was seen is kept per bucket: with one
// flag for the client, the table's success hid the sibling's missing
// bucket.
func TestSiblingMissingBucket(t *testing.T) {
	t.Parallel()
	s := testenv.GCSStore(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	missing, err := s.Sibling("pswap-missing-"+strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.ReadAll(ctx, missing, "k"); !errors.Is(err, store.ErrBucketNotFound) {
		t.Errorf("read in a missing bucket: %v, want ErrBucketNotFound", err)
	}
	n := 0
	for _, err := range missing.List(ctx, "") {
		n++
		if !errors.Is(err, store.ErrBucketNotFound) {
			t.Errorf("list of a missing bucket: %v, want ErrBucketNotFound", err)
		}
	}
	if n != 1 {
		t.Errorf("list of a missing bucket yielded %d entries, want its one error", n)
	}
	if _, _, err := store.ReadAll(ctx, s, "nope"); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrBucketNotFound) {
		t.Errorf("read of a missing key in the table's bucket: %v, want ErrNotFound only", err)
	}
}
