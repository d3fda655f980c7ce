package gcsstore

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestRequestBuckets: the buckets a request names, as the SDK spells its
// URLs (object names escaped, slashes too).
func TestRequestBuckets(t *testing.T) {
	for raw, want := range map[string][]string{
		"http://h/storage/v1/b/lake/o/tbl%2Fp%2Fpointer.json":                      {"lake"},
		"http://h/storage/v1/b/lake/o?prefix=tbl%2F":                               {"lake"},
		"http://h/upload/storage/v1/b/lake/o?uploadType=multipart":                 {"lake"},
		"http://h/storage/v1/b/staging/o/out%2Fa/rewriteTo/b/lake/o/tbl%2Fgen%2Fa": {"staging", "lake"},
		"https://storage.googleapis.com/lake/tbl%2Fb%2Fx.parquet":                  {"lake"},
		"http://h/": nil,
		"http://proxy/base/storage/v1/b/lake/o/k": {"lake"},
		"http://h/storage/v1/b/":                  nil,
		"http://h/storage/v1/b/staging/o/a/rewriteTo/b/lake/o/b?rewriteToken=x%2Fb%2Fother": {"staging", "lake"},
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := requestBuckets(u); !slices.Equal(got, want) {
			t.Errorf("requestBuckets(%s) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzRequestBuckets: requestBuckets never panics, and every bucket it
// returns is a non-empty path segment of the URL.
func FuzzRequestBuckets(f *testing.F) {
	for _, s := range []string{"/storage/v1/b/lake/o/k", "/b/b/b/", "/lake/obj", "", "/storage/v1/b/s/o/x/rewriteTo/b/d/o/y", "/%2F/b/%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		u := &url.URL{Scheme: "http", Host: "h", Path: "/" + strings.TrimPrefix(p, "/")} // a request's path is absolute
		for _, b := range requestBuckets(u) {
			if b == "" || strings.Contains(b, "/") || !strings.Contains(u.EscapedPath(), "/"+b) {
				t.Fatalf("requestBuckets(%q) = bucket %q", u.EscapedPath(), b)
			}
		}
	})
}
