package main

import (
	"strconv"
	"testing"
)

func TestParseRows(t *testing.T) {
	for _, c := range []struct {
		args []string
		n    int64
		ok   bool
	}{
		{[]string{"1"}, 1, true}, {[]string{"1000000"}, 1000000, true},
		{nil, 0, false}, {[]string{"0"}, 0, false}, {[]string{"-3"}, 0, false},
		{[]string{"1e6"}, 0, false}, {[]string{"1", "2"}, 0, false},
	} {
		n, err := parseRows(c.args)
		if (err == nil) != c.ok || n != c.n {
			t.Errorf("parseRows(%q) = %d, %v; want %d, ok=%v", c.args, n, err, c.n, c.ok)
		}
	}
}

// FuzzParseRows: a row count is accepted only as a positive integer that
// strconv reads back the same; never a panic.
func FuzzParseRows(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "99999999999999999999", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseRows([]string{s})
		if err != nil {
			return
		}
		if m, _ := strconv.ParseInt(s, 10, 64); n < 1 || n != m {
			t.Fatalf("parseRows(%q) = %d", s, n)
		}
	})
}
