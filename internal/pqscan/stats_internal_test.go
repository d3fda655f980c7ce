package pqscan

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pswap/pswap/manifest"
)

// TestTruncateBounds: string bounds cut to 16 code points still bound the
// values: the lower one a prefix, the upper one sorts after every string
// that starts like the value.
func TestTruncateBounds(t *testing.T) {
	for _, tc := range []struct{ in, lower, upper string }{
		{"short", "short", "short"},
		{"abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnop", "abcdefghijklmnoq"},
		{strings.Repeat("ä", 18), strings.Repeat("ä", 16), strings.Repeat("ä", 15) + "å"},
		{"aaaaaaaaaaaaaaa\U0010FFFFb", "aaaaaaaaaaaaaaa\U0010FFFF", "aaaaaaaaaaaaaab"},
		{"aaaaaaaaaaaaaaa\ud7ffb", "aaaaaaaaaaaaaaa\ud7ff", "aaaaaaaaaaaaaaa\ue000"},
	} {
		l := truncateLower([]byte(tc.in))
		u, ok := truncateUpper([]byte(tc.in))
		if string(l) != tc.lower || !ok || string(u) != tc.upper {
			t.Errorf("%q: %q..%q (%v), want %q..%q", tc.in, l, u, ok, tc.lower, tc.upper)
		}
	}
	if u, ok := truncateUpper([]byte(string([]rune{0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 'a'}))); ok {
		t.Errorf("16 highest code points and more: upper bound %q, want none", u)
	}
}

// FuzzTruncateBounds: for any valid UTF-8 value, the truncated lower bound
// sorts at or before it and the upper bound (when there is one) after it
// and after anything that starts with its first 16 code points; both are
// valid UTF-8 of at most 16 code points.
func FuzzTruncateBounds(f *testing.F) {
	for _, s := range []string{"", "a", "abcdefghijklmnopqrstuvwxyz", "\U0010FFFF\U0010FFFF", "ééééééééééééééééé"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		l := truncateLower([]byte(s))
		if string(l) > s || !utf8.Valid(l) || utf8.RuneCount(l) > manifest.StringBoundRunes {
			t.Fatalf("%q: lower bound %q", s, l)
		}
		u, ok := truncateUpper([]byte(s))
		if !ok {
			return
		}
		if string(u) < s || !utf8.Valid(u) || utf8.RuneCount(u) > manifest.StringBoundRunes && string(u) != s {
			t.Fatalf("%q: upper bound %q", s, u)
		}
		if string(u) != s && string(u) < string(l)+"\U0010FFFF" {
			t.Fatalf("%q: upper bound %q does not follow every string starting with %q", s, u, l)
		}
	})
}
