package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/duckcheck"
)

// Variables of the report.
const (
	envReport = "PSWAP_BENCH"        // "1" runs TestReport
	envRounds = "PSWAP_BENCH_ROUNDS" // rounds per comparison (default 3)
	envOnly   = "PSWAP_BENCH_ONLY"   // comma-separated sections (default all)
	envOut    = "PSWAP_BENCH_OUT"    // also write the report to this file
	envPswap  = "PSWAP_BENCH_PSWAP"  // the pswap CLI binary (default: built)
	envS3Put  = "PSWAP_BENCH_S3PUT"  // the s3put binary (default: built)
	envCode   = "PSWAP_BENCH_CODE"   // which code is measured (run.sh: git commit and dirty folders)
)

// sections of the report, in order.
var sections = []struct {
	name string
	run  func(r *reporter)
}{
	{"e2e", (*reporter).endToEnd},
	{"cli", (*reporter).commitFile},
	{"commit", (*reporter).commitOverhead},
	{"parallel", (*reporter).parallel},
	{"memory", (*reporter).memory},
}

// reporter collects the report's Markdown.
type reporter struct {
	t      *testing.T
	ctx    context.Context
	e      *s3env
	rounds int
	rows   int64
	out    strings.Builder
	tmp    string

	// Set by endToEnd, used by commitFile: DuckDB's Parquet file of the rows.
	duckFile string
}

func (r *reporter) printf(format string, args ...any) { fmt.Fprintf(&r.out, format, args...) }

func (r *reporter) table(tb *Table) {
	r.out.WriteString("\n")
	tb.Write(&r.out)
	r.out.WriteString("\n")
}

// TestReport runs every comparison of the benchmark round by round and
// prints a Markdown report. It runs only with PSWAP_BENCH=1 and an S3
// server (bench/run.sh sets both up).
func TestReport(t *testing.T) {
	if os.Getenv(envReport) != "1" {
		t.Skip("the benchmark report runs with " + envReport + "=1 (see bench/run.sh)")
	}
	r := &reporter{
		t:      t,
		ctx:    context.Background(),
		e:      newS3Env(t),
		rounds: 5,
		rows:   rowsOr(5_000_000),
		tmp:    t.TempDir(),
	}
	if v, err := strconv.Atoi(os.Getenv(envRounds)); err == nil && v > 0 {
		r.rounds = v
	}
	only := map[string]bool{}
	for _, s := range strings.Split(os.Getenv(envOnly), ",") {
		if s = strings.TrimSpace(s); s != "" {
			only[s] = true
		}
	}
	r.printf("# pswap benchmark report\n\n%s\n", machine())
	if code := os.Getenv(envCode); code != "" {
		r.printf("Code: %s.\n\n", code)
	}
	r.printf("Rows: %d sales rows; %d rounds per comparison; ratios are per round (both sides measured back to back), shown as median (min–max).\n", r.rows, r.rounds)
	for _, s := range sections {
		if len(only) > 0 && !only[s.name] {
			continue
		}
		start := time.Now()
		s.run(r)
		t.Logf("section %s: %s", s.name, time.Since(start).Round(time.Millisecond))
	}
	fmt.Print(r.out.String())
	if path := os.Getenv(envOut); path != "" {
		if err := os.WriteFile(path, []byte(r.out.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// machine describes where the numbers come from.
func machine() string {
	mem := "unknown"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
					mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("Machine: %d CPUs (%s), %s memory, %s %s/%s, load average at start %s.\n",
		runtime.NumCPU(), cpu, mem, runtime.Version(), runtime.GOOS, runtime.GOARCH, load)
}

// rotate returns the order of n steps for round i, so that no step always
// runs first (a cold cache) or last.
func rotate(n, i int) []int {
	o := make([]int, n)
	for k := range o {
		o[k] = (k + i) % n
	}
	return o
}

// mib formats bytes in MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// reqString renders request counts as "GetObject 1, PutObject 2".
func reqString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// binary returns the path of a tool: from the environment, or built now.
func (r *reporter) binary(env, pkg string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	out := filepath.Join(r.tmp, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("build %s: %v", pkg, err)
	}
	return out
}

func (r *reporter) needPolars() bool {
	if err := polarsAvailable(); err != nil {
		r.printf("\n_Polars unavailable (%v): its rows skipped._\n", err)
		return false
	}
	return true
}

func (r *reporter) needDuckDB() bool {
	if err := duckcheck.Available(); err != nil {
		r.printf("\n_DuckDB unavailable (%v): naive pipeline skipped._\n", err)
		return false
	}
	return true
}
