package main

import (
	"errors"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in          string
		bucket, key string
		ok          bool
	}{
		{"s3://b/k", "b", "k", true},
		{"s3://b/dir/k.parquet", "b", "dir/k.parquet", true},
		{"s3://b/", "", "", false},
		{"s3://b", "", "", false},
		{"s3:///k", "", "", false},
		{"file:///x", "", "", false},
		{"b/k", "", "", false},
	}
	for _, tc := range tests {
		b, k, err := parseTarget(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("parseTarget(%q) error = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if err != nil && !errors.Is(err, errUsage) {
			t.Errorf("parseTarget(%q) error %v is not errUsage", tc.in, err)
		}
		if b != tc.bucket || k != tc.key {
			t.Errorf("parseTarget(%q) = %q, %q; want %q, %q", tc.in, b, k, tc.bucket, tc.key)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"s3://b/k", "s3://b/", "s3://", "x", "s3://a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, k, err := parseTarget(s)
		if err != nil {
			return
		}
		if b == "" || k == "" || "s3://"+b+"/"+k != s {
			t.Fatalf("parseTarget(%q) = %q, %q: does not rebuild the input", s, b, k)
		}
	})
}
