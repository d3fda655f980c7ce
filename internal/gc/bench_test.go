package gc_test

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// populate writes parts partitions of gens generations each, one small data
// file per generation, straight to the store (what commits would leave).
func populate(b testing.TB, st store.Store, parts, gens int) {
	b.Helper()
	var wg sync.WaitGroup
	work := make(chan int)
	var failed atomic.Bool
	for range 32 {
		wg.Go(func() {
			for p := range work {
				if err := populatePartition(st, fmt.Sprintf("dt=2026-01-01/hr=%04d", p), gens); err != nil && !failed.Swap(true) {
					b.Error(err)
				}
			}
		})
	}
	for p := range parts {
		work <- p
	}
	close(work)
	wg.Wait()
	if failed.Load() {
		b.FailNow()
	}
}

func populatePartition(st store.Store, part string, gens int) error {
	now := time.Now().UTC()
	parent := ""
	var m *manifest.Manifest
	var ptr *manifest.Pointer
	for g := range gens {
		gen := manifest.NewGenerationID()
		body := fmt.Appendf(nil, "%s generation %d", part, g)
		if _, err := st.Put(ctx, layout.DataPrefix(part, gen)+"part-00000.parquet", body, store.PutOptions{}); err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		m = &manifest.Manifest{Partition: part, Generation: gen, Parent: parent, CreatedAt: now, CommittedAt: now, Writer: "bench", DataLayout: manifest.DataLayoutTable}
		m.Content.Add(manifest.File{Path: "part-00000.parquet", Size: int64(len(body)), Rows: 1, Checksum: manifest.SHA256Checksum(sum[:])})
		m.ContentChecksum = manifest.SHA256Checksum(sum[:])
		data, err := manifest.Encode(m)
		if err != nil {
			return err
		}
		if _, err := st.Put(ctx, layout.ManifestKey(part, gen), data, store.PutOptions{}); err != nil {
			return err
		}
		parent = gen
		ptr = m.PointerAfter(ptr) // with the history commits give it
	}
	data, err := manifest.EncodePointer(ptr)
	if err != nil {
		return err
	}
	_, err = st.Put(ctx, layout.PointerKey(part), data, store.PutOptions{})
	return err
}

// BenchmarkTable collects a table of 1,000 partitions x 10 generations (100
// partitions with -short), on MinIO when S3 tests are enabled, else in
// memory. With the defaults, 8 generations per partition go: 16,000
// objects. Reported: requests and objects deleted per run, and the requests
// and time of a second run that finds nothing to do (steady state).
func BenchmarkTable(b *testing.B) {
	parts, gens := 1000, 10
	if testing.Short() {
		parts = 100
	}
	backend, open := "mem", func(b *testing.B) store.Store { return memstore.New() }
	if testenv.S3Enabled() {
		backend, open = "s3", func(b *testing.B) store.Store { return testenv.S3(b) }
	}
	for _, conc := range []int{4, 16} {
		b.Run(fmt.Sprintf("%s/partitions=%d/generations=%d/concurrency=%d", backend, parts, gens, conc), func(b *testing.B) {
			var requests, deleted, lists, steady int64
			var steadyTime time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				w := newWarp(open(b))
				populate(b, w, parts, gens)
				w.advance(gc.DefaultMinAge + time.Hour)
				cs := newCounting(w) // listings counted by page of 1,000 keys, as on S3
				b.StartTimer()
				tr, err := gc.Table(ctx, cs, "", gc.Options{Concurrency: conc})
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if want := parts * (gens - 2) * 2; tr.Totals.Objects != want || tr.Totals.Collected != parts*(gens-2) || tr.Totals.Partitions != parts {
					b.Fatalf("totals %+v, want %d objects", tr.Totals, want)
				}
				counts := cs.Counts()
				lists += int64(counts["list"])
				requests += int64(cs.total())
				deleted += int64(tr.Totals.Objects)
				if i == 0 {
					b.Logf("requests by kind: %v + %d DeleteObjects", counts, cs.batches.Load())
				}
				// Steady state: the same table again, with nothing left to do.
				cs.reset()
				start := time.Now()
				tr, err = gc.Table(ctx, cs, "", gc.Options{Concurrency: conc})
				steadyTime += time.Since(start)
				if err != nil || tr.Totals.Objects != 0 {
					b.Fatalf("second run: %+v %v", tr.Totals, err)
				}
				steady += int64(cs.total())
			}
			b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			b.ReportMetric(float64(lists)/float64(b.N), "list-pages/op")
			b.ReportMetric(float64(deleted)/float64(b.N), "objects-deleted/op")
			b.ReportMetric(float64(steady)/float64(b.N), "steady-requests/op")
			b.ReportMetric(steadyTime.Seconds()/float64(b.N), "steady-s/op")
		})
	}
}

// GC of a table costs 4 requests per partition with something to delete
// (its pointer, the manifests' DeleteObjects, their second listing, the
// data's DeleteObjects) plus the table's listing pages, and 1 (its pointer)
// per partition with nothing to delete: 100 partitions x 10 generations.
// The table's listing is that of its _pswap/p/ folder, plus the delimited
// listing of the root that looks for partitions of the legacy layout: one
// request on S3; on this store, which has no delimited listing, a walk of
// the root, as many pages again. And one listing of the backfills' batch
// records (_pswap/batches/: none here).
func TestTableRequestCount(t *testing.T) {
	parts, gens := 100, 10
	w := newWarp(memstore.New())
	populate(t, w, parts, gens)
	w.advance(gc.DefaultMinAge + time.Hour)
	cs := newCounting(w)
	tr, err := gc.Table(ctx, cs, "", gc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := parts * (gens - 2) * 2; tr.Totals.Objects != want {
		t.Fatalf("%d objects deleted, want %d", tr.Totals.Objects, want)
	}
	pages := (parts*(1+2*gens) + 999) / 1000
	if c := cs.Counts(); c["get"] != parts || c["list"] != 2*pages+parts+1 || cs.batches.Load() != int64(2*parts) || cs.total() != 4*parts+2*pages+1 {
		t.Fatalf("requests %v + %d DeleteObjects, want %d", c, cs.batches.Load(), 4*parts+2*pages+1)
	}
	cs.reset()
	if tr, err := gc.Table(ctx, cs, "", gc.Options{}); err != nil || tr.Totals.Objects != 0 {
		t.Fatalf("second run: %+v, %v", tr.Totals, err)
	}
	if c := cs.Counts(); cs.total() != parts+3 || c["get"] != parts {
		t.Fatalf("second run: requests %v + %d DeleteObjects, want %d", c, cs.batches.Load(), parts+3)
	}
}
