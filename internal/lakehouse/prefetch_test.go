package lakehouse_test

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// A publish that starts from a prefetch reads only the pointer and, beside
// it, the manifest it replaces before it writes (the new file's column
// statistics are in its manifest): 6 requests, 4 one after another, and
// the same result. (The first of
// three attempts that shows it: storetest.FirstShown.)
func TestPublishFromPrefetch(t *testing.T) {
	got := storetest.FirstShown(func() rttRun {
		mem := publishedTable(t, 3)
		c := nextCommit(t, mem)
		lat := storetest.NewLatency(mem, rtt)
		f := lakehouse.StartPrefetch(ctx, lat, lakehouse.Options{WaitForView: true})
		if err := lakehouse.WaitPrefetch(f); err != nil {
			t.Fatal(err)
		}
		if n := len(lat.Spans()); n != 3 {
			t.Fatalf("the prefetch made %d requests, want 3 (hint, version, manifest list):\n%s", n, lat.Timeline())
		}
		lat.Reset()
		r, err := lakehouse.PublishCommit(ctx, lat, c, lakehouse.Options{WaitForView: true, Prefetch: f})
		if err != nil || !r.Changed || r.Version != 2 || r.Partitions != 3 {
			t.Fatalf("publish: %+v %v", r, err)
		}
		return rttRun{mem, lat, r}
	}, func(x rttRun) bool { return x.shows(6, 4) })
	mem, lat := got.mem, got.lat
	if n, seq := len(lat.Spans()), lat.Sequential(); n != 6 || seq != 4 {
		t.Fatalf("%d requests, %d one after another; want 6, 4:\n%s", n, seq, lat.Timeline())
	}
	if got := checkReaders(t, mem); got["dt=2026-01-01"] != 9 {
		t.Fatalf("rows %v", got)
	}
}

// A prefetch the publish may not use is as if there were none: older than
// MaxElapsed/2, of another table, failed, stopped. The publish reads for
// itself (9 requests) and lands.
func TestPrefetchNotUsed(t *testing.T) {
	cases := []struct {
		name  string
		start func(t *testing.T, mem store.Store, clock *testClock) *lakehouse.Prefetch
	}{
		{"too old", func(t *testing.T, mem store.Store, clock *testClock) *lakehouse.Prefetch {
			f := lakehouse.StartPrefetch(clocked(clock.Now), mem, lakehouse.Options{WaitForView: true, MaxElapsed: time.Minute})
			lakehouse.WaitPrefetch(f)
			clock.Add(30*time.Second + time.Millisecond)
			return f
		}},
		{"another table", func(t *testing.T, mem store.Store, clock *testClock) *lakehouse.Prefetch {
			other := memstore.New(memstore.Options{Name: "other"})
			commit(t, other, "dt=2026-11-01", 3, "x", swap.Options{})
			if _, err := lakehouse.Publish(ctx, other, lakehouse.Options{WaitForView: true}); err != nil {
				t.Fatal(err)
			}
			f := lakehouse.StartPrefetch(clocked(clock.Now), other, lakehouse.Options{WaitForView: true})
			lakehouse.WaitPrefetch(f)
			return f
		}},
		{"failed", func(t *testing.T, mem store.Store, clock *testClock) *lakehouse.Prefetch {
			flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
				if c.Key == lakehouse.VersionHintKey {
					return storetest.Fault{Before: fmt.Errorf("%w: 503", store.ErrTransient)}
				}
				return storetest.Fault{}
			})
			f := lakehouse.StartPrefetch(clocked(clock.Now), flaky, lakehouse.Options{WaitForView: true})
			if err := lakehouse.WaitPrefetch(f); !errors.Is(err, store.ErrTransient) {
				t.Fatalf("prefetch: %v", err)
			}
			return f
		}},
		{"stopped", func(t *testing.T, mem store.Store, clock *testClock) *lakehouse.Prefetch {
			f := lakehouse.StartPrefetch(clocked(clock.Now), mem, lakehouse.Options{WaitForView: true})
			f.Stop()
			return f
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := publishedTable(t, 3)
			c := nextCommit(t, mem)
			clock := newTestClock()
			f := tc.start(t, mem, clock)
			cs := storetest.NewCounting(mem)
			r, err := lakehouse.PublishCommit(clocked(clock.Now), cs, c, lakehouse.Options{WaitForView: true, MaxElapsed: time.Minute, Prefetch: f})
			if err != nil || !r.Changed || r.Partitions != 3 {
				t.Fatalf("publish: %+v %v", r, err)
			}
			if cs.Total() != 9 {
				t.Fatalf("%d requests %v, want the 9 of a publish that reads for itself", cs.Total(), cs.Counts())
			}
			checkReaders(t, mem)
		})
	}
	// At MaxElapsed/2 it is still used.
	mem := publishedTable(t, 3)
	c := nextCommit(t, mem)
	clock := newTestClock()
	f := lakehouse.StartPrefetch(clocked(clock.Now), mem, lakehouse.Options{WaitForView: true})
	lakehouse.WaitPrefetch(f)
	clock.Add(30 * time.Second)
	cs := storetest.NewCounting(mem)
	if r, err := lakehouse.PublishCommit(clocked(clock.Now), cs, c, lakehouse.Options{WaitForView: true, MaxElapsed: time.Minute, Prefetch: f}); err != nil || !r.Changed || cs.Total() != 6 {
		t.Fatalf("publish from a prefetch MaxElapsed/2 old: %+v %v, %d requests %v", r, err, cs.Total(), cs.Counts())
	}
}

// A prefetch overtaken by another publish: the version it would write
// exists, so the publish loses that race, reads again and rebases, and
// the metadata has both commits.
func TestPrefetchOvertaken(t *testing.T) {
	mem := publishedTable(t, 3)
	f := lakehouse.StartPrefetch(ctx, mem, lakehouse.Options{WaitForView: true})
	if err := lakehouse.WaitPrefetch(f); err != nil {
		t.Fatal(err)
	}
	other := commit(t, mem, "dt=2026-01-02", 7, "o", swap.Options{OnConflict: swap.Overwrite})
	publish(t, mem, other) // version 2
	c := nextCommit(t, mem)
	r, err := lakehouse.PublishCommit(ctx, mem, c, lakehouse.Options{WaitForView: true, Prefetch: f})
	if err != nil || !r.Changed || r.Version != 3 || r.Rebases != 1 {
		t.Fatalf("publish from an overtaken prefetch: %+v %v, want version 3 after one rebase", r, err)
	}
	if got := checkReaders(t, mem); got["dt=2026-01-01"] != 9 || got["dt=2026-01-02"] != 7 {
		t.Fatalf("rows %v", got)
	}
}

// A publish that fails on a prefetched state behaves as one that read for
// itself: with a 503 on the pointer read, and with a pointer read that
// keeps failing, the same outcome and the same requests after the reads
// the prefetch made.
func TestPrefetchFailureAsWithout(t *testing.T) {
	for _, failures := range []int{1, 100} {
		t.Run(fmt.Sprint(failures, " failures"), func(t *testing.T) {
			run := func(prefetch bool) (lakehouse.Result, []string, error) {
				mem := publishedTable(t, 3)
				c := nextCommit(t, mem)
				var f *lakehouse.Prefetch
				if prefetch {
					f = lakehouse.StartPrefetch(ctx, mem, lakehouse.Options{WaitForView: true})
					lakehouse.WaitPrefetch(f)
				}
				var (
					mu    sync.Mutex
					calls []string
					n     int
				)
				st := storetest.NewFaulty(mem, func(cl storetest.Call) storetest.Fault {
					mu.Lock()
					defer mu.Unlock()
					key := cl.Key
					if i := strings.LastIndex(key, "/"); strings.HasPrefix(key, lakehouse.MetadataPrefix) && i >= 0 {
						key = key[:i+1] + strings.SplitN(key[i+1:], "-", 2)[0] // names drawn at random
					}
					if part, ok := layout.PartitionOf(key); ok && strings.HasPrefix(key, layout.GenerationsPrefix(part)) {
						key = layout.GenerationsPrefix(part) + "G/" + path.Base(key) // a generation of each run's own
					}
					calls = append(calls, cl.Op+" "+key)
					if strings.HasSuffix(cl.Key, "pointer.json") && n < failures {
						n++
						return storetest.Fault{Before: fmt.Errorf("%w: 503", store.ErrTransient)}
					}
					return storetest.Fault{}
				})
				// One request at a time: the same order in both runs.
				r, err := lakehouse.PublishCommit(noWait, st, c, lakehouse.Options{WaitForView: true, Prefetch: f, Concurrency: 1})
				if !prefetch {
					calls = calls[3:] // the hint, the version, its manifest list
				}
				return r, calls, err
			}
			r1, calls1, err1 := run(false)
			r2, calls2, err2 := run(true)
			if r1.Changed != r2.Changed || r1.Version != r2.Version || (err1 == nil) != (err2 == nil) || !slices.Equal(calls1, calls2) {
				t.Fatalf("without a prefetch: %+v %v\n%s\nwith: %+v %v\n%s", r1, err1, strings.Join(calls1, "\n"), r2, err2, strings.Join(calls2, "\n"))
			}
			if failures > 1 && !errors.Is(err2, store.ErrTransient) {
				t.Fatalf("a pointer that keeps failing: %v", err2)
			}
		})
	}
}
