package integration

import (
	"os"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/gcsstore"
)

// gcsViaProxy returns a store on a fresh fake-gcs-server bucket whose
// requests go through a fault proxy. sdkAttempts bounds the SDK's own
// retries. (A resumable upload's chunks go to the emulator directly: its
// session URL names the emulator; pswap's small objects are single
// requests, through the proxy.)
func gcsViaProxy(t testing.TB, sdkAttempts int) (store.Store, *faultproxy.Proxy) {
	t.Helper()
	opts := testenv.GCSOptions(t)
	bucket, _ := testenv.GCSBucket(t)
	target := os.Getenv(gcsstore.EmulatorHostEnv)
	if !strings.Contains(target, "://") {
		target = "http://" + target
	}
	p, err := faultproxy.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	opts.Endpoint = p.URL
	opts.RetryMaxAttempts = sdkAttempts
	st, err := gcsstore.New(ctx, bucket, "table", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, p
}

// viaProxyStores are the stores behind a fault proxy that the fault tests
// run on: MinIO and fake-gcs-server, each when configured.
func viaProxyStores(t *testing.T, f func(t *testing.T, newStore func(t testing.TB, sdkAttempts int) (store.Store, *faultproxy.Proxy))) {
	t.Run("minio", func(t *testing.T) {
		if !testenv.S3Enabled() {
			t.Skip("MinIO not configured (" + testenv.EnvS3 + "); scripts/test.sh starts one")
		}
		f(t, s3ViaProxy)
	})
	t.Run("gcs", func(t *testing.T) {
		if !testenv.GCSEnabled() {
			t.Skip("fake-gcs-server not configured (" + testenv.EnvGCS + "); scripts/test.sh starts one")
		}
		f(t, gcsViaProxy)
	})
}

// newGCSEnv is newMinioEnv on fake-gcs-server: a fresh bucket with the
// sentinels, the table under lake/sales, and a fault proxy in front.
func newGCSEnv(t testing.TB) *tableEnv {
	t.Helper()
	opts := testenv.GCSOptions(t)
	bucket, _ := testenv.GCSBucket(t)
	e := &tableEnv{kind: "gcs", bucket: bucket, root: "lake/sales", sentinels: map[string][]byte{}}
	e.url = "gs://" + bucket + "/" + e.root
	raw, err := gcsstore.New(ctx, bucket, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	e.raw = raw
	for _, k := range sentinelKeys {
		body := []byte("sentinel " + k)
		if _, err := raw.Put(ctx, "lake/"+k, body, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		e.sentinels[k] = body
	}
	st, err := gcsstore.New(ctx, bucket, e.root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.st = st
	target := os.Getenv(gcsstore.EmulatorHostEnv)
	if !strings.Contains(target, "://") {
		target = "http://" + target
	}
	p, err := faultproxy.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	e.proxy = p
	return e
}

// gcsViaProxy is viaProxy for a "gcs" environment.
func (e *tableEnv) gcsViaProxy(t testing.TB, sdkAttempts int) store.Store {
	t.Helper()
	opts := testenv.GCSOptions(t)
	opts.Endpoint = e.proxy.URL
	opts.RetryMaxAttempts = sdkAttempts
	st, err := gcsstore.New(ctx, e.bucket, e.root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// gcsRawList is rawList for a "gcs" environment: the whole bucket.
func (e *tableEnv) gcsRawList(t testing.TB) []rawObject {
	t.Helper()
	var out []rawObject
	for a, err := range e.raw.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		rel, ok := strings.CutPrefix(a.Key, "lake/")
		if !ok {
			rel = "../" + a.Key
		}
		out = append(out, rawObject{key: rel, size: a.Size})
	}
	return out
}

// gcsOnly returns a fake-gcs-server environment (behind its fault proxy)
// or skips.
func gcsOnly(t *testing.T) *tableEnv {
	t.Helper()
	if !testenv.GCSEnabled() {
		t.Skip("fake-gcs-server not configured (" + testenv.EnvGCS + "); scripts/test.sh starts one")
	}
	return newGCSEnv(t)
}

// minioAndGCS runs f, in parallel, on a fresh table on MinIO and on
// fake-gcs-server, each behind its fault proxy; each skips when its server
// is not configured. The tests that hold, drop or fail chosen requests of
// one table (late, outcome unknown, the fault regressions) run on both:
// GCS's uploads are POSTs, its preconditions generation numbers, and the
// proxy presents both as the same requests to the rules.
func minioAndGCS(t *testing.T, f func(t *testing.T, e *tableEnv)) {
	t.Run("minio", func(t *testing.T) {
		t.Parallel()
		f(t, minioOnly(t))
	})
	t.Run("gcs", func(t *testing.T) {
		t.Parallel()
		f(t, gcsOnly(t))
	})
}
