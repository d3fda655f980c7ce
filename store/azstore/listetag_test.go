package azstore_test

import (
	"context"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
)

// TestListETagMatchesReads: a listing gives a blob's version in the form
// a read and a write give it, so that a file listed and then read (the
// adoption of an engine's files, a server-side copy's source) is seen as
// one version.
func TestListETagMatchesReads(t *testing.T) {
	ctx := context.Background()
	st := testenv.AzureStore(t)
	put, err := st.Put(ctx, "x/a.bin", make([]byte, 100), store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := store.GetRange(ctx, st, "x/a.bin", 50, 10)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for a, err := range st.List(ctx, "x/") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if a.ETag != put.ETag || a.ETag != got.ETag {
			t.Errorf("listing's ETag %s, the write's %s, a read's %s", a.ETag, put.ETag, got.ETag)
		}
	}
	if n != 1 {
		t.Fatalf("listed %d blobs, want 1", n)
	}
}
