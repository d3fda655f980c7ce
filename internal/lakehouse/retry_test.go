package lakehouse_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// One 503 on any read of a publish (the version hint, the metadata, the
// manifest list, the pointer, the manifest), each position in turn, is
// retried: the publish lands, and readers see the commit. A store that
// keeps failing still fails the publish, with the store's error.
func TestPublishRetriesTransientReads(t *testing.T) {
	positions := 0
	for k := 1; ; k++ {
		mem := memstore.New()
		first := commit(t, mem, "dt=2026-11-28", 10, "a", swap.Options{})
		publish(t, mem, first)
		res := commit(t, mem, "dt=2026-11-29", 20, "b", swap.Options{})
		var (
			mu     sync.Mutex // the publish reads the pointer and the group's manifest at once
			gets   int
			failed string
		)
		flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			mu.Lock()
			defer mu.Unlock()
			if c.Op == "get" || c.Op == "get-range" || c.Op == "stat" {
				gets++
				if gets == k {
					failed = c.Key
					return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
				}
			}
			return storetest.Fault{}
		})
		r, err := lakehouse.PublishCommit(noWait, flaky, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
			lakehouse.Options{})
		if failed == "" {
			break // fewer than k reads: every position was tried
		}
		positions++
		if err != nil || !r.Changed {
			t.Fatalf("publish after one 503 on read %d (%s): %+v %v", k, failed, r, err)
		}
		if got, _ := icebergRows(t, mem, r.MetadataLocation); got["dt=2026-11-29"] != 20 || got["dt=2026-11-28"] != 10 {
			t.Fatalf("503 on read %d (%s): readers see %v", k, failed, got)
		}
	}
	if positions < 4 {
		t.Fatalf("only %d reads in a publish; want the hint, metadata, manifest list, pointer and manifest", positions)
	}
	t.Logf("a 503 at each of %d read positions was retried", positions)
	t.Run("down", func(t *testing.T) {
		mem := memstore.New()
		res := commit(t, mem, "dt=2026-11-29", 20, "b", swap.Options{})
		down := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			if c.Op == "get" || c.Op == "get-range" || c.Op == "stat" || c.Op == "list" {
				return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
			}
			return storetest.Fault{}
		})
		_, err := lakehouse.PublishCommit(noWait, down, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
			lakehouse.Options{})
		if !errors.Is(err, store.ErrTransient) {
			t.Fatalf("publish against a store that stays down: %v", err)
		}
	})
}

// The conditional PUT of a version whose reply is a 412 or lost (the SDK's
// own retry turns our success into a 412; a 503 after the write applied) is
// settled by reading the version back. A 503 on that read-back is retried
// like any read of a publish: the publish lands exactly one version, never
// writes one twice, and never loses a version another publisher wrote.
func TestPublishRetriesTheReadBackOfItsVersion(t *testing.T) {
	transient := fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)
	for _, tc := range []struct {
		name  string
		reply error // the PUT's reply, after it applied (nil: another publisher wins v2 first)
		fails int   // read-backs of v2 that fail with a 503
	}{
		{"412 after our write, one 503", store.ErrPrecondition, 1},
		{"412 after our write, three 503s", store.ErrPrecondition, 3},
		{"lost reply, two 503s", transient, 2},
		{"another publisher's v2, one 503", nil, 1},
		{"another publisher's v2, three 503s", nil, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memstore.New()
			publish(t, mem, commit(t, mem, "dt=2026-11-28", 10, "a", swap.Options{}))
			res := commit(t, mem, "dt=2026-11-29", 20, "b", swap.Options{})
			other := commit(t, mem, "dt=2026-11-30", 30, "c", swap.Options{})
			v2 := lakehouse.MetadataKey(2)
			var (
				putV2, readBacks int
				otherV2          []byte
			)
			flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
				switch {
				case c.Op == "put" && c.Key == v2:
					putV2++
					if putV2 > 1 {
						return storetest.Fault{}
					}
					if tc.reply == nil {
						// Another publisher writes v2 just before ours.
						publish(t, mem, other)
						data, _, err := store.ReadAll(ctx, mem, v2)
						if err != nil {
							t.Errorf("the other publisher's v2: %v", err)
						}
						otherV2 = data
						return storetest.Fault{}
					}
					return storetest.Fault{After: tc.reply}
				case c.Op == "get" && c.Key == v2 && putV2 > 0:
					readBacks++
					if readBacks <= tc.fails {
						return storetest.Fault{Before: transient}
					}
				}
				return storetest.Fault{}
			})
			r, err := lakehouse.PublishCommit(noWait, flaky, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
				lakehouse.Options{WaitForView: true})
			if err != nil || !r.Changed {
				t.Fatalf("publish: %+v %v", r, err)
			}
			if readBacks <= tc.fails {
				t.Fatalf("%d read-backs of %s, want more than the %d that failed", readBacks, v2, tc.fails)
			}
			want := map[string]int64{"dt=2026-11-28": 10, "dt=2026-11-29": 20}
			wantVersion := 2
			if tc.reply == nil {
				want["dt=2026-11-30"] = 30
				wantVersion = 3 // rebased on the other publisher's v2
				if data, _, err := store.ReadAll(ctx, mem, v2); err != nil || !bytes.Equal(data, otherV2) {
					t.Fatalf("the other publisher's v2 changed: %v", err)
				}
				if r.Rebases != 1 {
					t.Fatalf("%d rebases, want 1", r.Rebases)
				}
			}
			if r.Version != wantVersion {
				t.Fatalf("published version %d, want %d", r.Version, wantVersion)
			}
			if _, err := mem.Stat(ctx, lakehouse.MetadataKey(wantVersion+1)); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("a version past %d exists (a version written twice): %v", wantVersion, err)
			}
			if got, _ := icebergRows(t, mem, r.MetadataLocation); !maps.Equal(got, want) {
				t.Fatalf("readers see %v, want %v", got, want)
			}
			// Publishing again is a no-op: the metadata is current.
			if again, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{}); err != nil || again.Changed || again.Version != wantVersion {
				t.Fatalf("publish again: %+v %v", again, err)
			}
		})
	}
	t.Run("read-back stays down", func(t *testing.T) {
		mem := memstore.New()
		res := commit(t, mem, "dt=2026-11-29", 20, "b", swap.Options{})
		v1 := lakehouse.MetadataKey(1)
		put := false
		flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			switch {
			case c.Op == "put" && c.Key == v1:
				put = true
				return storetest.Fault{After: store.ErrPrecondition}
			case c.Op == "get" && c.Key == v1 && put:
				return storetest.Fault{Before: transient}
			}
			return storetest.Fault{}
		})
		_, err := lakehouse.PublishCommit(noWait, flaky, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
			lakehouse.Options{})
		if !errors.Is(err, store.ErrTransient) {
			t.Fatalf("publish whose read-back never answers: %v, want the store's transient error", err)
		}
		// Its version did land: the next publish finds it and writes nothing.
		again, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
		if err != nil || again.Changed || again.Version != 1 {
			t.Fatalf("publish after: %+v %v", again, err)
		}
	})
}

// A reconcile (Publish) retries one 503 on any of its reads too: the
// listing that finds the partitions and reads their pointers, then the
// hint, the metadata, the manifest list and the changed manifest.
func TestReconcileRetriesTransientReads(t *testing.T) {
	positions := 0
	for k := 1; ; k++ {
		mem := memstore.New()
		publish(t, mem, commit(t, mem, "dt=2026-11-28", 10, "a", swap.Options{}))
		commit(t, mem, "dt=2026-11-29", 20, "b", swap.Options{}) // not published
		commit(t, mem, "dt=2026-11-28", 5, "c", swap.Options{OnConflict: swap.Overwrite})
		var (
			mu     sync.Mutex // the listing reads pointers at once
			reads  int
			failed string
		)
		flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			mu.Lock()
			defer mu.Unlock()
			if c.Op == "get" || c.Op == "get-range" || c.Op == "stat" || c.Op == "list" {
				reads++
				if reads == k {
					failed = c.Op + " " + c.Key
					return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
				}
			}
			return storetest.Fault{}
		})
		r, err := lakehouse.Publish(noWait, flaky, lakehouse.Options{})
		if failed == "" {
			break // fewer than k reads: every position was tried
		}
		positions++
		if err != nil || !r.Changed {
			t.Fatalf("reconcile after one 503 on read %d (%s): %+v %v", k, failed, r, err)
		}
		want := map[string]int64{"dt=2026-11-28": 5, "dt=2026-11-29": 20}
		if got, _ := icebergRows(t, mem, r.MetadataLocation); !maps.Equal(got, want) {
			t.Fatalf("503 on read %d (%s): readers see %v, want %v", k, failed, got, want)
		}
	}
	if positions < 7 {
		t.Fatalf("only %d reads in a reconcile; want the listing, 2 pointers, the hint, metadata, manifest list and manifests", positions)
	}
	t.Logf("a 503 at each of %d read positions was retried", positions)
}

// A 503 while a reconcile reads the pointers again (its first attempt was
// slower than MaxElapsed) is retried with a full new reading: planning
// from the pointers read before the failure dropped the partitions whose
// read had failed from the metadata.
func TestReconcileRereadRetried(t *testing.T) {
	mem := memstore.New()
	parts := []string{"dt=2026-11-01", "dt=2026-11-02", "dt=2026-11-03"}
	for _, p := range parts {
		commit(t, mem, p, 3, "x", swap.Options{})
	}
	clock := newTestClock()
	flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "get" && c.Key == layout.PointerKey(parts[2]) && c.N == 2 {
			return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
		}
		return storetest.Fault{}
	})
	hs := &putHookStore{Store: flaky, prefix: lakehouse.MetadataPrefix + "pswap-"}
	hs.hook = func() {
		clock.Add(2 * time.Minute)
		commit(t, mem, parts[1], 6, "b", swap.Options{OnConflict: swap.Overwrite})
	}
	noWait := env.With(ctx, &env.Env{Clock: clock.Now, Timer: func(context.Context, time.Duration) error { return nil }})
	r, err := lakehouse.Publish(noWait, hs, lakehouse.Options{MaxElapsed: time.Minute})
	if err != nil || !r.Changed || r.Partitions != 3 {
		t.Fatalf("reconcile: %+v %v", r, err)
	}
	want := map[string]int64{parts[0]: 3, parts[1]: 6, parts[2]: 3}
	if got := checkReaders(t, mem); !maps.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}
