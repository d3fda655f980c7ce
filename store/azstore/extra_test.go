package azstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
)

// opLog collects the request log's records: op and status per attempt.
type opLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *opLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *opLog) count(op string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), "op="+op+" ")
}

func (l *opLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func loggedStore(t *testing.T, opts azstore.Options) (*azstore.Store, *opLog) {
	t.Helper()
	name := testenv.AzureContainer(t)
	l := &opLog{}
	opts.Logger = slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := azstore.New(context.Background(), name, "root", opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, l
}

// TestDeleteManyBatches: 300 deletes go out as two blob batches (256 + 44),
// not 300 requests, and the blobs are gone.
func TestDeleteManyBatches(t *testing.T) {
	t.Parallel()
	s, l := loggedStore(t, testenv.AzureOptions(t))
	ctx := context.Background()
	var keys []string
	for i := range 300 {
		k := fmt.Sprintf("gc/%04d", i)
		keys = append(keys, k)
		if _, err := s.Put(ctx, k, []byte("x"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	keys = append(keys, "gc/missing")
	if err := s.DeleteMany(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if n := l.count("BlobBatch"); n != 2 {
		t.Errorf("%d batch requests, want 2; %d single deletes", n, l.count("DeleteBlob"))
	}
	for a, err := range s.List(ctx, "gc/") {
		t.Fatalf("left after DeleteMany: %v %v", a.Key, err)
	}
}

// TestRequestLogHasNoSecrets: the --debug log names operations, paths and
// statuses, never the key, a signature or a query string.
func TestRequestLogHasNoSecrets(t *testing.T) {
	t.Parallel()
	s, l := loggedStore(t, testenv.AzureOptions(t))
	ctx := context.Background()
	a, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{IfNoneMatch: true}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := s.Put(ctx, "k", []byte("w"), store.PutOptions{IfMatch: a.ETag}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Copy(ctx, "k2", "k", store.CopyOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	if l.count("CopyBlob") != 1 {
		t.Errorf("the copy is not logged as CopyBlob:\n%s", l)
	}
	out := l.String()
	if l.count("PutBlob") != 3 || !strings.Contains(out, "status=409") && !strings.Contains(out, "status=412") {
		t.Fatalf("request log:\n%s", out)
	}
	for _, secret := range []string{testenvKey(), "sig=", "Authorization", "SharedKey"} {
		if secret != "" && strings.Contains(out, secret) {
			t.Fatalf("request log shows %q:\n%s", secret, out)
		}
	}
}
