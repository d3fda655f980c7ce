package integration

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/swap"
)

var ctx = context.Background()

// s3ViaProxy returns a store on a fresh MinIO bucket whose requests go
// through a fault proxy. sdkAttempts bounds the SDK's own retries.
func s3ViaProxy(t testing.TB, sdkAttempts int) (store.Store, *faultproxy.Proxy) {
	t.Helper()
	opts := testenv.S3Options(t)
	bucket, _ := testenv.S3Bucket(t)
	p, err := faultproxy.Start(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	opts.Endpoint = p.URL
	opts.RetryMaxAttempts = sdkAttempts
	st, err := s3store.New(ctx, bucket, "table", opts)
	if err != nil {
		t.Fatal(err)
	}
	return st, p
}

// stage writes n small files for a transaction and describes them.
func stage(t testing.TB, txn *swap.Txn, n int, seed string) manifest.Content {
	t.Helper()
	var c manifest.Content
	h := sha256.New()
	for i := range n {
		body := []byte(fmt.Sprintf("%s/%d/%s", seed, i, strings.Repeat("y", 100)))
		name := fmt.Sprintf("part-%05d.parquet", i)
		if _, err := txn.Store().Put(ctx, txn.DataPrefix()+name, body, store.PutOptions{IfNoneMatch: true}); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		c.Add(manifest.File{Path: name, Size: int64(len(body)), Rows: 10, Checksum: manifest.SHA256Checksum(sum[:])})
		h.Write(body)
	}
	c.ContentChecksum = fmt.Sprintf("test-sum:%x", h.Sum(nil)[:16])
	return c
}

func commitSeed(t testing.TB, st store.Store, part, seed string, opts swap.Options) (swap.Result, error) {
	t.Helper()
	txn, err := swap.Begin(ctx, st, part, opts)
	if err != nil {
		return swap.Result{}, err
	}
	return txn.Commit(ctx, stage(t, txn, 1, seed))
}
