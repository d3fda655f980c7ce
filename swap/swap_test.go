package swap_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

var ctx = context.Background()

// backends runs f on every store: memory, file, and S3 on MinIO when available.
func backends(t *testing.T, f func(t *testing.T, newStore func(t *testing.T) store.Store)) {
	t.Run("mem", func(t *testing.T) {
		f(t, func(t *testing.T) store.Store { return memstore.New() })
	})
	t.Run("file", func(t *testing.T) {
		f(t, func(t *testing.T) store.Store {
			s, err := filestore.New(filepath.Join(t.TempDir(), "table"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("s3", func(t *testing.T) {
		if !testenv.S3Enabled() {
			t.Skip("S3 tests need MinIO: run scripts/test.sh")
		}
		f(t, func(t *testing.T) store.Store { return testenv.S3(t) })
	})
}

// stage writes n small files for the transaction (see swaptest.Stage).
func stage(t testing.TB, txn *swap.Txn, n int, seed string) manifest.Content {
	t.Helper()
	return swaptest.Stage(t, txn.Store(), txn.DataPrefix(), n, seed)
}

// commit runs a whole attempt: begin, stage, commit.
func commit(t testing.TB, st store.Store, part, seed string, opts swap.Options) (swap.Result, error) {
	t.Helper()
	txn, err := swap.Begin(ctx, st, part, opts)
	if err != nil {
		return swap.Result{}, err
	}
	return txn.Commit(ctx, stage(t, txn, 2, seed))
}

func mustCommit(t testing.TB, st store.Store, part, seed string, opts swap.Options) swap.Result {
	t.Helper()
	r, err := commit(t, st, part, seed, opts)
	if err != nil {
		t.Fatalf("commit %s %s: %v", part, seed, err)
	}
	return r
}

// checkInvariants verifies I1/I2 for a partition: the pointer resolves to
// one manifest whose files all exist with their size and checksum.
func checkInvariants(t testing.TB, st store.Store, part string) *swap.Snapshot {
	t.Helper()
	snap, err := swap.Resolve(ctx, st, part)
	if err != nil {
		t.Fatalf("resolve %s: %v", part, err)
	}
	for _, f := range snap.Files {
		b, a, err := store.ReadAll(ctx, st, f.Key)
		if err != nil {
			t.Fatalf("I2: current file %s: %v", f.Key, err)
		}
		sum := sha256.Sum256(b)
		if a.Size != f.Size || manifest.SHA256Checksum(sum[:]) != f.Checksum {
			t.Fatalf("I2: file %s size %d checksum %x, manifest says %d %s", f.Key, a.Size, sum, f.Size, f.Checksum)
		}
	}
	return snap
}

func dataGens(t testing.TB, st store.Store, part string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for a, err := range st.List(ctx, layout.GenerationsPrefix(part)) {
		if err != nil {
			t.Fatal(err)
		}
		rest := strings.TrimPrefix(a.Key, layout.GenerationsPrefix(part))
		out[rest[:strings.IndexByte(rest, '/')]] = true
	}
	return out
}

func TestCommitAndResolve(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		r1 := mustCommit(t, st, part, "a", swap.Options{RunID: "run-1"})
		if !r1.Changed || r1.Outcome != swap.Committed || r1.Seq != 1 || r1.Files != 2 || r1.Rows != 3 {
			t.Fatalf("first commit: %+v", r1)
		}
		if r1.IdempotencyKey != part+"@"+r1.Generation {
			t.Fatalf("idempotency key %q", r1.IdempotencyKey)
		}
		snap := checkInvariants(t, st, part)
		if snap.Pointer.Generation != r1.Generation || len(snap.Files) != 2 {
			t.Fatalf("resolved %+v", snap.Pointer)
		}
		r2 := mustCommit(t, st, part, "b", swap.Options{RunID: "run-2"})
		if !r2.Changed || r2.Seq != 2 || r2.Generation == r1.Generation {
			t.Fatalf("second commit: %+v", r2)
		}
		snap = checkInvariants(t, st, part)
		if snap.Manifest.Parent != r1.Generation {
			t.Fatalf("parent = %q, want %q", snap.Manifest.Parent, r1.Generation)
		}
		h, err := swap.History(ctx, st, part, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 2 || h[0].Generation != r2.Generation || !h[0].Current || h[1].Generation != r1.Generation || !h[1].Retired || h[1].RunID != "run-1" {
			t.Fatalf("history: %+v", h)
		}
		parts, err := swap.ListPartitions(ctx, st, "")
		if err != nil || len(parts) != 1 || parts[0] != part {
			t.Fatalf("partitions %q %v", parts, err)
		}
	})
}

// The commit costs exactly three requests beyond the data: GET pointer,
// PUT manifest, PUT pointer, whatever the number of files.
func TestCommitRequestCount(t *testing.T) {
	for _, files := range []int{1, 10, 100} {
		cs := storetest.NewCounting(memstore.New())
		mustCommit(t, cs, "dt=2026-11-28", "base", swap.Options{})
		txn, err := swap.Begin(ctx, cs, "dt=2026-11-28", swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := stage(t, txn, files, "new")
		cs.Reset()
		// Begin's GET happened before the reset: count it separately.
		if _, err := txn.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		got := cs.Counts()
		if got["put-if-none-match"] != 1 || got["put-if-match"] != 1 || cs.Total() != 2 {
			t.Fatalf("%d files: commit made %v, want one manifest PUT and one pointer PUT", files, got)
		}
		cs.Reset()
		if _, err := swap.Begin(ctx, cs, "dt=2026-11-28", swap.Options{}); err != nil {
			t.Fatal(err)
		}
		if got := cs.Counts(); got["get"] != 1 || cs.Total() != 1 {
			t.Fatalf("begin made %v, want one GET", got)
		}
		cs.Reset()
		if _, err := swap.Resolve(ctx, cs, "dt=2026-11-28"); err != nil {
			t.Fatal(err)
		}
		if got := cs.Counts(); got["get"] != 2 || cs.Total() != 2 {
			t.Fatalf("resolve made %v, want two GETs", got)
		}
	}
}

func TestIdenticalContentIsNoop(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		r1 := mustCommit(t, st, part, "same", swap.Options{RunID: "r1"})
		r2 := mustCommit(t, st, part, "same", swap.Options{RunID: "r2"})
		if r2.Changed || r2.Outcome != swap.Identical || r2.Generation != r1.Generation {
			t.Fatalf("identical re-run: %+v", r2)
		}
		if gens := dataGens(t, st, part); len(gens) != 1 || !gens[r1.Generation] {
			t.Fatalf("no-op left staged data: %v", gens)
		}
		r3 := mustCommit(t, st, part, "same", swap.Options{RunID: "r3", Force: true})
		if !r3.Changed || r3.Generation == r1.Generation {
			t.Fatalf("forced identical commit: %+v", r3)
		}
	})
}

func TestSameRunIsNoop(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29/hr=13"
		r1 := mustCommit(t, st, part, "first", swap.Options{RunID: "scheduled__2026-11-29T13"})
		txn, err := swap.Begin(ctx, st, part, swap.Options{RunID: "scheduled__2026-11-29T13"})
		if err != nil {
			t.Fatal(err)
		}
		if !txn.AlreadyCommitted() {
			t.Fatal("AlreadyCommitted = false for a re-run of a committed run")
		}
		r2, err := txn.Commit(ctx, stage(t, txn, 2, "different bytes"))
		if err != nil {
			t.Fatal(err)
		}
		if r2.Changed || r2.Outcome != swap.SameRun || r2.Generation != r1.Generation {
			t.Fatalf("re-run: %+v", r2)
		}
		if gens := dataGens(t, st, part); len(gens) != 1 {
			t.Fatalf("re-run left %d data generations", len(gens))
		}
	})
}

func TestConflictFailsAndChangesNothing(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		mustCommit(t, st, part, "v0", swap.Options{})
		zombie, err := swap.Begin(ctx, st, part, swap.Options{RunID: "zombie"})
		if err != nil {
			t.Fatal(err)
		}
		zc := stage(t, zombie, 2, "stale")
		fresh := mustCommit(t, st, part, "v1", swap.Options{RunID: "fresh"})
		_, err = zombie.Commit(ctx, zc)
		if !errors.Is(err, swap.ErrConflict) {
			t.Fatalf("stale commit: got %v, want ErrConflict", err)
		}
		snap := checkInvariants(t, st, part)
		if snap.Pointer.Generation != fresh.Generation {
			t.Fatal("I3: a failed commit changed the current generation")
		}
		if dataGens(t, st, part)[zombie.Generation()] {
			t.Fatal("the losing attempt's data was left behind")
		}
		if _, err := swap.ReadManifest(ctx, st, part, zombie.Generation()); !errors.Is(err, swap.ErrGenerationNotFound) {
			t.Fatalf("the losing attempt's manifest was left behind: %v", err)
		}
	})
}

// Two writers racing with the same content: the loser's fence finds the
// partition already holding what it would have committed, and reports the
// Identical no-op (not a conflict), leaving nothing of its own behind.
func TestRaceWithIdenticalContentIsIdentical(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		mustCommit(t, st, part, "v0", swap.Options{})
		loser, err := swap.Begin(ctx, st, part, swap.Options{RunID: "loser"})
		if err != nil {
			t.Fatal(err)
		}
		lc := stage(t, loser, 2, "same")
		winner := mustCommit(t, st, part, "same", swap.Options{RunID: "winner"})
		r, err := loser.Commit(ctx, lc)
		if err != nil {
			t.Fatalf("loser with identical content: %v, want the Identical no-op", err)
		}
		if r.Changed || r.Outcome != swap.Identical || r.Generation != winner.Generation || r.Seq != winner.Seq {
			t.Fatalf("loser: %+v, want Identical on %s", r, winner.Generation)
		}
		snap := checkInvariants(t, st, part)
		if snap.Pointer.Generation != winner.Generation {
			t.Fatal("the loser changed the current generation")
		}
		if dataGens(t, st, part)[loser.Generation()] {
			t.Fatal("the losing attempt's data was left behind")
		}
		// Forced, it is still fenced out: --force commits identical
		// content on purpose, over the base it read, not over a newer one.
		forced, err := swap.Begin(ctx, st, part, swap.Options{Force: true})
		if err != nil {
			t.Fatal(err)
		}
		fc := stage(t, forced, 2, "same")
		mustCommit(t, st, part, "other", swap.Options{})
		mustCommit(t, st, part, "same", swap.Options{})
		if _, err := forced.Commit(ctx, fc); !errors.Is(err, swap.ErrConflict) {
			t.Fatalf("forced loser: %v, want ErrConflict", err)
		}
	})
}

func TestOverwritePolicyRebases(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		mustCommit(t, st, part, "v0", swap.Options{})
		late, _ := swap.Begin(ctx, st, part, swap.Options{RunID: "late", OnConflict: swap.Overwrite})
		lc := stage(t, late, 3, "late")
		other := mustCommit(t, st, part, "v1", swap.Options{RunID: "other"})
		r, err := late.Commit(ctx, lc)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Changed || r.Outcome != swap.Committed || r.Staged != late.Generation() || r.Generation == late.Generation() {
			t.Fatalf("rebased commit: %+v", r)
		}
		snap := checkInvariants(t, st, part)
		if snap.Manifest.Parent != other.Generation || snap.Manifest.DataGen() != late.Generation() || len(snap.Files) != 3 {
			t.Fatalf("rebased manifest: parent %s data %s files %d", snap.Manifest.Parent, snap.Manifest.DataGen(), len(snap.Files))
		}
	})
}

// A lost response after the pointer PUT was applied must end as success.
func TestLostResponseIsSuccess(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		base := newStore(t)
		part := "dt=2026-11-29"
		for _, tc := range []struct {
			name string
			err  error
		}{
			{"timeout", fmt.Errorf("put: %w: read tcp: i/o timeout", store.ErrTransient)},
			{"sdk-retry-412", fmt.Errorf("put: %w", store.ErrPrecondition)},
			{"reset", errors.New("read: connection reset by peer")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				st := storetest.NewFaulty(base, func(c storetest.Call) storetest.Fault {
					if c.Op == "put" && strings.HasSuffix(c.Key, "pointer.json") && c.N == 1 {
						return storetest.Fault{After: tc.err}
					}
					return storetest.Fault{}
				})
				p := "name=" + tc.name + "/" + part
				r, err := commit(t, st, p, tc.name, swap.Options{RunID: tc.name, BaseDelay: time.Millisecond})
				stats := r.Stats
				if err != nil {
					t.Fatalf("lost response reported as failure: %v", err)
				}
				if !r.Changed || r.Outcome != swap.Committed || stats.ReadBacks != 1 {
					t.Fatalf("result %+v stats %+v", r, stats)
				}
				if snap := checkInvariants(t, base, p); snap.Pointer.Generation != r.Generation {
					t.Fatal("reported generation is not current")
				}
			})
		}
	})
}

func TestTransientFailuresRetried(t *testing.T) {
	st := storetest.NewFaulty(memstore.New(), func(c storetest.Call) storetest.Fault {
		if c.Op == "put" && strings.Contains(c.Key, ".json") && c.N <= 2 {
			return storetest.Fault{Before: fmt.Errorf("503 SlowDown: %w", store.ErrTransient)}
		}
		return storetest.Fault{}
	})
	r, err := commit(t, st, "dt=2026-11-29", "x", swap.Options{BaseDelay: time.Millisecond})
	stats := r.Stats
	if err != nil || !r.Changed {
		t.Fatalf("commit through transient failures: %+v %v", r, err)
	}
	// Two failed manifest PUTs and two failed pointer PUTs.
	if stats.Retries != 4 {
		t.Fatalf("retries = %d, want 4", stats.Retries)
	}
}

func TestLogicErrorsFailAtOnce(t *testing.T) {
	calls := 0
	st := storetest.NewFaulty(memstore.New(), func(c storetest.Call) storetest.Fault {
		if c.Op == "put" && strings.HasSuffix(c.Key, "pointer.json") {
			calls++
			return storetest.Fault{Before: fmt.Errorf("put: %w", store.ErrAccessDenied)}
		}
		return storetest.Fault{}
	})
	_, err := commit(t, st, "dt=2026-11-29", "x", swap.Options{BaseDelay: time.Millisecond})
	if !errors.Is(err, store.ErrAccessDenied) || calls != 1 {
		t.Fatalf("got %v after %d pointer PUTs, want ErrAccessDenied after 1", err, calls)
	}
	if _, err := swap.ReadPointer(ctx, st, "dt=2026-11-29"); !errors.Is(err, swap.ErrNoData) {
		t.Fatalf("a refused commit left a pointer: %v", err)
	}
}

// When the outcome stays unknown, the error says so, and re-running the
// same run id resolves it either way.
func TestOutcomeUnknownResolvedByRerun(t *testing.T) {
	for _, landed := range []bool{true, false} {
		t.Run(fmt.Sprint("landed=", landed), func(t *testing.T) {
			mem := memstore.New()
			var broken atomic.Bool
			broken.Store(true)
			st := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
				if !broken.Load() {
					return storetest.Fault{}
				}
				down := fmt.Errorf("dial: %w: connection refused", store.ErrTransient)
				switch {
				case c.Op == "put" && strings.HasSuffix(c.Key, "pointer.json"):
					if landed && c.N == 1 {
						return storetest.Fault{After: down}
					}
					return storetest.Fault{Before: down}
				case c.Op == "get" && strings.HasSuffix(c.Key, "pointer.json") && c.N > 1:
					return storetest.Fault{Before: down} // read-backs fail too
				}
				return storetest.Fault{}
			})
			opts := swap.Options{RunID: "run-42", BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond, MaxAttempts: 3}
			_, err := commit(t, st, "dt=2026-11-29", "data", opts)
			if !errors.Is(err, swap.ErrOutcomeUnknown) {
				t.Fatalf("got %v, want ErrOutcomeUnknown", err)
			}
			broken.Store(false)
			r, err := commit(t, st, "dt=2026-11-29", "data", opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Changed == landed {
				t.Fatalf("re-run after landed=%v: changed=%v (%s)", landed, r.Changed, r.Outcome)
			}
			checkInvariants(t, mem, "dt=2026-11-29")
		})
	}
}

// Our PUT lands, a later commit replaces it before our read-back: still our
// success, reported as superseded.
func TestSupersededIsSuccess(t *testing.T) {
	mem := memstore.New()
	part := "dt=2026-11-29"
	mustCommit(t, mem, part, "v0", swap.Options{})
	var once sync.Once
	var later swap.Result
	st := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "put" && strings.HasSuffix(c.Key, "pointer.json") && c.Opts.IfMatch != "" {
			f := storetest.Fault{}
			once.Do(func() {
				f = storetest.Fault{After: fmt.Errorf("%w: timeout", store.ErrTransient), Hook: func() {
					later = mustCommit(t, mem, part, "later", swap.Options{RunID: "later"})
				}}
			})
			return f
		}
		return storetest.Fault{}
	})
	r, err := commit(t, st, part, "ours", swap.Options{RunID: "ours", BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatalf("superseded commit reported as failure: %v", err)
	}
	if !r.Changed || r.Outcome != swap.Superseded || r.Generation != r.Staged {
		t.Fatalf("result %+v", r)
	}
	h, _ := swap.History(ctx, mem, part, 0)
	if len(h) != 3 || h[0].Generation != later.Generation || h[1].Generation != r.Staged {
		t.Fatalf("I3: our commit is not in history: %+v", h)
	}
}

func TestStaleGenerationRefused(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := memstore.New(memstore.Options{Now: clock})
	part := "dt=2026-11-29"
	first := mustCommit(t, st, part, "v0", swap.Options{})
	txn, err := swap.Begin(ctx, st, part, swap.Options{GracePeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := stage(t, txn, 2, "slow")
	mu.Lock()
	now = now.Add(61 * time.Minute)
	mu.Unlock()
	_, err = txn.Commit(ctx, c)
	if !errors.Is(err, swap.ErrStaleGeneration) {
		t.Fatalf("got %v, want ErrStaleGeneration", err)
	}
	if snap := checkInvariants(t, st, part); snap.Pointer.Generation != first.Generation {
		t.Fatal("a refused stale generation became current")
	}
}

func TestRollback(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		a := mustCommit(t, st, part, "a", swap.Options{})
		b := mustCommit(t, st, part, "b", swap.Options{})
		r, err := swap.Rollback(ctx, st, part, a.Generation, swap.Options{RunID: "rollback-1"})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Changed {
			t.Fatalf("rollback: %+v", r)
		}
		snap := checkInvariants(t, st, part)
		if snap.Manifest.RollbackOf != a.Generation || snap.Manifest.DataGen() != a.Generation || snap.Manifest.Parent != b.Generation {
			t.Fatalf("rollback manifest %+v", snap.Manifest)
		}
		if snap.Pointer.ContentChecksum == "" || snap.Manifest.ContentChecksum != mustManifest(t, st, part, a.Generation).ContentChecksum {
			t.Fatal("rollback did not restore the old content")
		}
		if _, err := swap.Rollback(ctx, st, part, manifest.NewGenerationID(), swap.Options{}); !errors.Is(err, swap.ErrGenerationNotFound) {
			t.Fatalf("rollback to unknown generation: %v", err)
		}
		// Rollback to a generation whose data is gone fails clearly.
		for a2, err := range st.List(ctx, layout.DataPrefix(part, b.Generation)) {
			if err != nil {
				t.Fatal(err)
			}
			st.Delete(ctx, a2.Key)
		}
		if _, err := swap.Rollback(ctx, st, part, b.Generation, swap.Options{}); !errors.Is(err, swap.ErrGenerationNotFound) {
			t.Fatalf("rollback to collected data: %v", err)
		}
		checkInvariants(t, st, part)
	})
}

// A rollback to the generation whose data is already current (the same
// rollback repeated, or a rollback to the generation a rollback restored,
// or to that rollback) is the Identical no-op: it adds no generation.
func TestRollbackToCurrentDataIsIdentical(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		a := mustCommit(t, st, part, "a", swap.Options{})
		mustCommit(t, st, part, "b", swap.Options{})
		r1, err := swap.Rollback(ctx, st, part, a.Generation, swap.Options{})
		if err != nil || !r1.Changed {
			t.Fatalf("first rollback: %+v, %v", r1, err)
		}
		for _, to := range []string{a.Generation, r1.Generation} {
			r, err := swap.Rollback(ctx, st, part, to, swap.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Changed || r.Outcome != swap.Identical || r.Generation != r1.Generation || r.Seq != r1.Seq {
				t.Errorf("rollback --to %s again: %+v, want the Identical no-op on %s (seq %d)", to, r, r1.Generation, r1.Seq)
			}
		}
		checkInvariants(t, st, part)
	})
}

func mustManifest(t *testing.T, st store.Store, part, gen string) *manifest.Manifest {
	t.Helper()
	m, err := swap.ReadManifest(ctx, st, part, gen)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTamperedMetadata(t *testing.T) {
	st := memstore.New()
	part := "dt=2026-11-29"
	r := mustCommit(t, st, part, "a", swap.Options{})
	key := layout.ManifestKey(part, r.Generation)
	data, _, _ := store.ReadAll(ctx, st, key)
	tampered := strings.Replace(string(data), `"rows": 3`, `"rows": 4`, 1)
	if tampered == string(data) {
		t.Fatalf("test setup: rows field not found in %s", data)
	}
	st.Put(ctx, key, []byte(tampered), store.PutOptions{})
	if _, err := swap.Resolve(ctx, st, part); !errors.Is(err, swap.ErrCorrupt) {
		t.Fatalf("tampered manifest: %v", err)
	}
	st.Put(ctx, layout.PointerKey(part), []byte(`{"format":"pswap-pointer"`), store.PutOptions{})
	if _, err := swap.Resolve(ctx, st, part); !errors.Is(err, swap.ErrCorrupt) {
		t.Fatalf("truncated pointer: %v", err)
	}
	if _, err := commit(t, st, part, "b", swap.Options{}); !errors.Is(err, swap.ErrCorrupt) {
		t.Fatalf("commit over a corrupt pointer must refuse, got %v", err)
	}
	if _, err := swap.Begin(ctx, st, "../etc", swap.Options{}); err == nil {
		t.Fatal("Begin accepted a path-traversal partition")
	}
}

// 32 goroutines commit to one partition under the fail policy, each retrying
// from a fresh Begin until it wins. Every success must be in the history,
// which must be one chain: no lost update.
func TestRacingWritersOnePartition(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		const writers = 32
		var wg sync.WaitGroup
		var conflicts atomic.Int64
		results := make([]swap.Result, writers)
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for attempt := 0; attempt < 1000; attempt++ {
					r, err := commit(t, st, part, fmt.Sprintf("w%d-a%d", w, attempt), swap.Options{RunID: fmt.Sprintf("writer-%d", w)})
					if errors.Is(err, swap.ErrConflict) {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					results[w] = r
					return
				}
				errs <- fmt.Errorf("writer %d never won", w)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		h, err := swap.History(ctx, st, part, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != writers {
			t.Fatalf("history has %d generations, want %d", len(h), writers)
		}
		inHistory := map[string]bool{}
		for i, e := range h {
			inHistory[e.Generation] = true
			if i+1 < len(h) && e.Parent != h[i+1].Generation {
				t.Fatalf("history is not a chain at %d", i)
			}
		}
		for w, r := range results {
			if !r.Changed || !inHistory[r.Generation] {
				t.Fatalf("writer %d's success %s is not in history (lost update)", w, r.Generation)
			}
		}
		checkInvariants(t, st, part)
		t.Logf("%d writers, %d conflicts resolved by retry, history chain of %d", writers, conflicts.Load(), len(h))
	})
}

// 64 goroutines commit to 64 partitions: no contention at all.
func TestParallelPartitionsNeverContend(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		const n = 64
		var wg sync.WaitGroup
		var stats [n]swap.Stats
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var r swap.Result
				r, errs[i] = commit(t, st, fmt.Sprintf("dt=2026-11-29/shard=%02d", i), "x", swap.Options{})
				stats[i] = r.Stats
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if stats[i] != (swap.Stats{}) {
				t.Fatalf("partition %d: %+v, want no conflicts or retries", i, stats[i])
			}
		}
		parts, _ := swap.ListPartitions(ctx, st, "")
		if len(parts) != n {
			t.Fatalf("%d partitions listed, want %d", len(parts), n)
		}
	})
}
