package gcsstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/gcsstore"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, bucket, prefix string }{
		{"gs://lake/sales", "lake", "sales"},
		{"gs://lake/sales/", "lake", "sales"},
		{"GS://lake/daily/sales", "lake", "daily/sales"},
		{"gs://lake", "lake", ""},
		{"gs://lake/", "lake", ""},
		{"gs://my_lake.example.com/city=S%C3%A3o", "my_lake.example.com", "city=S%C3%A3o"},
	} {
		b, p, err := gcsstore.ParseURL(c.in)
		if err != nil || b != c.bucket || p != c.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", c.in, b, p, err, c.bucket, c.prefix)
		}
	}
	for _, in := range []string{
		"s3://lake/sales", "gs:/lake/sales", "gs://", "gs://l/x", "gs://Lake/x", "gs://-lake/x",
		"gs://lake-/x", "gs://goog-lake/x", "gs://la..ke/x", "gs://lake//x", "gs://lake/a/../b",
		"gs://lake/x\x00", "gs://" + strings.Repeat("a", 64) + "/x",
	} {
		if _, _, err := gcsstore.ParseURL(in); err == nil {
			t.Errorf("ParseURL(%q) accepted", in)
		}
	}
}

// FuzzParseURL: whatever it accepts has a valid bucket and a prefix that
// passes store.ValidatePrefix, and formats back to an equivalent URL.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"gs://lake/sales", "gs://lake", "GS://a.b-c_d/x/y/", "gs://lake//x", "gs://lake/%2e%2e/x", "gs://ab/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b, p, err := gcsstore.ParseURL(in)
		if err != nil {
			return
		}
		if err := store.ValidatePrefix(p); err != nil {
			t.Fatalf("ParseURL(%q) prefix %q: %v", in, p, err)
		}
		u := "gs://" + b + "/" + p
		b2, p2, err := gcsstore.ParseURL(u)
		if err != nil || b2 != b || p2 != p {
			t.Fatalf("ParseURL(%q) = %q, %q; reparse of %q = %q, %q, %v", in, b, p, u, b2, p2, err)
		}
	})
}

// TestNoCredentials: outside Google Cloud, with no emulator and no
// credentials, opening a store fails at once with store.ErrAccessDenied
// and says where credentials come from.
func TestNoCredentials(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", t.TempDir()+"/missing.json")
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GCE_METADATA_HOST", "127.0.0.1:1") // no metadata server either
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := gcsstore.New(ctx, "lake", "sales", gcsstore.Options{})
	if !errors.Is(err, store.ErrAccessDenied) || !strings.Contains(err.Error(), "GOOGLE_APPLICATION_CREDENTIALS") {
		t.Fatalf("New without credentials: %v, want ErrAccessDenied naming GOOGLE_APPLICATION_CREDENTIALS", err)
	}
}
