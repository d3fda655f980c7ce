package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"testing"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// A TailReader serves reads of an object's end from one ranged GET of its
// tail, widens its window backwards with one more GET for earlier bytes,
// and refuses to mix versions of the object.
func TestTailReader(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	st := storetest.NewCounting(mem)
	data := make([]byte, 10000)
	rand.Read(data)
	a, err := mem.Put(ctx, "obj", data, store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Size = int64(len(data))
	r := store.NewTailReader(ctx, st, "obj", a, 1000)
	read := func(off, n int64) []byte {
		t.Helper()
		p := make([]byte, n)
		if k, err := r.ReadAt(p, off); err != nil || k != int(n) {
			t.Fatalf("ReadAt(%d, %d): %d %v", off, n, k, err)
		}
		if !bytes.Equal(p, data[off:off+n]) {
			t.Fatalf("ReadAt(%d, %d): wrong bytes", off, n)
		}
		return p
	}
	read(9992, 8)
	read(9000, 100)
	if got := st.Counts(); got["get-range"] != 1 || st.Total() != 1 {
		t.Fatalf("two reads inside the tail: requests %v, want one get-range", got)
	}
	read(8000, 2000)
	if start, w := r.Window(); start != 8000 || len(w) != 2000 || st.Total() != 2 {
		t.Fatalf("after an earlier read: window %d+%d, %d requests", start, len(w), st.Total())
	}
	if r.ETag() != a.ETag || r.Err() != nil {
		t.Fatalf("etag %q (want %q), err %v", r.ETag(), a.ETag, r.Err())
	}
	// A read past the end is io.EOF, as io.ReaderAt says.
	if _, err := r.ReadAt(make([]byte, 1), 10000); err != io.EOF {
		t.Fatalf("read at the end: %v", err)
	}
	if k, err := r.ReadAt(make([]byte, 10), 9995); k != 5 || err != io.EOF {
		t.Fatalf("short read at the end: %d %v", k, err)
	}

	// The object replaced between two GETs: ErrChanged, kept as Err.
	if _, err := mem.Put(ctx, "obj", data[:9000], store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(make([]byte, 10), 0); !errors.Is(err, store.ErrChanged) || !errors.Is(r.Err(), store.ErrChanged) {
		t.Fatalf("read of a replaced object: %v (Err %v), want ErrChanged", err, r.Err())
	}
	// Attributes of another version (a stale listing): ErrChanged at once.
	stale := store.NewTailReader(ctx, st, "obj", store.Attrs{Size: 9000, ETag: a.ETag}, 0)
	if _, err := stale.ReadAt(make([]byte, 8), 8992); !errors.Is(err, store.ErrChanged) {
		t.Fatalf("read with a stale ETag: %v, want ErrChanged", err)
	}
	// A missing object: the store's error.
	gone := store.NewTailReader(ctx, st, "missing", store.Attrs{Size: 100}, 0)
	if _, err := gone.ReadAt(make([]byte, 8), 92); !errors.Is(err, store.ErrNotFound) || !errors.Is(gone.Err(), store.ErrNotFound) {
		t.Fatalf("read of a missing object: %v", err)
	}
}
