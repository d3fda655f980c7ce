package main

import (
	"runtime/debug"
	"testing"

	"github.com/pswap/pswap"
)

// TestPaceGCForCopies: the target rises only for local Parquet files, and
// never over a GOGC the user set.
func TestPaceGCForCopies(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	pq := input{path: "a.parquet", format: pswap.FormatParquet}
	cases := []struct {
		name   string
		gogc   string
		inputs []input
		want   int
	}{
		{"parquet files", "", []input{pq, pq}, copyGCPercent},
		{"a CSV among them", "", []input{pq, {path: "b.csv", format: pswap.FormatCSV}}, 100},
		{"parquet on stdin", "", []input{{path: stdinArg, format: pswap.FormatParquet}}, 100},
		{"no inputs", "", nil, 100},
		{"GOGC set", "50", []input{pq}, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.gogc)
			debug.SetGCPercent(100)
			paceGCForCopies(c.inputs)
			if got := debug.SetGCPercent(100); got != c.want {
				t.Errorf("GC percent %d, want %d", got, c.want)
			}
		})
	}
}
