package partition

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/pswap/pswap/store"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"dt=2026-11-29", "dt=2026-11-29/hr=13", "year=2026/month=11/day=29",
		"p=a%3Ab", "p=a:b", "p=%2F", "p=%zz", "p=%C3%BC", "/dt=1", "dt=1//hr=2",
		"..", "dt=..", "_pswap=x", "Dt=1", "dt=1/dt=1", "p=\x00", "p=\xff", "p=x.pswap-tmp",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalidKey", s, err)
			}
			if !k.IsZero() {
				t.Fatalf("Parse(%q) returned %q with an error", s, k)
			}
			if Validate(s) == nil {
				t.Fatalf("Validate(%q) accepts what Parse rejects", s)
			}
			return
		}
		c := k.String()
		if k.IsZero() || c == "" || len(c) > MaxLen || !utf8.ValidString(c) {
			t.Fatalf("Parse(%q) = %q: zero, too long or not UTF-8", s, c)
		}
		k2, err := Parse(c)
		if err != nil || k2 != k {
			t.Fatalf("Parse(%q) = %q; Parse of that = %q, %v", s, c, k2, err)
		}
		if err := Validate(c); err != nil {
			t.Fatalf("canonical form %q of %q not valid: %v", c, s, err)
		}
		if (Validate(s) == nil) != (s == c) {
			t.Fatalf("Validate(%q) disagrees with canonical form %q", s, c)
		}
		k3, err := New(k.Columns()...)
		if err != nil || k3 != k {
			t.Fatalf("New(Columns()) of %q = %q, %v", c, k3, err)
		}
		if err := store.ValidateKey(c + "/_pswap/pointer.json"); err != nil {
			t.Fatalf("store rejects the path of key %q: %v", c, err)
		}
		if k.Len() != len(k.Columns()) || k.Len() > MaxColumns {
			t.Fatalf("Len() = %d, Columns() = %q", k.Len(), k.Columns())
		}
	})
}
