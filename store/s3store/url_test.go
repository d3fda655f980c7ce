package s3store

import (
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap/store"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in             string
		bucket, prefix string
		ok             bool
	}{
		{"s3://bkt", "bkt", "", true},
		{"s3://bkt/", "bkt", "", true},
		{"S3://bkt/a/b", "bkt", "a/b", true},
		{"s3://bkt/a/b/", "bkt", "a/b", true},
		{"s3://my.bucket-1/dt=2026-11-29/city=S%C3%A3o", "my.bucket-1", "dt=2026-11-29/city=S%C3%A3o", true},
		{"s3://bkt/a?b#c", "bkt", "a?b#c", true},
		{"s3://bkt/a//b", "", "", false},
		{"s3://bkt//a", "", "", false},
		{"s3://bkt/../x", "", "", false},
		{"s3://bkt/a/./b", "", "", false},
		{"s3://Bkt/a", "", "", false},
		{"s3://b/a", "", "", false},
		{"s3://-bkt/a", "", "", false},
		{"s3://bkt..x/a", "", "", false},
		{"s3://bkt:9000/a", "", "", false},
		{"s3://user@bkt/a", "", "", false},
		{"s3:///a", "", "", false},
		{"file:///tmp/x", "", "", false},
		{"bkt/a", "", "", false},
		{"", "", "", false},
		{"s3://bkt/a\nb", "", "", false},
	} {
		b, p, err := ParseURL(tc.in)
		if (err == nil) != tc.ok || b != tc.bucket || p != tc.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q, ok=%v", tc.in, b, p, err, tc.bucket, tc.prefix, tc.ok)
		}
	}
	_, _, err := ParseURL("s3://bkt/../x")
	if !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("bad prefix: %v, want ErrInvalidKey", err)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://bkt", "s3://bkt/a/b/", "s3://my.bucket-1/dt=2026-11-29/city=S%C3%A3o",
		"s3://bkt/../x", "s3://bkt//a", "S3://BKT/a", "s3://bkt/\x00", "file:///x", "s3://bkt/a?b#c", "s3://b\u00e9t/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		bucket, prefix, err := ParseURL(raw)
		if err != nil {
			return
		}
		if err := validateBucket(bucket); err != nil {
			t.Fatalf("ParseURL(%q) accepted bucket %q: %v", raw, bucket, err)
		}
		if err := store.ValidatePrefix(prefix); err != nil {
			t.Fatalf("ParseURL(%q) accepted prefix %q: %v", raw, prefix, err)
		}
		if strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/") {
			t.Fatalf("ParseURL(%q) prefix %q has edge slashes", raw, prefix)
		}
		// Canonical form round-trips.
		canon := "s3://" + bucket + "/" + prefix
		b2, p2, err := ParseURL(canon)
		if err != nil || b2 != bucket || p2 != prefix {
			t.Fatalf("canonical %q of %q parses to %q, %q, %v", canon, raw, b2, p2, err)
		}
		// A key under the prefix stays under the bucket and prefix.
		s := &Store{bucket: bucket}
		if prefix != "" {
			s.root = prefix + "/"
		}
		if got := s.URI("k"); got != strings.TrimSuffix(canon, "/")+"/k" {
			t.Fatalf("URI(k) = %q for %q", got, canon)
		}
	})
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bucket, prefix, root string
		ok                   bool
	}{
		{"bkt", "", "", true},
		{"bkt", "/a/b/", "a/b/", true},
		{"bkt", "a", "a/", true},
		{"bkt", "a/../b", "", false},
		{"BKT", "a", "", false},
		{"bk", "a", "", false},
		{"bkt", "a//b", "", false},
	} {
		s, err := New(t.Context(), tc.bucket, tc.prefix, Options{Region: "us-east-1", Endpoint: "http://127.0.0.1:1"})
		if (err == nil) != tc.ok {
			t.Errorf("New(%q, %q) error = %v, want ok=%v", tc.bucket, tc.prefix, err, tc.ok)
			continue
		}
		if err == nil && s.Prefix() != tc.root {
			t.Errorf("New(%q, %q) root = %q, want %q", tc.bucket, tc.prefix, s.Prefix(), tc.root)
		}
	}
	s, err := New(t.Context(), "bkt", "a/b", Options{Region: "us-east-1", Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.URI("x/y"); got != "s3://bkt/a/b/x/y" {
		t.Errorf("URI = %q", got)
	}
	if got := s.URI(""); got != "s3://bkt/a/b" {
		t.Errorf("URI(\"\") = %q", got)
	}
	if !s.Client().Options().UsePathStyle {
		t.Error("a custom endpoint did not imply path-style addressing")
	}
	if !s.Client().Options().DisableLogOutputChecksumValidationSkipped {
		t.Error("the SDK would warn on stderr on every Get of a multipart object")
	}
}

func TestEndpointFromEnvImpliesPathStyle(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
	t.Setenv("AWS_REGION", "")
	s, err := New(t.Context(), "bkt", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Client().Options()
	if !o.UsePathStyle || o.BaseEndpoint == nil || *o.BaseEndpoint != "http://127.0.0.1:9" {
		t.Errorf("UsePathStyle=%v BaseEndpoint=%v", o.UsePathStyle, o.BaseEndpoint)
	}
	if o.Region == "" {
		t.Error("no default region")
	}
	t.Setenv("AWS_ENDPOINT_URL", "")
	s, err = New(t.Context(), "bkt", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Client().Options().UsePathStyle {
		t.Error("path style without a custom endpoint")
	}
}
