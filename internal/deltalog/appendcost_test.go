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
	"github.com/pswap/pswap/store/memstore"
)

// TestAppendDeltaCost measures the Delta publish of appends to one
// partition (400 by default, PSWAP_DELTA_APPENDS): its requests and time
// at the 2nd and the last appends (medians of 50), logged, and the last
// version's number (one per append). The Delta publish is not flat in the
// partition: it reads the generation's manifest
// expanded (a GET per 32 files) and replays the log's state (the
// checkpoint lists every file), and a checkpoint every 10 versions writes
// every file: what remains for a flat Delta publish of an append.
func TestAppendDeltaCost(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of appends")
	}
	n := 400
	if v, err := strconv.Atoi(os.Getenv("PSWAP_DELTA_APPENDS")); err == nil && v > 100 {
		n = v
	}
	ctx := context.Background()
	c := &counting{Store: memstore.New()}
	tbl := pswap.NewTable(c)
	p, err := tbl.Partition("dt=2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]int64, n)
	times := make([]time.Duration, n)
	for i := range n {
		run := fmt.Sprintf("run-%d", i)
		w, err := p.Append(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: run}})
		if err != nil {
			t.Fatal(err)
		}
		if err := pswap.Write(w, sale{int64(i), "x", 1}); err != nil {
			t.Fatal(err)
		}
		res, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.reset()
		t0 := time.Now()
		r, err := deltalog.PublishCommit(ctx, c, deltalog.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: res.Manifest}, deltalog.Options{})
		times[i] = time.Since(t0)
		reqs[i] = c.gets.Load() + c.puts.Load() + c.lists.Load()
		if err != nil || r.Version != int64(i) {
			t.Fatalf("append %d: version %d, %v", i, r.Version, err)
		}
		if i == 1 || i == n-1 {
			t.Logf("Delta publish of append #%d: %s, %v (version %d)", i+1, c, times[i], r.Version)
		}
	}
	med := func(v []time.Duration) time.Duration { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	medi := func(v []int64) int64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	t.Logf("Delta publish medians: requests %d -> %d, time %v -> %v (x%.2f), appends 2-51 and %d-%d",
		medi(reqs[1:51]), medi(reqs[n-50:]), med(times[1:51]), med(times[n-50:]), float64(med(times[n-50:]))/float64(med(times[1:51])), n-49, n)
}
