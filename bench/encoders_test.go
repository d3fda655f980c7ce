//go:build unix

package bench

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store/memstore"
)

// BenchmarkEncoders writes PSWAP_BENCH_ROWS (default 1M) sales rows already
// in memory (8,192 per Write, as writeSlice does) into a memory store, once
// with the default (staging.Options.Encoders 1: encoded by the goroutine
// that calls Write, the row hash on a second) and once with GOMAXPROCS
// encoder goroutines (at most 4), back to back in each iteration, and
// reports the median ratio of the two wall times and of the two process CPU
// times: parallel / one encoder. The bytes are the same either way (staging's
// tests check it; the benchmark checks rows and sizes).
func BenchmarkEncoders(b *testing.B) {
	ctx := context.Background()
	n := int(rowsOr(1_000_000))
	par := min(runtime.GOMAXPROCS(0), 4)
	if par < 2 {
		b.Skip("one CPU: no encoder goroutines")
	}
	rows := Sales(make([]Sale, n), 0)
	run := func(i int, enc int) (wall, cpu time.Duration, res pswap.Result) {
		t := pswap.NewTable(memstore.New())
		c0 := cpuTime()
		d, res, err := writeSlice(ctx, t, fmt.Sprintf("dt=2026-11-29/run=%d", i), rows,
			pswap.WriteOptions{Staging: staging.Options{Encoders: enc}})
		if err != nil {
			b.Fatal(err)
		}
		return d, cpuTime() - c0, res
	}
	var wall, cpu []float64
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so that neither always meets a
		// warmer heap.
		order := []int{1, par}
		if i%2 == 1 {
			order = []int{par, 1}
		}
		var w, c [2]time.Duration
		var r [2]pswap.Result
		for _, enc := range order {
			k := 0 // [0] parallel, [1] one encoder
			if enc == 1 {
				k = 1
			}
			w[k], c[k], r[k] = run(i, enc)
		}
		if r[0].Bytes != r[1].Bytes || r[0].Rows != r[1].Rows || r[0].Rows != int64(n) {
			b.Fatalf("one encoder wrote %d rows in %d bytes, several %d in %d", r[1].Rows, r[1].Bytes, r[0].Rows, r[0].Bytes)
		}
		wall = append(wall, w[0].Seconds()/w[1].Seconds())
		cpu = append(cpu, c[0].Seconds()/c[1].Seconds())
	}
	b.ReportMetric(Summarize(wall).Median, "parallel/one-wall")
	b.ReportMetric(Summarize(cpu).Median, "parallel/one-cpu")
}

// cpuTime is the CPU time of the process so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
