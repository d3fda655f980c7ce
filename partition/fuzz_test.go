package partition

import (
	"errors"
	"testing"
	"time"
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

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{
		"2026-11-29/2026-11-30", "2026-11-29T13:00:00Z/2026-11-29T14:00:00Z",
		"2026-11-29T13:00:00Z/PT1H", "2026-11-29/P1D", "PT1H/2026-11-29T14:00:00Z",
		"2026-11-29T14:00:00+01:00/P1Y2M3W4DT5H6M7S", "2026-11-29T13:00:00.123456789Z/PT1S",
		"2026-11-29/P", "2026-11-29/P99999999Y", "9999-12-31/P1D", "2026-11-29T13:00:00/PT1H",
	} {
		f.Add(s)
	}
	layouts := []Layout{{}, {Grain: Hour}, {Grain: Month}}
	f.Fuzz(func(t *testing.T, s string) {
		iv, err := ParseInterval(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidInterval) {
				t.Fatalf("ParseInterval(%q) error %v does not wrap ErrInvalidInterval", s, err)
			}
			return
		}
		if !iv.End.After(iv.Start) || iv.Start.Location() != time.UTC || iv.End.Location() != time.UTC {
			t.Fatalf("ParseInterval(%q) = %v: empty, reversed or not UTC", s, iv)
		}
		back, err := ParseInterval(iv.String())
		if err != nil || back != iv {
			t.Fatalf("ParseInterval(%q) = %v; ParseInterval of that = %v, %v", s, iv, back, err)
		}
		for _, l := range layouts {
			k, err := l.Key(iv)
			if err != nil {
				if !errors.Is(err, ErrUnaligned) {
					t.Fatalf("%v.Key(%v): %v, want ErrUnaligned", l, iv, err)
				}
				continue
			}
			if err := Validate(k.String()); err != nil {
				t.Fatalf("%v.Key(%v) = %q, not valid: %v", l, iv, k, err)
			}
			p, err := l.Interval(k)
			if err != nil || p != iv {
				t.Fatalf("%v.Interval(%q) = %v, %v; want %v", l, k, p, err, iv)
			}
		}
	})
}

func FuzzParseLayout(f *testing.F) {
	for _, s := range []string{
		"day", "hour", "month", "dt=2006-01-02/hr=15", "year=2006/month=01/day=02",
		"dt=20060102", "ts=2006-01-02T15:04", "hr=15", "dt=Monday", "d=2006.002",
	} {
		f.Add(s)
	}
	iv := Interval{Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLayout(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidLayout) {
				t.Fatalf("ParseLayout(%q) error %v does not wrap ErrInvalidLayout", s, err)
			}
			return
		}
		n, err := l.Normalize()
		if err != nil || !n.Grain.valid() {
			t.Fatalf("ParseLayout(%q) accepted a layout Normalize rejects: %v", s, err)
		}
		l2, err := ParseLayout(l.String())
		if err != nil {
			t.Fatalf("ParseLayout(%q).String() = %q does not parse: %v", s, l.String(), err)
		}
		iv := iv
		iv.End = n.Grain.Add(iv.Start, 1)
		k, err := l.Key(iv)
		if err != nil {
			t.Fatalf("ParseLayout(%q).Key(%v): %v", s, iv, err)
		}
		if k2, err := l2.Key(iv); err != nil || k2 != k {
			t.Fatalf("layouts %q and %q disagree: %q, %q (%v)", s, l2, k, k2, err)
		}
		if back, err := l.Interval(k); err != nil || back != iv {
			t.Fatalf("ParseLayout(%q).Interval(%q) = %v, %v; want %v", s, k, back, err, iv)
		}
	})
}
