//go:build unix

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/testing/srcdir"
)

// TestMergeVsRewrite measures `pswap merge` of 100,000 changed rows
// (50,000 updates spread over the partition, 50,000 inserts) into a
// partition of PSWAP_BENCH_MERGE_ROWS rows (e.g. 10000000) against a
// commit that rewrites the partition from scratch with the same result
// (what a user without merge does after merging by hand): wall time and
// peak RSS of each process, in the same run, on a local table. Skipped
// unless the variable is set.
func TestMergeVsRewrite(t *testing.T) {
	n, _ := strconv.ParseInt(os.Getenv("PSWAP_BENCH_MERGE_ROWS"), 10, 64)
	if n <= 0 {
		t.Skip("set PSWAP_BENCH_MERGE_ROWS (e.g. 10000000) to measure merge against a full rewrite")
	}
	const updates, inserts = 50_000, 50_000
	dir := t.TempDir()
	bin := filepath.Join(dir, "pswap")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", bin, "./cmd/pswap")
	build.Dir = filepath.Dir(srcdir.Of(file))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	stride := n / updates
	updated := func(s Sale) Sale { s.Amount += 1000; s.City = "Updated"; return s }
	write := func(name string, count int64, at func(i int64) Sale) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[Sale](f, parquet.MaxRowsPerRowGroup(122_880))
		buf := make([]Sale, 0, 65_536)
		for i := range count {
			buf = append(buf, at(i))
			if len(buf) == cap(buf) || i == count-1 {
				if _, err := w.Write(buf); err != nil {
					t.Fatal(err)
				}
				buf = buf[:0]
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.parquet", n, SaleAt)
	changes := write("changes.parquet", updates+inserts, func(i int64) Sale {
		if i < updates {
			return updated(SaleAt(i * stride))
		}
		return SaleAt(n + i - updates)
	})
	merged := write("rewrite.parquet", n+inserts, func(i int64) Sale {
		if i < n && i%stride == 0 && i/stride < updates {
			return updated(SaleAt(i))
		}
		return SaleAt(i)
	})
	table := filepath.Join(dir, "lake", "sales")
	cpu := map[string]time.Duration{}
	run := func(what string, args ...string) (time.Duration, int64, map[string]any) {
		cmd := exec.Command(bin, append(args, "--table", table, "--json")...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, errb.String())
		}
		d := time.Since(t0)
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
		cpu[what] = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v: %s", what, err, out.String())
		}
		return d, rss, doc
	}
	const part = "dt=2026-11-29"
	d0, r0, _ := run("initial commit", "commit", "--partition", part, "--run-id", "base", base)
	dm, rm, doc := run("merge", "merge", "--partition", part, "--key", "id", "--run-id", "merge", changes)
	parts := doc["partitions"].([]any)
	if rows := parts[0].(map[string]any)["rows"].(float64); int64(rows) != n+inserts {
		t.Fatalf("the merge holds %v rows, want %d", rows, n+inserts)
	}
	dr, rr, doc := run("rewrite", "commit", "--partition", part, "--run-id", "rewrite", merged)
	if doc["outcome"] != "identical" {
		// The rewrite's content is the merge's: the same rows, so the
		// commit finds it identical (after reading every row).
		t.Logf("rewrite outcome %v (the merge's rows and the rewrite's differ?)", doc["outcome"])
	}
	mb := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	t.Logf("partition of %d rows, %d changed rows (%d updates, %d inserts), GOMAXPROCS %d", n, updates+inserts, updates, inserts, runtime.GOMAXPROCS(0))
	t.Logf("initial commit of %d rows: %s (CPU %s), peak RSS %s", n, d0.Round(time.Millisecond), cpu["initial commit"].Round(time.Millisecond), mb(r0))
	t.Logf("merge: %s (CPU %s), peak RSS %s", dm.Round(time.Millisecond), cpu["merge"].Round(time.Millisecond), mb(rm))
	t.Logf("rewrite (commit of the merged %d rows): %s (CPU %s), peak RSS %s (outcome %v)", n+inserts, dr.Round(time.Millisecond), cpu["rewrite"].Round(time.Millisecond), mb(rr), doc["outcome"])
	t.Logf("merge / rewrite: time %.2f, CPU %.2f, peak RSS %.2f", dm.Seconds()/dr.Seconds(), cpu["merge"].Seconds()/cpu["rewrite"].Seconds(), float64(rm)/float64(rr))
}
