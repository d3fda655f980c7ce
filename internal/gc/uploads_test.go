package gc_test

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// withUploads adds fake multipart uploads to a store.
type withUploads struct {
	*warp
	mu      sync.Mutex
	uploads []store.Upload
}

func (s *withUploads) ListUploads(ctx context.Context, prefix string) iter.Seq2[store.Upload, error] {
	s.mu.Lock()
	ups := slices.Clone(s.uploads)
	s.mu.Unlock()
	return func(yield func(store.Upload, error) bool) {
		for _, u := range ups {
			if strings.HasPrefix(u.Key, prefix) && !yield(u, nil) {
				return
			}
		}
	}
}

func (s *withUploads) AbortUpload(ctx context.Context, u store.Upload) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploads = slices.DeleteFunc(s.uploads, func(x store.Upload) bool { return x.ID == u.ID })
	return nil
}

func TestAbortUploads(t *testing.T) {
	clk := newFakeClock()
	st := &withUploads{warp: newWarp(memstore.New(memstore.Options{Now: clk.Now}))}
	mustCommit(t, st, part, "v0")
	other := "dt=2026-11-30"
	old, young := clk.Now(), clk.Now().Add(gc.DefaultOrphanAge)
	st.uploads = []store.Upload{
		{Key: layout.DataPrefix(part, manifest.NewGenerationID()) + "big.parquet", ID: "old", Initiated: old},
		{Key: layout.DataPrefix(part, manifest.NewGenerationID()) + "big.parquet", ID: "young", Initiated: young},
		{Key: layout.DataPrefix(other, manifest.NewGenerationID()) + "big.parquet", ID: "other-partition", Initiated: old},
		{Key: part + "/not-pswap.parquet", ID: "foreign", Initiated: old},
	}
	clk.advance(gc.DefaultOrphanAge + gc.DefaultCommitWindow + time.Minute)

	r := mustGC(t, st, part, gc.Options{DryRun: true})
	if r.Uploads != 1 || len(st.uploads) != 4 {
		t.Fatalf("dry run: %+v, %d uploads left", r, len(st.uploads))
	}
	oldKey := st.uploads[0].Key
	r = mustGC(t, st, part, gc.Options{})
	if r.Uploads != 1 || !slices.Equal(r.UploadKeys, []string{oldKey}) {
		t.Fatalf("report %+v", r)
	}
	var ids []string
	for _, u := range st.uploads {
		ids = append(ids, u.ID)
	}
	if !slices.Equal(ids, []string{"young", "other-partition", "foreign"}) {
		t.Fatalf("uploads left: %v", ids)
	}
	// Table finds uploads of partitions that have no object at all.
	tr, err := gc.Table(ctx, st, "", gc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Totals.Uploads != 1 || len(tr.Partitions) != 2 || tr.Partitions[1].Partition != other || tr.Partitions[1].Uploads != 1 {
		t.Fatalf("table %+v", tr)
	}
	ids = ids[:0]
	for _, u := range st.uploads {
		ids = append(ids, u.ID)
	}
	if !slices.Equal(ids, []string{"young", "foreign"}) {
		t.Fatalf("uploads left: %v", ids)
	}
}

// On MinIO: a real abandoned multipart upload is aborted once old.
func TestAbortUploadsS3(t *testing.T) {
	if !testenv.S3Enabled() {
		t.Skip("S3 tests need MinIO: run scripts/test.sh")
	}
	s3s := testenv.S3Store(t)
	st := newWarp(s3s)
	mustCommit(t, st, part, "v0")
	key := s3s.Prefix() + layout.DataPrefix(part, manifest.NewGenerationID()) + "big.parquet"
	if _, err := s3s.Client().CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(s3s.Bucket()), Key: aws.String(key)}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		out, err := s3s.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(s3s.Bucket())})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}
	if r := mustGC(t, st, part, gc.Options{}); r.Uploads != 0 || count() != 1 {
		t.Fatalf("young upload: %+v", r)
	}
	st.advance(gc.DefaultOrphanAge + gc.DefaultCommitWindow + time.Minute)
	tr, err := gc.Table(ctx, st, "", gc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Totals.Uploads != 1 || count() != 0 {
		t.Fatalf("old upload: %+v, %d left", tr.Totals, count())
	}
}

// countingStore counts requests, DeleteObjects batches included
// (storetest.Counting does not forward store.BatchDeleter).
type countingStore struct {
	*storetest.Counting
	inner   store.Store
	batches atomic.Int64
}

func newCounting(st store.Store) *countingStore {
	return &countingStore{Counting: storetest.NewCounting(st), inner: st}
}

func (c *countingStore) DeleteMany(ctx context.Context, keys []string) error {
	c.batches.Add(1)
	return store.DeleteAll(ctx, c.inner, keys)
}

func (c *countingStore) total() int { return c.Total() + int(c.batches.Load()) }

func (c *countingStore) reset() { c.Reset(); c.batches.Store(0) }

// What one partition costs: one LIST of each layout's folder (package
// layout: the table-level one and the legacy one) and one GET of the
// pointer, whose
// history (format 1.1) names the chain: no manifest is read. To delete: one
// DeleteObjects for the manifests, one more LIST of the manifests and one
// DeleteObjects per 1,000 other keys (each batch after the first after a
// GET of the pointer).
func TestRequestCount(t *testing.T) {
	w := newWarp(memstore.New())
	commitN(t, w, part, 10)
	w.advance(gc.DefaultMinAge + time.Hour)
	cs := newCounting(w)
	r := mustGC(t, cs, part, gc.Options{})
	got := cs.Counts()
	if r.Objects != 8*3 || got["list"] != 3 || got["get"] != 1 || cs.batches.Load() != 2 || cs.total() != 6 {
		t.Fatalf("first run: %v + %d batches, report %+v", got, cs.batches.Load(), r)
	}
	// Steady state: the chain ends at a collected manifest without a GET.
	cs.reset()
	if r := mustGC(t, cs, part, gc.Options{}); r.Objects != 0 {
		t.Fatalf("second run deleted %d", r.Objects)
	}
	if got := cs.Counts(); got["list"] != 2 || got["get"] != 1 || cs.total() != 3 {
		t.Fatalf("second run: %v", got)
	}
	// Over 1,000 keys: one batch (and one pointer re-read) per 1,000; the
	// listing of 2,503 objects is 3 pages, the legacy folder's 1, and the
	// manifests' 1 more.
	part2 := "dt=2026-11-30"
	mustCommit(t, w, part2, "current")
	for i := range 2500 {
		if _, err := w.Put(ctx, layout.DataPrefix(part2, manifest.NewGenerationID())+"f", []byte{byte(i)}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.advance(gc.DefaultOrphanAge + gc.DefaultCommitWindow + time.Minute)
	cs.reset()
	if r := mustGC(t, cs, part2, gc.Options{}); r.Objects != 2500 || len(r.Orphans) != 2500 {
		t.Fatalf("report: %d objects, %d orphans", r.Objects, len(r.Orphans))
	}
	if got := cs.Counts(); cs.batches.Load() != 3 || got["get"] != 1+2 || got["list"] != 3+1+1 || got["delete"] != 0 {
		t.Fatalf("2,500 orphans: %v + %d batches", got, cs.batches.Load())
	}
}
