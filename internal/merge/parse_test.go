package merge

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/errkind"
)

func TestParseKeys(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"order_id", []string{"order_id"}, ""},
		{"tenant, order_id", []string{"tenant", "order_id"}, ""},
		{"", nil, "no key column"},
		{"a,,b", nil, "empty key column"},
		{"a,a", nil, `"a" given twice`},
		{"a=b", nil, "holds '='"},
		{"a\x01", nil, "not printable"},
		{strings.Repeat("k,", 40) + "k", nil, "at most 32"},
	} {
		got, err := ParseKeys(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, errkind.ErrBadInput) {
				t.Errorf("ParseKeys(%q) = %v, %v; want an ErrBadInput with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseKeys(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseDeleteWhen(t *testing.T) {
	for _, c := range []struct {
		in   string
		want DeleteWhen
		err  string
	}{
		{"op=D", DeleteWhen{"op", "D"}, ""},
		{"op=", DeleteWhen{"op", ""}, ""},
		{"deleted=true", DeleteWhen{"deleted", "true"}, ""},
		{"op=a=b", DeleteWhen{"op", "a=b"}, ""},
		{"op", DeleteWhen{}, "want column=value"},
		{"=D", DeleteWhen{}, "empty delete marker column"},
		{"op=\n", DeleteWhen{}, "not printable"},
	} {
		got, err := ParseDeleteWhen(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, errkind.ErrBadInput) {
				t.Errorf("ParseDeleteWhen(%q) = %v, %v; want an ErrBadInput with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseDeleteWhen(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseKeys: any string parses to valid, distinct names or fails with
// ErrBadInput; a parsed list re-joined parses to itself.
func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"order_id", "tenant,order_id", "", ",", "a,a", "a=b", " x , y "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		keys, err := ParseKeys(s)
		if err != nil {
			if !errors.Is(err, ErrBadOption) {
				t.Fatalf("ParseKeys(%q): %v is not ErrBadOption", s, err)
			}
			return
		}
		if len(keys) == 0 || len(keys) > MaxKeyColumns {
			t.Fatalf("ParseKeys(%q) = %d keys", s, len(keys))
		}
		again, err := ParseKeys(strings.Join(keys, ","))
		if err != nil || !slices.Equal(again, keys) {
			t.Fatalf("round trip of %q: %v, %v; want %v", s, again, err, keys)
		}
	})
}

// FuzzParseDeleteWhen: a parsed marker prints as a spec that parses to it.
func FuzzParseDeleteWhen(f *testing.F) {
	for _, s := range []string{"op=D", "op=", "=", "op", "a=b=c", "\x00=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDeleteWhen(s)
		if err != nil {
			if !errors.Is(err, ErrBadOption) {
				t.Fatalf("ParseDeleteWhen(%q): %v is not ErrBadOption", s, err)
			}
			return
		}
		again, err := ParseDeleteWhen(d.String())
		if err != nil || again != d {
			t.Fatalf("round trip of %q: %v, %v; want %v", s, again, err, d)
		}
	})
}
