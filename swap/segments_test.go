package swap_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// segmentKeys lists the segment documents under part's data generations.
func segmentKeys(t testing.TB, st store.Store, part string) []string {
	t.Helper()
	var out []string
	for a, err := range st.List(ctx, layout.GenerationsPrefix(part)) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(a.Key, "/_segments/") {
			out = append(out, a.Key)
		}
	}
	return out
}

// TestAppendSegmentsRace: 24 runs append 2 files each, three attempts of
// each at once, across the segment boundaries (manifest.SegmentFiles): the
// current manifest is a head that lists fewer than SegmentFiles files
// itself, the expanded generation holds every run's files exactly once,
// and the pointer counts them all.
func TestAppendSegmentsRace(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		const runs, attempts = 24, 3
		var wg sync.WaitGroup
		errs := make(chan error, runs*attempts)
		opts := swap.Options{MaxAttempts: 80, MaxElapsed: 2 * time.Minute, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}
		for i := range runs {
			for range attempts {
				wg.Go(func() {
					if _, err := appendRun(t, st, part, fmt.Sprintf("run-%d", i), fmt.Sprintf("s%d", i), opts); err != nil {
						errs <- err
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var seeds []string
		for i := range runs {
			seeds = append(seeds, fmt.Sprintf("s%d", i))
		}
		wantSeeds(t, seedsOf(t, st, part), seeds...)
		b, err := swap.ReadPointer(ctx, st, part)
		if err != nil {
			t.Fatal(err)
		}
		head, _, err := swap.ReadManifestHead(ctx, st, part, b.Pointer.Generation)
		if err != nil {
			t.Fatal(err)
		}
		if !head.Segmented() || len(head.Files) >= manifest.SegmentFiles || head.FileCount() != 2*runs || b.Pointer.Files != 2*runs {
			t.Fatalf("head: segmented %v, %d own files, %d in all, pointer %d; want a head of fewer than %d own files, %d in all",
				head.Segmented(), len(head.Files), head.FileCount(), b.Pointer.Files, manifest.SegmentFiles, 2*runs)
		}
	})
}

// TestAppendSegmentsGCAndRollback: garbage collection keeps the segments
// of a live head (the partition reads back whole after it), a rollback to
// an earlier head restores exactly its files and appends go on from it,
// and segments are objects of their root data generation to the
// collector (kept and removed with it).
func TestAppendSegmentsGCAndRollback(t *testing.T) {
	st := memstore.New()
	part := "dt=2026-11-29"
	var seeds []string
	var mid swap.Result
	for i := range 40 {
		r := mustAppend(t, st, part, fmt.Sprintf("run-%d", i), fmt.Sprintf("s%d", i))
		seeds = append(seeds, fmt.Sprintf("s%d", i))
		if i == 29 {
			mid = r
		}
	}
	if len(segmentKeys(t, st, part)) == 0 {
		t.Fatal("40 appends of 2 files wrote no segment")
	}
	if _, err := gc.Partition(ctx, st, part, gc.Options{Keep: gc.None, MinAge: gc.None}); err != nil {
		t.Fatal(err)
	}
	wantSeeds(t, seedsOf(t, st, part), seeds...)
	if len(segmentKeys(t, st, part)) == 0 {
		t.Fatal("gc removed the segments of the current head")
	}

	rb, err := swap.Rollback(ctx, st, part, mid.Generation, swap.Options{})
	if err != nil || !rb.Changed {
		t.Fatalf("rollback to the 30th append: %+v %v", rb, err)
	}
	wantSeeds(t, seedsOf(t, st, part), seeds[:30]...)
	mustAppend(t, st, part, "run-after", "after")
	wantSeeds(t, seedsOf(t, st, part), append(seeds[:30:30], "after")...)

	// Garbage collection keeps and removes a data generation whole: the
	// segments are objects of the head's data generation (the root).
	head, _, err := swap.ReadManifestHead(ctx, st, part, rb.Generation)
	if err != nil {
		t.Fatal(err)
	}
	if !head.Segmented() {
		t.Error("a rollback to a head wrote a plain manifest of every file: it carries the head's segments")
	}
	for _, k := range segmentKeys(t, st, part) {
		if kind, gen := layout.Classify(part, k); kind != layout.KindData || gen != head.DataGen() {
			t.Errorf("segment %s is %v of %s, want data of the root %s", k, kind, gen, head.DataGen())
		}
	}
}

// TestReadManifestCorruptSegment: a head whose segment is missing or
// altered is ErrCorrupt to a reader (Resolve), never a shorter file list.
func TestReadManifestCorruptSegment(t *testing.T) {
	st := memstore.New()
	part := "dt=2026-11-29"
	for i := range 20 {
		mustAppend(t, st, part, fmt.Sprintf("run-%d", i), fmt.Sprintf("s%d", i))
	}
	keys := segmentKeys(t, st, part)
	if len(keys) == 0 {
		t.Fatal("no segment")
	}
	data, _, err := store.ReadAll(ctx, st, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, keys[0], []byte(strings.Replace(string(data), `"rows": `, `"rows": 1`, 1)), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := swap.Resolve(ctx, st, part); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("altered segment: %v", err)
	} else if !errorsIsCorrupt(err) {
		t.Fatalf("altered segment: not ErrCorrupt: %v", err)
	}
	if err := st.Delete(ctx, keys[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := swap.Resolve(ctx, st, part); !errorsIsCorrupt(err) {
		t.Fatalf("missing segment: %v", err)
	}
}
