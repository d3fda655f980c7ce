package deltalog_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// logEqualsPointers fails t unless the log's current version has, for
// every partition with a pointer, exactly the files of the generation it
// names, and no other partition.
func logEqualsPointers(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	listed, err := swap.ListPointers(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range listed {
		if l.Err != nil {
			t.Fatal(l.Err)
		}
		m, err := swap.ReadManifest(ctx, st, l.Partition, l.Pointer.Generation)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, f := range swap.Files(st, m) {
			keys = append(keys, deltalog.EscapePath(f.Key))
		}
		slices.Sort(keys)
		want[l.Partition] = strings.Join(keys, ",")
	}
	s, err := deltalog.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]string{}
	for _, path := range slices.Sorted(maps.Keys(s.Files)) {
		p := s.Files[path].Tags[deltalog.TagPartition]
		files[p] = append(files[p], path)
	}
	got := map[string]string{}
	for p, f := range files {
		got[p] = strings.Join(f, ",")
	}
	if !maps.Equal(got, want) {
		t.Fatalf("the log (version %d) has %v, the pointers %v", s.Version, got, want)
	}
}

// flaky wraps st: the first request of every read key fails with a 503
// (store.ErrTransient), and so does the first PUT of every other log
// file; the first PUT of each log version is applied and its reply lost.
// faults counts what it injected.
func flaky(st store.Store, faults *int) store.Store {
	var mu sync.Mutex
	return storetest.NewFaulty(st, func(c storetest.Call) storetest.Fault {
		if c.N != 1 {
			return storetest.Fault{}
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case c.Op == "get" || c.Op == "get-range" || c.Op == "stat" || c.Op == "list":
			*faults++
			return storetest.Fault{Before: fmt.Errorf("injected 503: %w", store.ErrTransient)}
		case c.Op == "put" && strings.HasPrefix(c.Key, deltalog.LogDir) && strings.HasSuffix(c.Key, ".json"):
			*faults++
			return storetest.Fault{After: fmt.Errorf("injected lost reply: %w", store.ErrTransient)}
		case c.Op == "put" && strings.HasPrefix(c.Key, deltalog.LogDir):
			*faults++
			return storetest.Fault{Before: fmt.Errorf("injected 503: %w", store.ErrTransient)}
		}
		return storetest.Fault{}
	})
}

// TestPublishRetriesTransientFaults: one 503 on every read key and a lost
// reply on the version PUT leave a publish's result as without them
// (issue 38, item 2): it publishes, and the log equals the pointers.
func TestPublishRetriesTransientFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  bool // a log exists before
		pub  func(ctx context.Context, st store.Store, r pswap.Result) (deltalog.Result, error)
	}{
		{"new log", false, func(ctx context.Context, st store.Store, r pswap.Result) (deltalog.Result, error) {
			return deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq}, deltalog.Options{})
		}},
		{"commit", true, func(ctx context.Context, st store.Store, r pswap.Result) (deltalog.Result, error) {
			return deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq}, deltalog.Options{})
		}},
		{"commit, pointer read", true, func(ctx context.Context, st store.Store, r pswap.Result) (deltalog.Result, error) {
			return deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: r.Partition}, deltalog.Options{})
		}},
		{"reconcile", true, func(ctx context.Context, st store.Store, _ pswap.Result) (deltalog.Result, error) {
			return deltalog.Publish(ctx, st, deltalog.Options{})
		}},
		{"checkpoint", true, func(ctx context.Context, st store.Store, r pswap.Result) (deltalog.Result, error) {
			return deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: r.Partition, Generation: r.Generation, Seq: r.Seq}, deltalog.Options{CheckpointInterval: 1})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memstore.New()
			tbl := pswap.NewTable(mem)
			if tc.log {
				commit(t, tbl, "dt=2026-11-01", "first", sale{1, "x", 1})
			} else {
				commitNoPublish(t, tbl, "dt=2026-11-01", false, sale{1, "x", 1})
			}
			r := commitNoPublish(t, tbl, "dt=2026-11-02", false, sale{2, "y", 2})
			faults := 0
			res, err := tc.pub(ctx, flaky(mem, &faults), r)
			if err != nil {
				t.Fatalf("publish under %d faults: %v", faults, err)
			}
			if !res.Changed || faults < 4 {
				t.Fatalf("%+v after %d faults", res, faults)
			}
			if tc.name == "checkpoint" && !res.Checkpoint {
				t.Fatalf("no checkpoint: %v", res.CheckpointErr)
			}
			logEqualsPointers(t, mem)
		})
	}
}

// TestGCReadsRetryTransientFaults: what garbage collection asks of the
// log (Referenced, Expire) reads it under the same retry rule.
func TestGCReadsRetryTransientFaults(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	tbl := pswap.NewTable(mem)
	for i := range 12 {
		commit(t, tbl, "dt=2026-11-01", fmt.Sprint("r", i), sale{int64(i), "x", 1})
	}
	want, err := deltalog.Referenced(ctx, mem, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	faults := 0
	got, err := deltalog.Referenced(ctx, flaky(mem, &faults), time.Now())
	if err != nil || !slices.Equal(got, want) || faults < 3 {
		t.Fatalf("referenced under %d faults: %v %v, want %v", faults, got, err, want)
	}
	faults = 0
	res, err := deltalog.Expire(ctx, flaky(mem, &faults), time.Now().Add(40*24*time.Hour))
	if err != nil || len(res.Deleted) == 0 || faults < 3 {
		t.Fatalf("expire under %d faults: %+v %v", faults, res, err)
	}
}
