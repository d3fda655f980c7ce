package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Summary is the spread of one quantity over several rounds.
type Summary struct {
	N                int
	Min, Median, Max float64
}

// Summarize returns the min, median and max of xs (NaN values are
// ignored). The median of an even count is the mean of the middle two.
func Summarize(xs []float64) Summary {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		nan := math.NaN()
		return Summary{Min: nan, Median: nan, Max: nan}
	}
	slices.Sort(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Summary{N: len(v), Min: v[0], Median: m, Max: v[len(v)-1]}
}

// Ratios divides a[i] by b[i] pairwise: each ratio compares two
// measurements of the same round.
func Ratios(a, b []float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i] / b[i]
	}
	return out
}

// Seconds converts durations to seconds.
func Seconds(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

// Format renders the summary as "median (min–max)" with the given
// number of decimals.
func (s Summary) Format(decimals int) string {
	if s.N == 0 {
		return "n/a"
	}
	f := func(x float64) string { return fmt.Sprintf("%.*f", decimals, x) }
	if s.N == 1 {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

// Table is a Markdown table built row by row.
type Table struct {
	Header []string
	Rows   [][]string
}

// Add appends a row; missing cells are left empty.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Write renders the table as GitHub-flavoured Markdown with padded columns.
func (t *Table) Write(w io.Writer) error {
	width := make([]int, len(t.Header))
	for i, h := range t.Header {
		width[i] = len([]rune(h))
	}
	for _, r := range t.Rows {
		for i := range min(len(r), len(width)) {
			width[i] = max(width[i], len([]rune(r[i])))
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		b.WriteString("|")
		for i := range width {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			b.WriteString(" " + c + strings.Repeat(" ", width[i]-len([]rune(c))) + " |")
		}
		return b.String() + "\n"
	}
	var b strings.Builder
	b.WriteString(line(t.Header))
	b.WriteString("|")
	for _, n := range width {
		b.WriteString(strings.Repeat("-", n+2) + "|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString(line(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
