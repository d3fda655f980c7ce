package integration

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
)

// newAzuriteEnv is newMinioEnv on Azurite: a fresh container, the table at
// lake/sales in it, the sentinels beside it, and a fault proxy (answering
// as Azure does) in front of the emulator for the CLI and viaProxy.
func newAzuriteEnv(t testing.TB) *tableEnv {
	t.Helper()
	opts := testenv.AzureOptions(t)
	container := testenv.AzureContainer(t)
	e := &tableEnv{kind: "azurite", bucket: container, root: "lake/sales", sentinels: map[string][]byte{}}
	e.url = "az://" + container + "/" + e.root
	raw, err := azstore.New(ctx, container, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	e.raw = raw
	for _, k := range sentinelKeys {
		body := []byte("sentinel " + k)
		if _, err := raw.Put(ctx, "lake/"+k, body, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		e.sentinels[k] = body
	}
	st, err := azstore.New(ctx, container, e.root, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	endpoint := os.Getenv("AZURITE_BLOB_ENDPOINT") // http://127.0.0.1:PORT/ACCOUNT
	scheme, rest, _ := strings.Cut(endpoint, "://")
	host, account, _ := strings.Cut(rest, "/")
	p, err := faultproxy.Start(scheme + "://" + host)
	if err != nil {
		t.Fatal(err)
	}
	p.SetAzure()
	t.Cleanup(func() { p.Close() })
	e.proxy = p
	e.azProxyConn = "DefaultEndpointsProtocol=http;AccountName=" + account + ";AccountKey=" + os.Getenv(azstore.EnvKey) +
		";BlobEndpoint=" + p.URL + "/" + account + ";"
	return e
}

// azureViaProxy is viaProxy on Azurite.
func (e *tableEnv) azureViaProxy(t testing.TB, sdkAttempts int) store.Store {
	t.Helper()
	st, err := azstore.New(context.Background(), e.bucket, e.root, azstore.Options{ConnectionString: e.azProxyConn, RetryMaxAttempts: sdkAttempts})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// azureRawList lists the whole container: keys relative to "lake/".
func (e *tableEnv) azureRawList(t testing.TB) []rawObject {
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

// forEachRemote runs f, in parallel, on a fresh table on each remote store
// that is configured (MinIO, Azurite, fake-gcs-server) behind its fault
// proxy, and skips when none is.
func forEachRemote(t *testing.T, f func(t *testing.T, e *tableEnv)) {
	t.Parallel()
	t.Run("minio", func(t *testing.T) {
		t.Parallel()
		f(t, minioOnly(t))
	})
	t.Run("azurite", func(t *testing.T) {
		t.Parallel()
		if !testenv.AzureEnabled() {
			t.Skip("needs Azurite behind the fault proxy; scripts/test.sh starts one")
		}
		f(t, newAzuriteEnv(t))
	})
	t.Run("gcs", func(t *testing.T) {
		t.Parallel()
		if !testenv.GCSEnabled() {
			t.Skip("fake-gcs-server not configured (" + testenv.EnvGCS + "); scripts/test.sh starts one")
		}
		f(t, newGCSEnv(t))
	})
}
