package azstore_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
)

// TestTwoBlockWritersOneKey: Azure keeps one list of uncommitted blocks
// per blob name, and a commit discards every block it does not name, so a
// second block upload of the same key loses its staged blocks when the
// first commits. A create-if-absent second writer must then fail with
// ErrPrecondition (the blob exists), not with Azure's InvalidBlockList,
// and the first writer's blob must be intact.
func TestTwoBlockWritersOneKey(t *testing.T) {
	t.Parallel()
	s := testenv.AzureStore(t)
	ctx := context.Background()
	const part = 1 << 20
	a := bytes.Repeat([]byte("a"), 3*part)
	b := bytes.Repeat([]byte("b"), 3*part)
	opts := store.WriterOptions{PartSize: part, PutOptions: store.PutOptions{IfNoneMatch: true}}
	wa, err := s.NewWriter(ctx, "gen/x.parquet", opts)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := s.NewWriter(ctx, "gen/x.parquet", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wa.Write(a); err != nil {
		t.Fatal(err)
	}
	if _, err := wb.Write(b); err != nil {
		t.Fatal(err)
	}
	if _, err := wa.Commit(); err != nil {
		t.Fatal(err)
	}
	_, err = wb.Commit()
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("second writer's create-if-absent commit: %v, want ErrPrecondition", err)
	}
	got, _, err := store.ReadAll(ctx, s, "gen/x.parquet")
	if err != nil || !bytes.Equal(got, a) {
		t.Fatalf("blob after both commits: %d bytes, %v; want the first writer's %d", len(got), err, len(a))
	}
}
