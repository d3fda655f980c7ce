package pswap

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/gcsstore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/s3store"
)

// TestIsStoreURI: an input is a store URI when it starts with a URI
// scheme and "://", file:// excepted; paths are local whatever they hold.
func TestIsStoreURI(t *testing.T) {
	for s, want := range map[string]bool{
		"s3://lake/spark-out/dt=2026-09-01/":           true,
		"S3://lake/x.parquet":                          true,
		"gs://lake/out/":                               true,
		"az://lake/out/":                               true,
		"abfss://lake@acct.dfs.core.windows.net/out/":  true,
		"wasbs://lake@acct.blob.core.windows.net/out/": true,
		"s3a://lake/out/":                              true, // refused by CommitObjects, naming s3://
		"abfs://lake@acct.dfs.core.windows.net/out/":   true, // refused, naming abfss:// and az://
		"hdfs://nn/out/":                               true,
		"x+y.z-1://a":                                  true,
		"file:///data/out/part-0.parquet":              false,
		"FILE:///data/out":                             false,
		"out/dt=2026-09-01/part-0.parquet":             false,
		"/data/out":                                    false,
		`C:\data\out`:                                  false,
		"./s3://x":                                     false,
		"dir/gs://x":                                   false,
		"://x":                                         false,
		"1s3://x":                                      false,
		"a b://x":                                      false,
		"s3:/lake/x":                                   false,
		"":                                             false,
		"data:text":                                    false,
		"s3:lake":                                      false,
		"spark-out/dt=2026-09-01 12:00://x":            false,
		"gs://lake/out/dt=2026-09-01/part-0.snappy.parquet?x": true,
	} {
		if got := IsStoreURI(s); got != want {
			t.Errorf("IsStoreURI(%q) = %v, want %v", s, got, want)
		}
	}
}

// uriTables returns a table store of each kind with server-side copies,
// made without I/O: s3://lake/sales, gs://lake/sales and the Azure
// container lake of account acct, prefix sales.
func uriTables(t testing.TB) map[string]store.Store {
	t.Helper()
	ctx := context.Background()
	s3, err := s3store.New(ctx, "lake", "sales", s3store.Options{Endpoint: "http://127.0.0.1:1", Region: "us-east-1",
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider("id", "secret", ""))})
	if err != nil {
		t.Fatal(err)
	}
	gcs, err := gcsstore.New(ctx, "lake", "sales", gcsstore.Options{Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gcs.Close() })
	az, err := azstore.New(ctx, "lake", "sales", azstore.Options{Account: "acct", Key: base64.StdEncoding.EncodeToString([]byte("not a real key")),
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]store.Store{"s3": s3, "gcs": gcs, "azure": az}
}

// TestObjectURIRules: each table store takes its own scheme's inputs (S3
// and GCS in any bucket; Azure in any container of its account) and
// refuses any other with ErrBadInput, naming the accepted scheme (or both
// accounts); a table without server-side copies refuses them all.
func TestObjectURIRules(t *testing.T) {
	tables := uriTables(t)
	type accept struct {
		uri, key, root string // root: the URI of the store resolved, at ""
	}
	accepted := map[string][]accept{
		"s3": {
			{"s3://lake/spark-out/dt=1/", "spark-out/dt=1", "s3://lake/"},
			{"S3://other-bucket/out/a.parquet", "out/a.parquet", "s3://other-bucket/"},
			{"s3://lake", "", "s3://lake/"},
		},
		"gcs": {
			{"gs://lake/spark-out/dt=1/", "spark-out/dt=1", "gs://lake/"},
			{"GS://lake/out/a.parquet", "out/a.parquet", "gs://lake/"},
			{"gs://other-bucket/out/", "out", "gs://other-bucket/"},
			{"gs://other-bucket", "", "gs://other-bucket/"},
		},
		"azure": {
			{"az://lake/spark-out/dt=1/", "spark-out/dt=1", "abfss://lake@acct.dfs.core.windows.net/"},
			{"abfss://lake@acct.dfs.core.windows.net/out/a.parquet", "out/a.parquet", "abfss://lake@acct.dfs.core.windows.net/"},
			{"wasbs://lake@ACCT.blob.core.windows.net/out/", "out", "abfss://lake@acct.dfs.core.windows.net/"},
			{"az://other/out/", "out", "abfss://other@acct.dfs.core.windows.net/"},
			{"abfss://staging@acct.dfs.core.windows.net/spark-out/a.parquet", "spark-out/a.parquet", "abfss://staging@acct.dfs.core.windows.net/"},
		},
	}
	type refuse struct {
		uri  string
		want []string // substrings of the error
	}
	refused := map[string][]refuse{
		"s3": {
			{"gs://lake/out/", []string{"gs:// input", "s3://lake/sales", "takes s3:// inputs"}},
			{"az://lake/out/", []string{"az:// input", "takes s3:// inputs"}},
			{"s3a://lake/out/", []string{"s3a:// input", "takes s3:// inputs"}},
			{"hdfs://nn/out/", []string{"hdfs:// input", "takes s3:// inputs"}},
			{"s3://Bad_Bucket/out/", []string{"Bad_Bucket"}},
		},
		"gcs": {
			{"s3://lake/out/", []string{"s3:// input", "gs://lake/sales", "takes gs:// inputs"}},
			{"abfss://lake@acct.dfs.core.windows.net/out/", []string{"abfss:// input", "takes gs:// inputs"}},
			{"gs://Other_Bucket/out/", []string{"Other_Bucket"}},
		},
		"azure": {
			{"s3://lake/out/", []string{"s3:// input", "abfss://lake@acct.dfs.core.windows.net/sales", "takes az:// (or abfss://, wasbs://) inputs"}},
			{"gs://lake/out/", []string{"gs:// input", "takes az:// (or abfss://, wasbs://) inputs"}},
			{"abfss://lake@acct2.dfs.core.windows.net/out/", []string{"abfss://lake@acct2.dfs.core.windows.net/out/", "storage account acct2",
				"abfss://lake@acct.dfs.core.windows.net/sales in account acct", "own storage account only", "SAS"}},
			{"wasbs://other@acct2.blob.core.windows.net/out/", []string{"storage account acct2", "in account acct", "SAS"}},
			{"az://Other_Container/out/", []string{"Other_Container"}},
			{"abfs://lake@acct.dfs.core.windows.net/out/", []string{"unencrypted abfs:// is not supported", "az://"}},
		},
	}
	for kind, st := range tables {
		cp, err := copierOf(st)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		for _, a := range accepted[kind] {
			src, key, err := cp.resolve(a.uri)
			if err != nil {
				t.Errorf("%s table: %s: %v", kind, a.uri, err)
				continue
			}
			if key != a.key || src.URI("x") != a.root+"x" {
				t.Errorf("%s table: %s resolved to %s key %q, want %sx key %q", kind, a.uri, src.URI("x"), key, a.root, a.key)
			}
		}
		for _, r := range refused[kind] {
			_, _, err := cp.resolve(r.uri)
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("%s table: %s: %v, want ErrBadInput", kind, r.uri, err)
				continue
			}
			for _, w := range r.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s table: %s: %q does not say %q", kind, r.uri, err, w)
				}
			}
		}
	}
	_, err := copierOf(memstore.New())
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "S3, GCS or Azure") {
		t.Errorf("memory table: %v, want ErrBadInput naming the stores that copy", err)
	}
}

// FuzzIsStoreURI: IsStoreURI never panics, a store URI has a scheme and
// "://" and is not file://, and resolving any string on any table store
// either fails with ErrBadInput or yields a valid key.
func FuzzIsStoreURI(f *testing.F) {
	for _, s := range []string{"s3://lake/out/", "gs://lake/a.parquet", "abfss://lake@acct.dfs.core.windows.net/x", "file:///x", "./x", "a b://c", "az://lake/../x"} {
		f.Add(s)
	}
	tables := uriTables(f)
	f.Fuzz(func(t *testing.T, s string) {
		if IsStoreURI(s) {
			scheme, _, ok := strings.Cut(s, "://")
			if !ok || scheme == "" || strings.EqualFold(scheme, "file") || strings.ContainsAny(scheme, "/\\ :") {
				t.Fatalf("IsStoreURI(%q) with scheme %q", s, scheme)
			}
		}
		for kind, st := range tables {
			cp, _ := copierOf(st)
			_, key, err := cp.resolve(s)
			if err != nil {
				if !errors.Is(err, ErrBadInput) {
					t.Fatalf("%s: resolve(%q): %v, not ErrBadInput", kind, s, err)
				}
				continue
			}
			if key != "" {
				if err := store.ValidateKey(key); err != nil {
					t.Fatalf("%s: resolve(%q) = key %q: %v", kind, s, key, err)
				}
			}
		}
	})
}
