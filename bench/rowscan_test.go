//go:build unix

package bench

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/testing/duckcheck"
)

// BenchmarkRowScanFile measures the check that committing an existing file
// runs beside its upload, alone: pqscan.RowScan over DuckDB's Parquet file
// of PSWAP_BENCH_ROWS (default 1M) sales rows (page CRCs, every page
// decompressed and decoded, the content checksum), on all cores. It
// reports the median milliseconds of a scan, of the CPU time it used (user
// and system, all cores: steadier than wall time on a loaded machine), and
// the file's size; compare builds in the same run by running each one's
// test binary.
func BenchmarkRowScanFile(b *testing.B) {
	duckcheck.SkipIfUnavailable(b)
	ctx := context.Background()
	n := rowsOr(1_000_000)
	path := os.Getenv("PSWAP_BENCH_PARQUET") // a file made before, to skip DuckDB
	if path == "" {
		path = filepath.Join(b.TempDir(), "sales.parquet")
		if _, err := duckCopy(ctx, path, n); err != nil {
			b.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var times, cpu []float64
	for b.Loop() {
		cpu0 := cpuSeconds()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		var scan pqscan.RowScan
		err = scan.Add(ctx, f, fi.Size(), path)
		times = append(times, time.Since(start).Seconds())
		cpu = append(cpu, cpuSeconds()-cpu0)
		f.Close()
		if rows, _ := scan.Checksum(); err != nil || rows == 0 {
			b.Fatalf("%d rows, %v", rows, err)
		}
	}
	b.ReportMetric(Summarize(times).Median*1000, "scan-ms")
	b.ReportMetric(Summarize(cpu).Median*1000, "cpu-ms")
	b.ReportMetric(float64(fi.Size())/(1<<20), "MiB")
}

// cpuSeconds is the CPU time (user and system) the process used so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
