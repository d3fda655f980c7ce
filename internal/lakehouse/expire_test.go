package lakehouse_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// expiryTable is a table whose expiry has work of every kind: snapshots
// past the retention, snapshots younger than it besides the current one
// (their manifest lists are read), and a version hint left behind by a
// publish whose hint update failed (the hinted version is read).
func expiryTable(t *testing.T) (store.Store, lakehouse.ExpireOptions) {
	t.Helper()
	mem := memstore.New(memstore.Options{})
	// In the past: the Iceberg builder checks a version's local time
	// against its snapshots'.
	t0 := time.Now().Add(-4 * time.Hour)
	at := func(d time.Duration) context.Context {
		return clocked(func() time.Time { return t0.Add(d) })
	}
	pub := func(st store.Store, res swap.Result, d time.Duration) {
		t.Helper()
		if _, err := lakehouse.PublishCommit(at(d), st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	over := swap.Options{OnConflict: swap.Overwrite}
	pub(mem, commit(t, mem, "dt=2026-11-01", 4, "a", swap.Options{}), 0)
	pub(mem, commit(t, mem, "dt=2026-11-02", 5, "b", swap.Options{}), time.Minute)
	pub(mem, commit(t, mem, "dt=2026-11-01", 6, "c", over), 2*time.Minute)
	pub(mem, commit(t, mem, "dt=2026-11-02", 7, "d", over), 2*time.Hour)
	pub(failHint{mem}, commit(t, mem, "dt=2026-11-01", 8, "e", over), 2*time.Hour+time.Minute)
	return mem, lakehouse.ExpireOptions{
		Retention: 4 * time.Hour, MinAge: time.Millisecond,
		Now: func() time.Time { return t0.Add(5 * time.Hour) },
	}
}

// keys returns the keys of a store's metadata objects.
func metadataKeys(t *testing.T, st store.Store) []string {
	t.Helper()
	return slices.Sorted(maps.Keys(metadataObjects(t, st)))
}

// oneTransientRead fails the k-th read (GET, ranged GET, HEAD, listing) of
// st with a 503, or, with deletes, the k-th read or delete; failed names it
// once it happened.
func oneTransientRead(st store.Store, k int, failed *string, deletes bool) store.Store {
	reads := 0
	return storetest.NewFaulty(st, func(c storetest.Call) storetest.Fault {
		switch c.Op {
		case "get", "get-range", "stat", "list", "delete":
			if c.Op == "delete" && !deletes {
				return storetest.Fault{}
			}
			reads++
			if reads == k {
				*failed = c.Op + " " + c.Key
				return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
			}
		}
		return storetest.Fault{}
	})
}

// One 503 on any read of an expiry (the hint, the probe, the metadata, the
// manifest lists, the hinted version, the listing of the metadata folder)
// or on one of its deletes, each position in turn, is retried: the expiry completes, expires the
// snapshots and deletes exactly what a run without faults does, and the
// table reads the same. A 503 on the reads of Referenced (GC's protection)
// is retried too, and it names the same files. Before, a single 503 failed
// the expiry (GC's ExpireErr warning) and nothing was expired on that run.
func TestExpireRetriesTransientReads(t *testing.T) {
	base, opts := expiryTable(t)
	for _, tc := range []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"hint updated", func(st store.Store) store.Store { return st }},
		// The expiry's own hint update fails too: its sweep finds the hint
		// behind, keeps the hinted version and reads it.
		{"hint behind", func(st store.Store) store.Store { return failHint{st} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := clone(t, base)
			want, err := lakehouse.Expire(noWait, tc.wrap(ref), opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Expired) < 2 || len(want.Deleted) < 3 || want.Version == 0 {
				t.Fatalf("the fault-free expiry has too little to do to test its retries: %+v", want)
			}
			if !slices.Contains(want.Deleted, lakehouse.MetadataKey(1)) || slices.Contains(want.Deleted, lakehouse.MetadataKey(4)) {
				t.Fatalf("the fault-free expiry deleted %v: want v1 gone and the hinted v4 kept", want.Deleted)
			}
			wantKeys := metadataKeys(t, ref)
			latest := func(st store.Store) map[string]int64 {
				loc, _, err := lakehouse.Latest(ctx, st)
				if err != nil {
					t.Fatal(err)
				}
				rows, _ := icebergRows(t, st, loc)
				return rows
			}
			wantRows := latest(ref)
			if tc.name == "hint updated" {
				// Readers that follow the hint too (icebird), and DuckDB.
				checkReaders(t, ref)
			}
			slices.Sort(want.Deleted)

			positions := 0
			for k := 1; ; k++ {
				st := clone(t, base)
				var failed string
				got, err := lakehouse.Expire(noWait, oneTransientRead(tc.wrap(st), k, &failed, true), opts)
				if failed == "" {
					break // fewer than k reads: every position was tried
				}
				positions++
				if err != nil {
					t.Fatalf("expiry after one 503 on read %d (%s): %v", k, failed, err)
				}
				slices.Sort(got.Deleted)
				if !slices.Equal(got.Expired, want.Expired) || !slices.Equal(got.Deleted, want.Deleted) || got.Version != want.Version {
					t.Fatalf("503 on read %d (%s): expired %v, deleted %v, version %d; without faults %v, %v, %d",
						k, failed, got.Expired, got.Deleted, got.Version, want.Expired, want.Deleted, want.Version)
				}
				if keys := metadataKeys(t, st); !slices.Equal(keys, wantKeys) {
					t.Fatalf("503 on read %d (%s): metadata left %v, want %v", k, failed, keys, wantKeys)
				}
				if rows := latest(st); !maps.Equal(rows, wantRows) {
					t.Fatalf("503 on read %d (%s): readers see %v, want %v", k, failed, rows, wantRows)
				}
			}
			// The first load (hint, probe, metadata, manifest list), the
			// sweep's (the same), the retained snapshots' manifest lists,
			// (the hinted version,) the listing, the deletes.
			if positions < 9+len(want.Deleted) {
				t.Fatalf("only %d reads in an expiry", positions)
			}
			t.Logf("a 503 at each of %d positions of an expiry (reads and deletes) was retried", positions)
		})
	}

	wantFiles, err := lakehouse.Referenced(noWait, base, opts)
	if err != nil || len(wantFiles) == 0 {
		t.Fatalf("referenced: %v %v", wantFiles, err)
	}
	refPositions := 0
	for k := 1; ; k++ {
		var failed string
		files, err := lakehouse.Referenced(noWait, oneTransientRead(base, k, &failed, false), opts)
		if failed == "" {
			break
		}
		refPositions++
		if err != nil || !slices.Equal(files, wantFiles) {
			t.Fatalf("referenced after one 503 on read %d (%s): %v %v, want %v", k, failed, files, err, wantFiles)
		}
	}
	if refPositions < 5 {
		t.Fatalf("only %d reads in Referenced: want the hint, metadata, manifest lists and manifests", refPositions)
	}

	t.Run("down", func(t *testing.T) {
		st := clone(t, base)
		before := metadataKeys(t, st)
		var gets int
		down := storetest.NewFaulty(st, func(c storetest.Call) storetest.Fault {
			if c.Op == "get" && c.Key == lakehouse.VersionHintKey {
				gets++
				return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
			}
			return storetest.Fault{}
		})
		if _, err := lakehouse.Expire(noWait, down, opts); !errors.Is(err, store.ErrTransient) {
			t.Fatalf("expiry against a store that stays down: %v, want the store's transient error", err)
		}
		if gets != 1+4 {
			t.Fatalf("%d reads of the hint: want 5 (the default MaxAttempts)", gets)
		}
		// MaxAttempts 1 (a store that retries itself) retries nothing.
		gets = 0
		one := opts
		one.MaxAttempts = 1
		if _, err := lakehouse.Expire(noWait, down, one); !errors.Is(err, store.ErrTransient) || gets != 1 {
			t.Fatalf("expiry with MaxAttempts 1: %v after %d reads of the hint, want 1", err, gets)
		}
		gets = 0
		if _, err := lakehouse.Referenced(noWait, down, one); !errors.Is(err, store.ErrTransient) || gets != 1 {
			t.Fatalf("Referenced with MaxAttempts 1: %v after %d reads of the hint, want 1", err, gets)
		}
		if after := metadataKeys(t, st); !slices.Equal(after, before) {
			t.Fatalf("a failed expiry changed the metadata: %v -> %v", before, after)
		}
	})
}

// After an expiry, every version the latest one's metadata log names
// exists and reads whole: its current snapshot's manifest list and
// manifests are there, and GC's protection (Referenced) keeps every data
// file it names. The versions whose current snapshot the expiry removed
// leave the log and the store. Before, the log kept naming them after the
// sweep deleted them (an engine following the log, or registered at one of
// them, found a missing file), and a logged version younger than the
// retention could outlive the manifest list of its current snapshot.
func TestExpiryKeepsLoggedVersionsReadable(t *testing.T) {
	mem, o := expiryTable(t)
	res, err := lakehouse.Expire(noWait, mem, o)
	if err != nil || len(res.Expired) == 0 || res.Version == 0 {
		t.Fatalf("expire: %+v %v", res, err)
	}
	data, _, err := store.ReadAll(ctx, mem, lakehouse.MetadataKey(res.Version))
	if err != nil {
		t.Fatal(err)
	}
	md, err := lakehouse.ParseMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	keep, err := lakehouse.Referenced(noWait, mem, o)
	if err != nil {
		t.Fatal(err)
	}
	logged := lakehouse.Model(md).MetadataLog
	if len(logged) == 0 {
		t.Fatal("the metadata log is empty: the test needs versions in it")
	}
	inLog := map[string]bool{}
	for _, e := range logged {
		inLog[e.MetadataFile] = true
		key := strings.TrimPrefix(e.MetadataFile, mem.URI(""))
		if _, _, err := store.ReadAll(ctx, mem, key); err != nil {
			t.Fatalf("the metadata log names %s: %v", e.MetadataFile, err)
		}
		// iceberg-go plans and reads the version's current snapshot.
		icebergRows(t, mem, e.MetadataFile)
		for _, f := range currentFiles(t, mem, e.MetadataFile) {
			if _, ok := slices.BinarySearch(keep, strings.TrimPrefix(f, mem.URI(""))); !ok {
				t.Fatalf("%s names %s, which GC would delete (Referenced: %v)", e.MetadataFile, f, keep)
			}
		}
	}
	for v := 1; v < res.Version; v++ {
		if _, _, err := store.ReadAll(ctx, mem, lakehouse.MetadataKey(v)); err == nil && !inLog[mem.URI(lakehouse.MetadataKey(v))] && v != 4 { // v4: the hinted one
			t.Errorf("v%d outlived the expiry outside the metadata log", v)
		}
	}
	// The reconcile that follows has nothing to do, and a second expiry
	// neither expires nor trims anything.
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("reconcile: %+v %v", r, err)
	}
	if again, err := lakehouse.Expire(noWait, mem, o); err != nil || len(again.Expired) != 0 || again.Version != 0 {
		t.Fatalf("second expiry: %+v %v", again, err)
	}
}

// currentFiles are the data file locations of a version's current
// snapshot, as iceberg-go plans them.
func currentFiles(t *testing.T, st store.Store, loc string) []string {
	t.Helper()
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, icebergIO(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	return out
}
