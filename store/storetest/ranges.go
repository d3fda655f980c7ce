package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/pswap/pswap/store"
)

// The cases for the optional interfaces that every backend implements:
// ranged reads and server-side copies.

func testRangeRead(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	if _, ok := s.(store.RangeReader); !ok {
		t.Fatalf("%T does not implement store.RangeReader", s)
	}
	data := make([]byte, 1000)
	rand.Read(data)
	pa := mustPut(t, s, "r/obj", string(data), store.PutOptions{})
	for _, c := range []struct {
		off, n     int64
		start, end int
	}{
		{0, 10, 0, 10}, {990, -1, 990, 1000}, {992, 100, 992, 1000}, {0, -1, 0, 1000},
		{999, 1, 999, 1000}, {500, 0, 500, 500}, {8, 992, 8, 1000},
	} {
		got, a, err := store.ReadRange(ctx, s, "r/obj", c.off, c.n)
		if err != nil {
			t.Fatalf("range %d+%d: %v", c.off, c.n, err)
		}
		if !bytes.Equal(got, data[c.start:c.end]) {
			t.Fatalf("range %d+%d: got %d bytes, want bytes %d..%d", c.off, c.n, len(got), c.start, c.end)
		}
		if a.Size != 1000 || a.ETag != pa.ETag || a.Key != "r/obj" {
			t.Fatalf("range %d+%d: attrs %+v, want the whole object's (size 1000, etag %s)", c.off, c.n, a, pa.ETag)
		}
	}
	for _, off := range []int64{1000, 5000, -1} {
		if _, _, err := store.ReadRange(ctx, s, "r/obj", off, 10); !errors.Is(err, store.ErrInvalidRange) {
			t.Fatalf("range at %d of 1000 bytes: got %v, want ErrInvalidRange", off, err)
		}
	}
	mustPut(t, s, "r/empty", "", store.PutOptions{})
	if got, a, err := store.ReadRange(ctx, s, "r/empty", 0, 8); err != nil || len(got) != 0 || a.Size != 0 {
		t.Fatalf("range of an empty object: %q, %+v, %v", got, a, err)
	}
	if _, _, err := store.ReadRange(ctx, s, "r/missing", 0, 8); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("range of a missing key: got %v, want ErrNotFound", err)
	}
	if _, _, err := store.ReadRange(ctx, s, "../escape", 0, 8); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("range of an invalid key: got %v, want ErrInvalidKey", err)
	}
}

func testCopy(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	if _, ok := s.(store.Copier); !ok {
		t.Fatalf("%T does not implement store.Copier", s)
	}
	src := mustPut(t, s, "in/src.parquet", "source bytes v1", store.PutOptions{})
	a, err := store.Copy(ctx, s, "gen/1/dst.parquet", "in/src.parquet", store.CopyOptions{SourceIfMatch: src.ETag, IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	expectContent(t, s, "gen/1/dst.parquet", "source bytes v1")
	st, err := s.Stat(ctx, "gen/1/dst.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if a.ETag == "" || st.ETag != a.ETag || a.Size != int64(len("source bytes v1")) || a.Key != "gen/1/dst.parquet" {
		t.Fatalf("copy attrs %+v, stat %+v", a, st)
	}
	// The destination exists: a create-if-absent copy leaves it alone.
	mustPut(t, s, "in/other", "other", store.PutOptions{})
	if _, err := store.Copy(ctx, s, "gen/1/dst.parquet", "in/other", store.CopyOptions{IfNoneMatch: true}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("copy onto an existing key with IfNoneMatch: got %v, want ErrPrecondition", err)
	}
	expectContent(t, s, "gen/1/dst.parquet", "source bytes v1")
	// The source was replaced since it was listed: nothing is written.
	mustPut(t, s, "in/src.parquet", "source bytes v2", store.PutOptions{})
	if _, err := store.Copy(ctx, s, "gen/2/dst.parquet", "in/src.parquet", store.CopyOptions{SourceIfMatch: src.ETag, IfNoneMatch: true}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("copy of a replaced source: got %v, want ErrPrecondition", err)
	}
	if _, err := s.Stat(ctx, "gen/2/dst.parquet"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed copy left its destination: %v", err)
	}
	// Unconditional copies replace.
	if _, err := store.Copy(ctx, s, "gen/1/dst.parquet", "in/src.parquet", store.CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	expectContent(t, s, "gen/1/dst.parquet", "source bytes v2")
	if _, err := store.Copy(ctx, s, "gen/3/x", "in/missing", store.CopyOptions{IfNoneMatch: true}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("copy of a missing source: got %v, want ErrNotFound", err)
	}
	if _, err := store.Copy(ctx, s, "../x", "in/other", store.CopyOptions{}); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("copy to an invalid key: got %v, want ErrInvalidKey", err)
	}
	if _, err := store.Copy(ctx, s, "gen/4/x", "/abs", store.CopyOptions{}); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("copy from an invalid key: got %v, want ErrInvalidKey", err)
	}
	if got := listKeys(t, s, "gen/"); len(got) != 1 {
		t.Fatalf("keys under gen/ after the failed copies: %q", got)
	}
}
