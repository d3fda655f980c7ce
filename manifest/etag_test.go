package manifest

import (
	"errors"
	"strings"
	"testing"
)

func TestETagChecksum(t *testing.T) {
	for _, c := range []struct{ etag, want string }{
		{`"9b2cf535f27731c974343645a3985328"`, "etag:9b2cf535f27731c974343645a3985328"},
		{`"d41d8cd98f00b204e9800998ecf8427e-12"`, "etag:d41d8cd98f00b204e9800998ecf8427e-12"},
		{"0a1b2c3d", "etag:0a1b2c3d"},
	} {
		got, err := ETagChecksum(c.etag)
		if err != nil || got != c.want {
			t.Fatalf("ETagChecksum(%q) = %q, %v; want %q", c.etag, got, err, c.want)
		}
		if err := ValidateFileChecksum(got); err != nil {
			t.Fatalf("ValidateFileChecksum(%q): %v", got, err)
		}
		if !SameETag(got, c.etag) || SameETag(got, c.etag+"0") {
			t.Fatalf("SameETag(%q, %q) wrong", got, c.etag)
		}
	}
	for _, bad := range []string{`""`, "", `"a b"`, "a\x00", strings.Repeat("a", 257), `"x"y"`, "ü"} {
		if got, err := ETagChecksum(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("ETagChecksum(%q) = %q, %v; want ErrInvalid", bad, got, err)
		}
	}
	for _, bad := range []string{"etag:", "etag:a b", "etag:" + strings.Repeat("f", 257), "md5:abc", "ETAG:abc"} {
		if err := ValidateFileChecksum(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("ValidateFileChecksum(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if SameETag("sha256:"+strings.Repeat("0", 64), strings.Repeat("0", 64)) {
		t.Fatal("SameETag matched a sha256 checksum")
	}
}
