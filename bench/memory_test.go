package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
)

// envMemChild makes TestMemChild write "ROWS" or "ROWS,TARGETFILESIZE"
// and report its peak memory: the child process of the memory section.
const envMemChild = "PSWAP_BENCH_MEMCHILD"

// The buffer budget of the memory runs: one row group buffered by the
// encoder, Concurrency+1 parts in the S3 writer, the 1 MiB write buffer
// between them.
var memOptions = staging.Options{
	RowGroupBytes: 4 << 20,
	Writer:        store.WriterOptions{PartSize: 5 << 20, Concurrency: 2},
}

// smallFiles is the target file size of the runs with many files.
const smallFiles = 6 << 20

// memBudget is the memory memOptions allow for buffered data.
func memBudget() int64 {
	return memOptions.RowGroupBytes + int64(memOptions.Writer.Concurrency+1)*memOptions.Writer.PartSize + 1<<20
}

// memResult is what the child reports.
type memResult struct {
	Rows      int64   `json:"rows"`
	Bytes     int64   `json:"bytes"`
	Files     int     `json:"files"`
	PeakRSS   int64   `json:"peak_rss"`
	BaseRSS   int64   `json:"base_rss"`  // peak RSS before the write began
	HeapPeak  uint64  `json:"heap_peak"` // heap objects, live or not yet collected
	Seconds   float64 `json:"seconds"`
	GCCycles  uint64  `json:"gc_cycles"`
	TotalHeap uint64  `json:"total_alloc"`
}

// TestMemChild is the child process of the memory section; it runs only
// when the parent sets PSWAP_BENCH_MEMCHILD.
func TestMemChild(t *testing.T) {
	v := os.Getenv(envMemChild)
	if v == "" {
		t.Skip("child process of TestReport's memory section")
	}
	rowsArg, targetArg, _ := strings.Cut(v, ",")
	n, err := strconv.ParseInt(rowsArg, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	opts := memOptions
	if targetArg != "" {
		if opts.TargetFileSize, err = strconv.ParseInt(targetArg, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	e := newS3Env(t)
	tbl, err := e.table(ctx, "memory")
	if err != nil {
		t.Fatal(err)
	}
	base, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	// Sample the live heap while writing: its maximum, next to the RSS peak.
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	w, err := writeSales(ctx, tbl, e, "dt=2026-11-29", n, pswap.WriteOptions{Staging: opts})
	if err != nil {
		t.Fatal(err)
	}
	close(stop)
	heapPeak := <-done
	peak, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out, _ := json.Marshal(memResult{
		Rows: w.res.Rows, Bytes: w.res.Bytes, Files: w.res.Files, PeakRSS: peak, BaseRSS: base,
		HeapPeak: heapPeak, Seconds: w.dur.Seconds(), GCCycles: uint64(ms.NumGC), TotalHeap: ms.TotalAlloc,
	})
	fmt.Printf("MEMRESULT %s\n", out)
}

// runMemChild runs TestMemChild in a fresh process writing n rows in
// files of about target bytes (0: the default).
func runMemChild(ctx context.Context, n, target int64) (memResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return memResult{}, err
	}
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestMemChild$", "-test.count=1")
	arg := fmt.Sprint(n)
	if target > 0 {
		arg += fmt.Sprintf(",%d", target)
	}
	cmd.Env = append(os.Environ(), envMemChild+"="+arg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return memResult{}, fmt.Errorf("memory child: %w: %s%s", err, stdout.String(), stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if js, ok := strings.CutPrefix(sc.Text(), "MEMRESULT "); ok {
			var m memResult
			if err := json.Unmarshal([]byte(js), &m); err != nil {
				return memResult{}, err
			}
			return m, nil
		}
	}
	return memResult{}, fmt.Errorf("memory child printed no result: %s", stdout.String())
}

// memory writes partitions of about 2x, 8x and 32x the buffer budget,
// each in a fresh process, and reports their peak RSS: it must stay
// bounded and not grow with the partition.
func (r *reporter) memory() {
	ctx := r.ctx
	budget := memBudget()
	r.printf("\n## 7. Peak memory\n\nBuffer budget: %s (row group %s + (%d+1) parts of %s + 1 MiB write buffer). Each size runs in a fresh process.\n",
		mib(budget), mib(memOptions.RowGroupBytes), memOptions.Writer.Concurrency, mib(memOptions.Writer.PartSize))
	// Size the partitions from the bytes per row of a small run.
	probe, err := runMemChild(ctx, 200_000, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	perRow := float64(probe.Bytes) / float64(probe.Rows)
	tb := &Table{Header: []string{"partition", "rows", "Parquet", "files", "peak RSS", "peak RSS before writing", "peak heap", "allocated in all", "GC cycles", "seconds"}}
	add := func(label string, m memResult) {
		tb.Add(label, fmt.Sprint(m.Rows), mib(m.Bytes), fmt.Sprint(m.Files), mib(m.PeakRSS), mib(m.BaseRSS),
			mib(int64(m.HeapPeak)), mib(int64(m.TotalHeap)), fmt.Sprint(m.GCCycles), fmt.Sprintf("%.1f", m.Seconds))
	}
	add("probe", probe)
	var peaks []int64
	for _, x := range []int64{2, 8, 32} {
		n := int64(float64(x*budget) / perRow)
		m, err := runMemChild(ctx, n, 0)
		if err != nil {
			r.t.Fatal(err)
		}
		add(fmt.Sprintf("%.1fx budget", float64(m.Bytes)/float64(budget)), m)
		peaks = append(peaks, m.PeakRSS)
	}
	// The same with many small files: the growth per file levels off.
	var small []int64
	for _, x := range []int64{8, 32} {
		n := int64(float64(x*budget) / perRow)
		m, err := runMemChild(ctx, n, smallFiles)
		if err != nil {
			r.t.Fatal(err)
		}
		add(fmt.Sprintf("%.1fx budget, %s files", float64(m.Bytes)/float64(budget), mib(smallFiles)), m)
		small = append(small, m.PeakRSS)
	}
	r.table(tb)
	r.printf("Peak RSS relative to the 2x partition: 8x %.2f, 32x %.2f (1.00 = independent of partition size). "+
		"Peak heap counts garbage not yet collected: every new file allocates fresh encoder buffers, so the peak "+
		"rises with the number of files until the garbage collector's goal (about twice the live heap) caps it: "+
		"in files of %s, 32x / 8x = %.2f.\n",
		float64(peaks[1])/float64(peaks[0]), float64(peaks[2])/float64(peaks[0]), mib(smallFiles), float64(small[1])/float64(small[0]))
}
