package editdist

import "testing"

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"s3", "s3", 0}, {"", "abc", 3}, {"abc", "", 3},
		{"partiton", "partition", 1}, {"s3", "s4", 1}, {"fil", "file", 1},
		{"kitten", "sitting", 3}, {"ab", "ba", 2},
	} {
		if got := Levenshtein(c.a, c.b); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Levenshtein(c.b, c.a); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}
