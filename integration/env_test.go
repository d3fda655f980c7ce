package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/s3store"
)

// tableEnv is one table under test, on file:// or on MinIO, with everything
// the invariant checker needs to look at it from outside pswap: the raw
// directory or bucket around it, and sentinel objects of a sibling table
// whose name shares the table's prefix ("sales" and "sales-x"), which
// nothing may touch.
type tableEnv struct {
	kind string // "file" or "minio"
	url  string // the table URL, for the CLI and pswap.Open
	st   store.Store

	// file
	dir  string // the table directory (<tmp>/lake/sales)
	lake string // its parent

	// minio
	bucket string
	root   string // the table's key prefix in the bucket ("lake/sales")
	s3c    *s3.Client
	proxy  *faultproxy.Proxy // in front of MinIO (or fake-gcs-server); the CLI and viaProxy go through it
	// gcs and azurite: a store on the whole bucket (fake-gcs-server) or
	// container (Azurite; bucket is the container, root the table's
	// prefix, proxy in front of Azurite), for the raw reads and writes.
	raw         store.Store
	azProxyConn string // a connection string through the proxy

	sentinels map[string][]byte // sibling objects (relative to the lake / bucket) and their content
	// allowKey, when set, accepts keys under the root that are not pswap's
	// layout (a test that planted them).
	allowKey func(key string) bool
	// extraEnv is added to every CLI process.
	extraEnv []string
}

// forEachStore runs f on a fresh table on file://, and on MinIO when it is
// available, both at once: the tests wait on processes and the network
// far more than they compute.
func forEachStore(t *testing.T, f func(t *testing.T, e *tableEnv)) {
	var wg sync.WaitGroup
	wg.Go(func() { t.Run("file", func(t *testing.T) { f(t, newFileEnv(t)) }) })
	wg.Go(func() {
		t.Run("minio", func(t *testing.T) {
			if !testenv.S3Enabled() {
				t.Skip("MinIO not configured (" + testenv.EnvS3 + "); scripts/test.sh starts one")
			}
			f(t, newMinioEnv(t))
		})
	})
	wg.Go(func() {
		t.Run("azurite", func(t *testing.T) {
			if !testenv.AzureEnabled() {
				t.Skip("Azurite not configured (" + testenv.EnvAzure + "); scripts/test.sh starts one")
			}
			f(t, newAzuriteEnv(t))
		})
		t.Run("gcs", func(t *testing.T) {
			if !testenv.GCSEnabled() {
				t.Skip("fake-gcs-server not configured (" + testenv.EnvGCS + "); scripts/test.sh starts one")
			}
			f(t, newGCSEnv(t))
		})
	})
	wg.Wait()
}

// runConcurrently runs subtests, up to limit at a time, without counting
// against go test's -parallel (which is the number of CPUs): subtests that
// mostly wait on child processes run far more than two at once.
func runConcurrently[T any](t *testing.T, limit int, items []T, name func(T) string, f func(t *testing.T, item T)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t.Run(name(it), func(t *testing.T) { f(t, it) })
		})
	}
	wg.Wait()
}

var sentinelKeys = []string{
	"sales-x/dt=2026-11-29/_pswap/pointer.json",
	"sales-x/dt=2026-11-29/_pswap/gen/0190b8a0-0000-7000-8000-000000000000/part-00000.parquet",
	"salesfile",
	"sales.json",
}

func newFileEnv(t testing.TB) *tableEnv {
	t.Helper()
	lake := filepath.Join(t.TempDir(), "lake")
	e := &tableEnv{kind: "file", lake: lake, dir: filepath.Join(lake, "sales"), sentinels: map[string][]byte{}}
	e.url = "file://" + filepath.ToSlash(e.dir)
	for _, k := range sentinelKeys {
		body := []byte("sentinel " + k)
		p := filepath.Join(lake, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		e.sentinels[k] = body
	}
	st, err := filestore.New(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	return e
}

func newMinioEnv(t testing.TB) *tableEnv {
	t.Helper()
	opts := testenv.S3Options(t)
	bucket, c := testenv.S3Bucket(t)
	e := &tableEnv{kind: "minio", bucket: bucket, root: "lake/sales", s3c: c, sentinels: map[string][]byte{}}
	e.url = "s3://" + bucket + "/" + e.root
	for _, k := range sentinelKeys {
		body := []byte("sentinel " + k)
		key := "lake/" + k
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		e.sentinels[k] = body
	}
	st, err := s3store.New(ctx, bucket, e.root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.st = st
	p, err := faultproxy.Start(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	e.proxy = p
	return e
}

// viaProxy returns a store on the table whose requests go through the
// fault proxy (MinIO), or the direct store (file://, which has no wire to
// break). sdkAttempts bounds the SDK's own retries (0: its default).
func (e *tableEnv) viaProxy(t testing.TB, sdkAttempts int) store.Store {
	t.Helper()
	if e.proxy == nil {
		return e.st
	}
	if e.kind == "azurite" {
		return e.azureViaProxy(t, sdkAttempts)
	}
	if e.kind == "gcs" {
		return e.gcsViaProxy(t, sdkAttempts)
	}
	opts := testenv.S3Options(t)
	opts.Endpoint = e.proxy.URL
	opts.RetryMaxAttempts = sdkAttempts
	st, err := s3store.New(ctx, e.bucket, e.root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// table is the pswap API on the direct store.
func (e *tableEnv) table() *pswap.Table { return pswap.NewTable(e.st) }

// cliEnv is the environment of a CLI process: the test's own (the AWS
// settings) with the endpoint moved to the fault proxy.
func (e *tableEnv) cliEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AZURE_STORAGE_CONNECTION_STRING", "STORAGE_EMULATOR_HOST", "PSWAP_RUN_ID", "PSWAP_TABLE", "AIRFLOW_CTX_DAG_ID", "AIRFLOW_CTX_DAG_RUN_ID":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "AWS_EC2_METADATA_DISABLED=true")
	switch {
	case e.azProxyConn != "":
		env = append(env, "AZURE_STORAGE_CONNECTION_STRING="+e.azProxyConn)
	case e.proxy != nil && e.kind == "gcs":
		env = append(env, "STORAGE_EMULATOR_HOST="+e.proxy.URL)
	case e.proxy != nil:
		env = append(env, "AWS_ENDPOINT_URL="+e.proxy.URL)
	default:
		for _, k := range []string{"AZURE_STORAGE_CONNECTION_STRING", "STORAGE_EMULATOR_HOST"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	return append(env, e.extraEnv...)
}

// rawObject is an object seen from outside pswap: a key relative to the
// lake directory or the bucket's "lake/" prefix.
type rawObject struct {
	key  string
	size int64
}

// rawList lists everything around the table: the whole lake directory, or
// the whole bucket. Keys are relative to "lake/"; a key that is not under
// it is returned with a "../" prefix.
func (e *tableEnv) rawList(t testing.TB) []rawObject {
	t.Helper()
	var out []rawObject
	if e.kind == "file" {
		parent := filepath.Dir(e.lake)
		err := filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(e.lake, p)
			fi, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			out = append(out, rawObject{key: filepath.ToSlash(rel), size: fi.Size()})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if e.kind == "azurite" {
		return e.azureRawList(t)
	}
	if e.kind == "gcs" {
		return e.gcsRawList(t)
	}
	pg := s3.NewListObjectsV2Paginator(e.s3c, &s3.ListObjectsV2Input{Bucket: &e.bucket})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			rel, ok := strings.CutPrefix(k, "lake/")
			if !ok {
				rel = "../" + k
			}
			out = append(out, rawObject{key: rel, size: aws.ToInt64(o.Size)})
		}
	}
	return out
}

// rawRead reads an object by its raw key (relative to "lake/").
func (e *tableEnv) rawRead(key string) ([]byte, error) {
	if e.kind == "file" {
		return os.ReadFile(filepath.Join(e.lake, filepath.FromSlash(key)))
	}
	if e.raw != nil {
		b, _, err := store.ReadAll(ctx, e.raw, "lake/"+key)
		return b, err
	}
	k := "lake/" + key
	out, err := e.s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: &e.bucket, Key: &k})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(out.Body)
	return b.Bytes(), err
}

// rawWrite writes an object by key relative to the table root, behind
// pswap's back (for tampering).
func (e *tableEnv) rawWrite(t testing.TB, key string, body []byte) {
	t.Helper()
	if e.kind == "file" {
		p := filepath.Join(e.dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	k := path.Join(e.root, key)
	if e.raw != nil {
		if _, err := e.raw.Put(ctx, k, body, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := e.s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &e.bucket, Key: &k, Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
}

// localCopy returns a local path holding the object at key (relative to
// the table root): the file itself on file://, a downloaded copy on MinIO.
func (e *tableEnv) localCopy(c context.Context, key, dir string) (string, error) {
	if e.kind == "file" {
		return filepath.Join(e.dir, filepath.FromSlash(key)), nil
	}
	data, _, err := store.ReadAll(c, e.st, key)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, fmt.Sprintf("%d-%s", len(key), strings.ReplaceAll(key, "/", "_")))
	return p, os.WriteFile(p, data, 0o644)
}
