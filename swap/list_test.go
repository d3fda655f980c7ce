package swap_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/env"
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
// page and one pointer GET per partition, plus the one page of the root's
// listing that looks for partitions of the legacy layout (none here).
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
	if c["list"] != pages+1 || c["get"] != n || cs.Total() != n+pages+1 {
		t.Fatalf("requests %v, want %d list pages and %d GETs", c, pages+1, n)
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
			if _, err := st.Put(ctx, layout.PointerKey("day=2026-12-20"), []byte("{not json"), store.PutOptions{}); err != nil {
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

// A 503 on one pointer GET of a listing is retried on its own: the listing
// succeeds with the same result and costs exactly one more GET, not a
// second listing. Each pointer read of the listing (the partitions', and
// those of the upper folders of a multi-column layout, which have none)
// fails once in turn. A pointer that stays unreadable fails the listing
// with the store's error after DefaultListReadAttempts GETs of it.
func TestListPointersRetriesOnePointerRead(t *testing.T) {
	mem := memstore.New()
	var parts []string
	for d := range 2 {
		for h := range 3 {
			parts = append(parts, fmt.Sprintf("dt=2026-11-%02d/hr=%02d", d+1, h))
		}
	}
	for d := range 8 {
		parts = append(parts, fmt.Sprintf("day=2026-12-%02d", d+1))
	}
	commitMany(t, mem, parts, 2, 1)

	var (
		mu   sync.Mutex
		gets []string
	)
	rec := storetest.NewCounting(storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "get" {
			mu.Lock()
			gets = append(gets, c.Key)
			mu.Unlock()
		}
		return storetest.Fault{}
	}))
	want, err := swap.ListPointers(ctx, rec, "")
	if err != nil || len(want) != len(parts) {
		t.Fatalf("listing: %d partitions, %v", len(want), err)
	}
	base := rec.Counts()
	slices.Sort(gets)
	if len(gets) != len(parts)+2 || base["get"] != len(gets) {
		t.Fatalf("pointer GETs %v (%v): want one per partition and per day folder", gets, base)
	}
	same := func(got []swap.Listed) bool {
		return slices.EqualFunc(got, want, func(a, b swap.Listed) bool {
			return a.Partition == b.Partition && a.Err == nil && b.Err == nil && a.ETag == b.ETag && a.Pointer.Seq == b.Pointer.Seq && a.Pointer.Generation == b.Pointer.Generation
		})
	}
	transient := fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)
	for i, key := range gets {
		var slept int
		cs := storetest.NewCounting(storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			if c.Op == "get" && c.Key == key && c.N == 1 {
				return storetest.Fault{Before: transient}
			}
			return storetest.Fault{}
		}))
		var got []swap.Listed
		if i == 0 {
			// The default options: a real (short) backoff.
			got, err = swap.ListPointers(ctx, cs, "")
		} else {
			nosleep := env.With(ctx, &env.Env{Timer: func(context.Context, time.Duration) error { slept++; return nil }})
			got, err = swap.ListPointersWith(nosleep, cs, "", swap.ListOptions{})
		}
		if err != nil || !same(got) {
			t.Fatalf("503 on the GET of %s: %d partitions, %v", key, len(got), err)
		}
		c := cs.Counts()
		if c["get"] != base["get"]+1 || c["list"] != base["list"] || cs.Total() != rec.Total()+1 || i > 0 && slept != 1 {
			t.Fatalf("503 on the GET of %s: requests %v, want %v plus one GET (%d waits)", key, c, base, slept)
		}
	}

	t.Run("down", func(t *testing.T) {
		key := layout.PointerKey("day=2026-12-03")
		var n int
		down := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			if c.Op == "get" && c.Key == key {
				mu.Lock()
				n++
				mu.Unlock()
				return storetest.Fault{Before: transient}
			}
			return storetest.Fault{}
		})
		nosleep := env.With(ctx, &env.Env{Timer: func(context.Context, time.Duration) error { return nil }})
		_, err := swap.ListPointersWith(nosleep, down, "", swap.ListOptions{})
		if !errors.Is(err, store.ErrTransient) || n != swap.DefaultListReadAttempts {
			t.Fatalf("a pointer that stays unreadable: %v after %d GETs, want the store's error after %d", err, n, swap.DefaultListReadAttempts)
		}
	})
}
