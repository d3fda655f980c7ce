package lakehouse_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/testing/race"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// putBytes counts the bytes a store's Puts write: the Iceberg versions
// (which list every snapshot until an expiry drops them) apart.
type putBytes struct {
	store.Store
	n, versions atomic.Int64
}

func (p *putBytes) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	if _, ok := lakehouse.VersionOfKey(key); ok {
		p.versions.Add(int64(len(data)))
	} else {
		p.n.Add(int64(len(data)))
	}
	return p.Store.Put(ctx, key, data, opts)
}

// appendPublish appends a run of one file to part and publishes it through
// pub the way the facade does after an append (no manifest in hand: the
// publish reads the generation's head). It returns the publish's time.
func appendPublish(t testing.TB, st, pub store.Store, part string, i int) time.Duration {
	t.Helper()
	run := fmt.Sprintf("run-%d", i)
	res := commit(t, st, part, 3, run, swap.Options{Append: true, RunID: run})
	t0 := time.Now()
	r, err := lakehouse.PublishCommit(ctx, pub, lakehouse.Commit{Partition: part, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
	d := time.Since(t0)
	if err != nil || !r.Changed {
		t.Fatalf("publish of append %d: %+v %v", i, r, err)
	}
	return d
}

// icebergPlan is what a plan of the latest version finds: the current
// snapshot's summary, the manifests it opens, and its files and rows.
func icebergPlan(t testing.TB, st store.Store) (summary map[string]string, manifests, files int, rows int64) {
	t.Helper()
	loc, _, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, icebergIO(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := tbl.CurrentSnapshot()
	fs, err := icebergIO(st)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := snap.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, task := range tasks {
		if seen[task.File.FilePath()] {
			t.Fatalf("the plan lists %s twice", task.File.FilePath())
		}
		seen[task.File.FilePath()] = true
		rows += task.File.Count()
	}
	summary = maps.Clone(snap.Summary.Properties)
	summary["operation"] = string(snap.Summary.Operation)
	return summary, len(mfs), len(tasks), rows
}

func median[T int | int64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestAppendPublishCostFlat: with the Iceberg publish on, the publish of
// the 1,000th append to a partition costs what the publish of the 2nd
// does: its requests and the bytes it writes (medians over appends 2-51
// and 951-1000), and its time (logged, with 30 interleaved pairs: the
// 2nd append to a fresh partition, the next to the deep one). Every
// append's snapshot is an append that adds the run's file and deletes
// nothing, and a plan after the last finds every file once. Snapshots
// are expired every 10 appends, as a maintained table's are. With
// PSWAP_APPEND_COST_S3=1 it also runs on MinIO; PSWAP_APPEND_COST_N
// changes the number of appends (default 1,000; 200 under -race, whose
// late window then follows the 151st: see race.Share).
func TestAppendPublishCostFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 appends")
	}
	n := race.Share(1000, 200)
	if v, err := strconv.Atoi(os.Getenv("PSWAP_APPEND_COST_N")); err == nil && v > 2*50 {
		n = v
	}
	const window = 50
	// Snapshots are expired every expireEvery appends (0: never,
	// PSWAP_APPEND_COST_EXPIRE=0): without an expiry the version lists
	// every snapshot, 660 KB after 1,000 appends, which every publish
	// reads and writes whatever it publishes.
	expireEvery := 10
	if v, err := strconv.Atoi(os.Getenv("PSWAP_APPEND_COST_EXPIRE")); err == nil && v >= 0 {
		expireEvery = v
	}
	run := func(t *testing.T, st store.Store) {
		pb := &putBytes{Store: st}
		c := storetest.NewCounting(pb)
		part := "dt=2026-11-29"
		times := make([]time.Duration, n)
		reqs := make([]int, n)
		written, versions := make([]int64, n), make([]int64, n)
		for i := range n {
			if expireEvery > 0 && i%expireEvery == 0 && i > 0 {
				// A maintained table (pswap gc expires snapshots): the
				// version's snapshot list stays short, as in production,
				// and what is left is the publish's own cost.
				if _, err := lakehouse.Expire(ctx, st, lakehouse.ExpireOptions{Retention: time.Millisecond, MinAge: 24 * time.Hour}); err != nil {
					t.Fatal(err)
				}
			}
			c.Reset()
			pb.n.Store(0)
			pb.versions.Store(0)
			times[i] = appendPublish(t, st, c, part, i)
			reqs[i], written[i], versions[i] = c.Total(), pb.n.Load(), pb.versions.Load()
			if i == 1 || i == n-1 {
				t.Logf("publish of append #%d: %v, %d bytes of manifests and list written, %d of version", i+1, c.Counts(), written[i], versions[i])
			}
			if i > 0 && (i%97 == 0 || i == n-1) {
				sum, _, files, _ := icebergPlan(t, st)
				if sum["operation"] != "append" || sum["deleted-data-files"] != "0" || sum["added-data-files"] != "1" {
					t.Fatalf("append #%d: snapshot %v, want an append of one file that deletes nothing", i+1, sum)
				}
				if files != i+1 {
					t.Fatalf("append #%d: the plan finds %d files", i+1, files)
				}
			}
		}
		sum, mfs, files, rows := icebergPlan(t, st)
		if files != n || rows != int64(3*n) {
			t.Fatalf("after %d appends the plan finds %d files, %d rows; want %d, %d (%v)", n, files, rows, n, 3*n, sum)
		}
		early, late := times[1:1+window], times[n-window:]
		rq := float64(median(reqs[n-window:])) / float64(median(reqs[1:1+window]))
		by := float64(median(written[n-window:])) / float64(median(written[1:1+window]))
		tm := float64(median(late)) / float64(median(early))
		t.Logf("publish medians: requests %d -> %d (x%.2f), bytes of manifests and list written %d -> %d (x%.2f), of the version %d -> %d, time %v -> %v (x%.2f); a plan after %d appends opens %d manifests",
			median(reqs[1:1+window]), median(reqs[n-window:]), rq, median(written[1:1+window]), median(written[n-window:]), by,
			median(versions[1:1+window]), median(versions[n-window:]),
			median(early), median(late), tm, n, mfs)
		pairs := 28
		if os.Getenv("PSWAP_APPEND_COST_DIR") != "" {
			pairs = 0 // the table as 1,000 appends leave it, for the engines to plan
		}
		fresh, deep := make([]time.Duration, pairs), make([]time.Duration, pairs)
		for k := range pairs {
			if expireEvery > 0 {
				if _, err := lakehouse.Expire(ctx, st, lakehouse.ExpireOptions{Retention: time.Millisecond, MinAge: 24 * time.Hour}); err != nil {
					t.Fatal(err)
				}
			}
			fp := fmt.Sprintf("dt=2026-11-%02d", 1+k) // of the deep one's month: no merge into a cold manifest
			appendPublish(t, st, st, fp, 0)
			fresh[k] = appendPublish(t, st, st, fp, 1)
			deep[k] = appendPublish(t, st, st, part, n+k)
		}
		if pairs > 0 {
			t.Logf("interleaved, %d pairs: median publish of a 2nd append %v, of appends #%d-#%d %v (x%.2f)",
				pairs, median(fresh), n+1, n+pairs, median(deep), float64(median(deep))/float64(median(fresh)))
		}
		if rq > 1.5 || by > 2 {
			t.Fatalf("the publish of the %d-th append costs x%.2f the requests, x%.2f the bytes of the 2nd's", n, rq, by)
		}
	}
	t.Run("mem", func(t *testing.T) { run(t, memstore.New()) })
	t.Run("file", func(t *testing.T) {
		// A table to plan with the engines afterwards (their manifests
		// opened by a one-partition query).
		dir := os.Getenv("PSWAP_APPEND_COST_DIR")
		if dir == "" {
			t.Skip("PSWAP_APPEND_COST_DIR=<an empty folder>")
		}
		st, err := filestore.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		run(t, st)
	})
	t.Run("s3", func(t *testing.T) {
		if !testenv.S3Enabled() || os.Getenv("PSWAP_APPEND_COST_S3") == "" {
			t.Skip("PSWAP_APPEND_COST_S3=1 and MinIO")
		}
		run(t, testenv.S3(t))
	})
}
