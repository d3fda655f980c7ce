package deltalog_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// appendCost is one Delta publish of an append: its requests, the bytes
// its GETs read and its PUTs wrote, its time, and whether it wrote a
// checkpoint.
type appendCost struct {
	reqs, bytes int64
	took        time.Duration
	checkpoint  bool
}

// appendAndPublish appends one row to part with run id run and publishes
// the Delta log of that commit alone, measured on c.
func appendAndPublish(t *testing.T, tbl *pswap.Table, c *counting, part, run string, row int64) (appendCost, deltalog.Result) {
	t.Helper()
	ctx := context.Background()
	p, err := tbl.Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Append(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: run}})
	if err != nil {
		t.Fatal(err)
	}
	if err := pswap.Write(w, sale{row, "x", 1}); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.reset()
	t0 := time.Now()
	r, err := deltalog.PublishCommit(ctx, c, deltalog.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: res.Manifest}, deltalog.Options{})
	took := time.Since(t0)
	if err != nil || !r.Changed || r.CheckpointErr != nil {
		t.Fatalf("append %s to %s: %+v, %v", run, part, r, err)
	}
	return appendCost{reqs: c.total(), bytes: c.read.Load() + c.written.Load(), took: took, checkpoint: r.Checkpoint}, r
}

func median[T int64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestAppendDeltaCost: the Delta publish of the 1,000th append to one
// partition costs what the publish of the 2nd does: its requests and
// the bytes it reads and writes (medians over appends 2-51 and the last
// 50: each window holds five versions that write a checkpoint), and its
// time (logged: medians, and interleaved pairs of the 2nd append to a
// fresh partition and the next to the deep one, at the same load). A
// checkpoint (every 10th version) writes every file of the table, as
// Delta's own writers do: its cost is logged apart. Every append's
// version adds the run's file alone, and the last version's state names
// every file once. PSWAP_DELTA_APPENDS changes the number of appends
// (default 1,000); with PSWAP_APPEND_COST_S3=1 it also runs on MinIO.
func TestAppendDeltaCost(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of appends")
	}
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("PSWAP_DELTA_APPENDS")); err == nil && v > 100 {
		n = v
	}
	const window, pairs = 50, 20
	run := func(t *testing.T, st store.Store) {
		ctx := context.Background()
		c := &counting{Store: st}
		tbl := pswap.NewTable(c)
		part := "dt=2026-11-29"
		costs := make([]appendCost, n)
		for i := range n {
			var r deltalog.Result
			costs[i], r = appendAndPublish(t, tbl, c, part, fmt.Sprintf("run-%d", i), int64(i))
			if r.Version != int64(i) {
				t.Fatalf("append %d: version %d", i, r.Version)
			}
			if i == 1 || i == n-1 {
				t.Logf("Delta publish of append #%d: %s, %d bytes read, %d written, %v (version %d)", i+1, c, c.read.Load(), c.written.Load(), costs[i].took, r.Version)
			}
		}
		// The last version adds the run's file alone, and the log names
		// every file of the partition once.
		data, _, err := store.ReadAll(ctx, st, deltalog.CommitKey(int64(n-1)))
		if err != nil {
			t.Fatal(err)
		}
		acts, err := deltalog.DecodeCommit(data)
		if err != nil {
			t.Fatal(err)
		}
		adds, removes := 0, 0
		for _, a := range acts {
			if a.Add != nil {
				adds++
			}
			if a.Remove != nil {
				removes++
			}
		}
		if adds != 1 || removes != 0 {
			t.Fatalf("the last append's version has %d adds, %d removes; want 1, 0", adds, removes)
		}
		s, err := deltalog.Load(ctx, st)
		if err != nil || len(s.Files) != n {
			t.Fatalf("after %d appends the log names %d files (%v)", n, len(s.Files), err)
		}
		series := func(from, to int, f func(appendCost) int64) []int64 {
			var out []int64
			for _, c := range costs[from:to] {
				out = append(out, f(c))
			}
			return out
		}
		reqs := func(c appendCost) int64 { return c.reqs }
		bytes := func(c appendCost) int64 { return c.bytes }
		took := func(c appendCost) int64 { return int64(c.took) }
		early, late := [2]int{1, 1 + window}, [2]int{n - window, n}
		rq0, rq1 := median(series(early[0], early[1], reqs)), median(series(late[0], late[1], reqs))
		by0, by1 := median(series(early[0], early[1], bytes)), median(series(late[0], late[1], bytes))
		tm0, tm1 := time.Duration(median(series(early[0], early[1], took))), time.Duration(median(series(late[0], late[1], took)))
		t.Logf("Delta publish medians, appends 2-%d and %d-%d: requests %d -> %d, bytes read and written %d -> %d (x%.2f), time %v -> %v (x%.2f)",
			1+window, n-window+1, n, rq0, rq1, by0, by1, float64(by1)/float64(by0), tm0, tm1, float64(tm1)/float64(tm0))
		for _, w := range [][2]int{early, late} {
			var cps []appendCost
			for _, c := range costs[w[0]:w[1]] {
				if c.checkpoint {
					cps = append(cps, c)
				}
			}
			if len(cps) > 0 {
				last := cps[len(cps)-1]
				t.Logf("appends %d-%d: %d checkpoints; the last: %d requests, %d bytes, %v", w[0]+1, w[1], len(cps), last.reqs, last.bytes, last.took)
			}
		}
		// Pairs at the same load: the 2nd append to a fresh partition,
		// then the next append to the deep one.
		fresh, deep := make([]time.Duration, pairs), make([]time.Duration, pairs)
		for k := range pairs {
			fp := fmt.Sprintf("dt=2026-10-%02d", 1+k)
			appendAndPublish(t, tbl, c, fp, "fresh-0", 0)
			f, _ := appendAndPublish(t, tbl, c, fp, "fresh-1", 1)
			d, _ := appendAndPublish(t, tbl, c, part, fmt.Sprintf("run-%d", n+k), int64(n+k))
			fresh[k], deep[k] = f.took, d.took
		}
		t.Logf("interleaved, %d pairs: median publish of a 2nd append %v, of appends #%d-#%d %v (x%.2f)",
			pairs, median(fresh), n+1, n+pairs, median(deep), float64(median(deep))/float64(median(fresh)))
		// Flat: the same requests, and bytes within 25% (the manifest
		// head and its parent's hold up to 15 segment references a
		// level; the log's entries name longer run ids and sequence
		// numbers).
		if rq1 > rq0 || float64(by1) > 1.25*float64(by0) {
			t.Fatalf("the Delta publish of the %d-th append costs x%.2f the requests, x%.2f the bytes of the 2nd's (%d -> %d requests, %d -> %d bytes)",
				n, float64(rq1)/float64(rq0), float64(by1)/float64(by0), rq0, rq1, by0, by1)
		}
	}
	t.Run("mem", func(t *testing.T) { run(t, memstore.New()) })
	t.Run("s3", func(t *testing.T) {
		if !testenv.S3Enabled() || os.Getenv("PSWAP_APPEND_COST_S3") == "" {
			t.Skip("PSWAP_APPEND_COST_S3=1 and MinIO")
		}
		run(t, testenv.S3(t))
	})
}
