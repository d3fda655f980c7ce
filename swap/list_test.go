package swap_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// commitMany commits gens generations of files files to every partition,
// a few partitions at a time.
func commitMany(t *testing.T, st store.Store, parts []string, gens, files int) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, p := range parts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for g := range gens {
				txn, err := swap.Begin(ctx, st, p, swap.Options{})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := txn.Commit(ctx, stage(t, txn, files, fmt.Sprint(p, g))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// ListPartitions never lists data: on 1,000 partitions x 3 generations x 10
// files (34,000 objects, 34 pages of a full listing) it costs one listing
// page and one pointer GET per partition.
func TestListPointersRequestCount(t *testing.T) {
	n, gens, files := 1000, 3, 10
	if testing.Short() {
		n = 100
	}
	mem := memstore.New()
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf("dt=%04d-01-01", 1000+i))
	}
	commitMany(t, mem, parts, gens, files)
	objects := 0
	for range mem.List(ctx, "") {
		objects++
	}
	if want := n * (1 + gens*(1+files)); objects != want {
		t.Fatalf("%d objects, want %d", objects, want)
	}

	cs := storetest.NewCounting(mem)
	got, err := swap.ListPointers(ctx, cs, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d partitions listed, want %d", len(got), n)
	}
	for i, l := range got {
		if l.Partition != parts[i] || l.Err != nil || l.Pointer == nil || l.Pointer.Partition != parts[i] || l.Pointer.Seq != int64(gens) || l.ETag == "" {
			t.Fatalf("entry %d: %+v (err %v)", i, l, l.Err)
		}
	}
	c := cs.Counts()
	pages := (n + storetest.ListPageSize - 1) / storetest.ListPageSize
	if c["list"] != pages || c["get"] != n || cs.Total() != n+pages {
		t.Fatalf("requests %v, want %d list pages and %d GETs", c, pages, n)
	}
	// A full listing, as ListPartitions did before, pages through everything.
	cs.Reset()
	for range cs.List(ctx, "") {
	}
	t.Logf("ListPointers: %d requests (%v); a full listing alone: %d pages for %d objects", n+pages, c, cs.Counts()["list"], objects)
	if full := cs.Counts()["list"]; full != (objects+999)/1000 {
		t.Fatalf("full listing counted %d pages for %d objects", full, objects)
	}
}

// Multi-column layouts, prefixes, staged-only and corrupt partitions, and
// objects that are no partition, on the memory and the file store.
func TestListPointersLayouts(t *testing.T) {
	for name, st := range map[string]store.Store{"mem": memstore.New(), "file": must(filestore.New(t.TempDir()))} {
		t.Run(name, func(t *testing.T) {
			var hourly []string
			for d := range 3 {
				for h := range 12 {
					hourly = append(hourly, fmt.Sprintf("dt=2026-11-%02d/hr=%02d", d+1, h))
				}
			}
			daily := []string{"day=2026-12-01", "day=2026-12-02", "day=2026-12-10"}
			commitMany(t, st, slices.Concat(hourly, daily), 2, 2)
			// Staged but never committed: no pointer.
			txn, err := swap.Begin(ctx, st, "day=2026-12-03", swap.Options{})
			if err != nil {
				t.Fatal(err)
			}
			stage(t, txn, 2, "staged")
			txn2, err := swap.Begin(ctx, st, "dt=2026-11-02/hr=99", swap.Options{})
			if err != nil {
				t.Fatal(err)
			}
			stage(t, txn2, 1, "staged")
			// Not partitions: table metadata, Iceberg-style metadata, a loose file.
			for _, k := range []string{"_pswap/table.json", "metadata/v1.metadata.json", "day=2026-12-01/README", "notes.txt"} {
				if _, err := st.Put(ctx, k, []byte("x"), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// A corrupt pointer is listed with its error.
			if _, err := st.Put(ctx, swap.PointerKey("day=2026-12-20"), []byte("{not json"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			all := slices.Concat(hourly, daily, []string{"day=2026-12-20"})
			slices.Sort(all)
			for _, c := range []struct {
				prefix string
				want   []string
			}{
				{"", all},
				{"dt=2026-11-02", hourly[12:24]},
				{"dt=2026-11-02/", hourly[12:24]},
				{"dt=2026-11-02/hr=1", hourly[12+10 : 12+12]},
				{"day=2026-12-0", daily[:2]},
				{"day=2026-12-01/", daily[:1]},
				{"day=2026-12-03", nil},
				{"nothing", nil},
			} {
				cs := storetest.NewCounting(st)
				got, err := swap.ListPartitions(ctx, cs, c.prefix)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("ListPartitions(%q) = %q, want %q", c.prefix, got, c.want)
				}
				// Beyond the partitions: at most the three days above the hours
				// and the two staged-only partitions.
				if g := cs.Counts()["get"]; g > len(c.want)+5 {
					t.Errorf("ListPartitions(%q): %d GETs for %d partitions", c.prefix, g, len(c.want))
				}
			}
			ls, err := swap.ListPointers(ctx, st, "day=2026-12-2")
			if err != nil || len(ls) != 1 || ls[0].Partition != "day=2026-12-20" || !errorsIsCorrupt(ls[0].Err) {
				t.Fatalf("corrupt pointer: %+v, %v", ls, err)
			}
			if _, err := swap.ListPointers(ctx, st, "../x"); err == nil {
				t.Fatal("ListPointers(../x) did not fail")
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func errorsIsCorrupt(err error) bool { return errors.Is(err, swap.ErrCorrupt) }
