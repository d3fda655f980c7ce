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
	"github.com/pswap/pswap/internal/testing/race"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// appendCost is one Delta publish of an append: its requests, the bytes
// its GETs read and its PUTs wrote, its time, and whether it wrote a
// checkpoint.
type appendCost struct {
	reqs, bytes int64
	logBytes    int64 // of the bytes, those of the Delta log and table.json
	took        time.Duration
	checkpoint  bool
}

// appendRow appends row to part with run id run and commits it (no
// publish): the append every test of the tail's publish starts from.
func appendRow(t *testing.T, tbl *pswap.Table, part, run string, row sale) pswap.Result {
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
	if err := pswap.Write(w, row); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// commitOf is the Delta publish's view of a commit's result.
func commitOf(res pswap.Result) deltalog.Commit {
	return deltalog.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: res.Manifest}
}

// appendAndPublish appends one row to part with run id run and publishes
// the Delta log of that commit alone, measured on c.
func appendAndPublish(t *testing.T, tbl *pswap.Table, c *counting, part, run string, row int64) (appendCost, deltalog.Result) {
	t.Helper()
	ctx := context.Background()
	res := appendRow(t, tbl, part, run, sale{row, "x", 1})
	c.reset()
	t0 := time.Now()
	r, err := deltalog.PublishCommit(ctx, c, commitOf(res), deltalog.Options{})
	took := time.Since(t0)
	if err != nil || !r.Changed || r.CheckpointErr != nil {
		t.Fatalf("append %s to %s: %+v, %v", run, part, r, err)
	}
	return appendCost{reqs: c.total(), bytes: c.read.Load() + c.written.Load(), logBytes: c.logBytes.Load(), took: took, checkpoint: r.Checkpoint}, r
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
// (default 1,000; 200 under -race, whose late window then follows the
// 101st-150th: see race.Share); with PSWAP_APPEND_COST_S3=1 it also runs
// on MinIO.
func TestAppendDeltaCost(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of appends")
	}
	n := race.Share(1000, 200)
	if v, err := strconv.Atoi(os.Getenv("PSWAP_DELTA_APPENDS")); err == nil && v > 100 {
		n = v
	}
	const window, pairs = 50, 40
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
		logEqualsPointers(t, st)
		series := func(from, to int, f func(appendCost) int64) []int64 {
			var out []int64
			for _, c := range costs[from:to] {
				out = append(out, f(c))
			}
			return out
		}
		reqs := func(c appendCost) int64 { return c.reqs }
		logBytes := func(c appendCost) int64 { return c.logBytes }
		manBytes := func(c appendCost) int64 { return c.bytes - c.logBytes }
		took := func(c appendCost) int64 { return int64(c.took) }
		// early: appends 2-51; mid: 101-150 (the manifests are heads with
		// segments from the 33rd append on, the log has checkpoints from
		// the 10th version on); late: the last 50.
		early, mid, late := [2]int{1, 1 + window}, [2]int{100, 100 + window}, [2]int{n - window, n}
		med := func(w [2]int, f func(appendCost) int64) int64 { return median(series(w[0], w[1], f)) }
		rq0, rqm, rq1 := med(early, reqs), med(mid, reqs), med(late, reqs)
		lb0, lb1 := med(early, logBytes), med(late, logBytes)
		mb0, mbm, mb1 := med(early, manBytes), med(mid, manBytes), med(late, manBytes)
		tm0, tm1 := time.Duration(med(early, took)), time.Duration(med(late, took))
		t.Logf("Delta publish medians, appends 2-%d, %d-%d and %d-%d: requests %d, %d, %d; bytes of the log and table.json read and written %d -> %d (x%.2f); of the manifests read %d, %d, %d; time %v -> %v (x%.2f)",
			1+window, mid[0]+1, mid[1], n-window+1, n, rq0, rqm, rq1, lb0, lb1, float64(lb1)/float64(lb0), mb0, mbm, mb1, tm0, tm1, float64(tm1)/float64(tm0))
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
			fp := fmt.Sprintf("dt=2026-%02d-%02d", 1+k/28, 1+k%28)
			appendAndPublish(t, tbl, c, fp, "fresh-0", 0)
			f, _ := appendAndPublish(t, tbl, c, fp, "fresh-1", 1)
			d, _ := appendAndPublish(t, tbl, c, part, fmt.Sprintf("run-%d", n+k), int64(n+k))
			fresh[k], deep[k] = f.took, d.took
		}
		t.Logf("interleaved, %d pairs: median publish of a 2nd append %v, of appends #%d-#%d %v (x%.2f)",
			pairs, median(fresh), n+1, n+pairs, median(deep), float64(median(deep))/float64(median(fresh)))
		// Flat: from the 101st append on, the same requests; against
		// the 2nd, one more (the head GET: a commit's result carries no
		// head). The log's bytes within 5% (longer run ids and sequence
		// numbers), the manifests' within 50% of the 101st's (a head
		// holds up to 15 segment references a level).
		if rq1 > rqm || rq1 > rq0+1 || float64(lb1) > 1.05*float64(lb0) || float64(mb1) > 1.5*float64(mbm) {
			t.Fatalf("the Delta publish of the %d-th append is not flat: requests %d against %d (2nd) and %d (101st); bytes of the log x%.2f the 2nd's, of the manifests x%.2f the 101st's",
				n, rq1, rq0, rqm, float64(lb1)/float64(lb0), float64(mb1)/float64(mbm))
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
