package bench

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		in   []float64
		want Summary
	}{
		{[]float64{3}, Summary{1, 3, 3, 3}},
		{[]float64{3, 1, 2}, Summary{3, 1, 2, 3}},
		{[]float64{4, 1, 3, 2}, Summary{4, 1, 2.5, 4}},
		{[]float64{5, nan, 1}, Summary{2, 1, 3, 5}},
	}
	for _, tc := range tests {
		if got := Summarize(tc.in); got != tc.want {
			t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	if s := Summarize(nil); s.N != 0 || !math.IsNaN(s.Median) {
		t.Errorf("Summarize(nil) = %+v, want N=0 and NaN", s)
	}
	// Summarize must not reorder the caller's slice.
	in := []float64{3, 1, 2}
	Summarize(in)
	if in[0] != 3 || in[1] != 1 {
		t.Errorf("Summarize sorted its input: %v", in)
	}
}

func TestRatiosPairwise(t *testing.T) {
	got := Ratios([]float64{2, 9, 5}, []float64{1, 3})
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("Ratios = %v, want [2 3]", got)
	}
	s := Seconds([]time.Duration{1500 * time.Millisecond})
	if s[0] != 1.5 {
		t.Errorf("Seconds = %v", s)
	}
}

func TestSummaryFormat(t *testing.T) {
	tests := []struct {
		s    Summary
		d    int
		want string
	}{
		{Summarize([]float64{1, 2, 4}), 2, "2.00 (1.00–4.00)"},
		{Summarize([]float64{0.5}), 1, "0.5"},
		{Summarize(nil), 1, "n/a"},
	}
	for _, tc := range tests {
		if got := tc.s.Format(tc.d); got != tc.want {
			t.Errorf("Format = %q, want %q", got, tc.want)
		}
	}
}

func TestTableWrite(t *testing.T) {
	tb := Table{Header: []string{"a", "long header"}}
	tb.Add("x–y", "1")
	tb.Add("only")
	var b bytes.Buffer
	if err := tb.Write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines:\n%s", len(lines), b.String())
	}
	// Every line has the same width in runes: the columns line up.
	w := len([]rune(lines[0]))
	for _, l := range lines {
		if len([]rune(l)) != w || !strings.HasPrefix(l, "|") || !strings.HasSuffix(l, "|") {
			t.Errorf("misaligned line %q (want %d runes)", l, w)
		}
	}
	if !strings.Contains(lines[1], "---") {
		t.Errorf("no separator line: %q", lines[1])
	}
}

func TestParsePeakRSS(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"Name:\tx\nVmPeak:\t 999 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 1 kB\n", 12345 * 1024, true},
		{"VmHWM: 0 kB", 0, true},
		{"VmRSS: 5 kB\n", 0, false},
		{"VmHWM: 5 MB\n", 0, false},
		{"VmHWM: -5 kB\n", 0, false},
		{"VmHWM: x kB\n", 0, false},
		{"VmHWM:\n", 0, false},
	}
	for _, tc := range tests {
		got, err := ParsePeakRSS(strings.NewReader(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParsePeakRSS(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestPeakRSSOfThisProcess(t *testing.T) {
	before, err := PeakRSS()
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if before <= 0 {
		t.Fatalf("peak RSS %d", before)
	}
	// Touch 64 MiB: the peak must grow by about that much.
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = byte(i)
	}
	after, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if after < before+48<<20 {
		t.Errorf("peak RSS grew from %d to %d after touching 64 MiB", before, after)
	}
	_ = b[len(b)-1]
}

func FuzzParsePeakRSS(f *testing.F) {
	for _, s := range []string{"VmHWM:\t 1 kB\n", "VmHWM: 99999999999999999999 kB", "a\nVmHWM: 7 kB\nb", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParsePeakRSS(strings.NewReader(s))
		if err == nil && (n < 0 || n%1024 != 0) {
			t.Fatalf("ParsePeakRSS(%q) = %d", s, n)
		}
	})
}

func TestOperation(t *testing.T) {
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	tests := []struct {
		method, path, query, want string
	}{
		{"PUT", "/b/k", "", "PutObject"},
		{"PUT", "/b/k", "partNumber=1&uploadId=x", "UploadPart"},
		{"POST", "/b/k", "uploads=", "CreateMultipartUpload"},
		{"POST", "/b/k", "uploadId=x", "CompleteMultipartUpload"},
		{"POST", "/b", "delete=", "DeleteObjects"},
		{"GET", "/b/k", "", "GetObject"},
		{"GET", "/b", "list-type=2&prefix=p", "ListObjects"},
		{"GET", "/b", "uploads=", "ListMultipartUploads"},
		{"HEAD", "/b", "", "HeadBucket"},
		{"HEAD", "/b/", "", "HeadBucket"},
		{"HEAD", "/b/k", "", "HeadObject"},
		{"DELETE", "/b/k", "uploadId=x", "AbortMultipartUpload"},
		{"DELETE", "/b/k", "", "DeleteObject"},
	}
	for _, tc := range tests {
		if got := Operation(tc.method, tc.path, q(tc.query)); got != tc.want {
			t.Errorf("Operation(%s %s?%s) = %s, want %s", tc.method, tc.path, tc.query, got, tc.want)
		}
	}
}

func TestDiff(t *testing.T) {
	got := Diff(map[string]int{"a": 3, "b": 1, "c": 2}, map[string]int{"a": 1, "b": 1})
	if fmt.Sprint(got) != "map[a:2 c:2]" {
		t.Errorf("Diff = %v", got)
	}
}
