package swap_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/race"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// appendRun is one attempt of an append of run with two files of seed
// (skipping the staging when Begin finds the run appended).
func appendRun(t testing.TB, st store.Store, part, run, seed string, opts swap.Options) (swap.Result, error) {
	t.Helper()
	opts.RunID, opts.Append = run, true
	txn, err := swap.Begin(ctx, st, part, opts)
	if err != nil {
		return swap.Result{}, err
	}
	if txn.AlreadyCommitted() {
		return txn.Commit(ctx, manifest.Content{})
	}
	return txn.Commit(ctx, stage(t, txn, 2, seed))
}

func mustAppend(t testing.TB, st store.Store, part, run, seed string) swap.Result {
	t.Helper()
	r, err := appendRun(t, st, part, run, seed, swap.Options{})
	if err != nil {
		t.Fatalf("append %s: %v", run, err)
	}
	return r
}

// seedsOf reads every current file of part back and counts the files of
// each seed (a file's body starts with its seed): the exactly-once check.
func seedsOf(t testing.TB, st store.Store, part string) map[string]int {
	t.Helper()
	snap := checkInvariants(t, st, part)
	out := map[string]int{}
	for _, f := range snap.Files {
		b, _, err := store.ReadAll(ctx, st, f.Key)
		if err != nil {
			t.Fatal(err)
		}
		seed, _, _ := strings.Cut(string(b), "/file-")
		out[seed]++
	}
	return out
}

// wantSeeds fails unless every seed has exactly two files and no other
// seed has any.
func wantSeeds(t testing.TB, got map[string]int, seeds ...string) {
	t.Helper()
	want := map[string]int{}
	for _, s := range seeds {
		want[s] = 2
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("files per run: got %v, want %v", got, want)
	}
}

// unreferenced lists the data files under part's generations that no
// current file is: what a no-op or a lost attempt failed to clean up.
func unreferenced(t testing.TB, st store.Store, part string) []string {
	t.Helper()
	snap, err := swap.Resolve(ctx, st, part)
	if err != nil {
		t.Fatal(err)
	}
	cur := map[string]bool{}
	for _, f := range snap.Files {
		cur[f.Key] = true
	}
	var out []string
	for a, err := range st.List(ctx, layout.GenerationsPrefix(part)) {
		if err != nil {
			t.Fatal(err)
		}
		if !cur[a.Key] && !strings.Contains(a.Key, "/_segments/") { // a head's segments are not data
			out = append(out, a.Key)
		}
	}
	return out
}

func TestAppendAddsFilesAndReRunIsNoOp(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		r1 := mustAppend(t, st, part, "run-1", "a")
		if !r1.Changed || r1.Outcome != swap.Committed || r1.Files != 2 || r1.RunGeneration != r1.Generation {
			t.Fatalf("first append: %+v", r1)
		}
		r2 := mustAppend(t, st, part, "run-2", "b")
		r3 := mustAppend(t, st, part, "run-3", "c")
		if !r3.Changed || r3.Files != 6 || r3.Rows != 9 {
			t.Fatalf("third append: %+v", r3)
		}
		wantSeeds(t, seedsOf(t, st, part), "a", "b", "c")
		snap := checkInvariants(t, st, part)
		if snap.Manifest.Kind != manifest.KindAppend || snap.Manifest.Parent != r2.Generation || snap.Manifest.DataGen() != r1.Generation {
			t.Fatalf("manifest kind %q parent %s data %s", snap.Manifest.Kind, snap.Manifest.Parent, snap.Manifest.DataGen())
		}
		// A re-run of run-1 with other rows: a no-op naming run-1's
		// generation, which stays what the partition holds.
		again, err := appendRun(t, st, part, "run-1", "a-retry", swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if again.Changed || again.Outcome != swap.SameRun || again.RunGeneration != r1.Generation || again.Generation != r3.Generation {
			t.Fatalf("re-run: %+v", again)
		}
		// The re-run staged nothing (Begin knew): and the no-op of an
		// attempt that did stage removes its files.
		txn, err := swap.Begin(ctx, st, part, swap.Options{RunID: "run-2", Append: true})
		if err != nil {
			t.Fatal(err)
		}
		if !txn.AlreadyCommitted() {
			t.Fatal("run-2 not known as committed")
		}
		if r, err := txn.Commit(ctx, stage(t, txn, 2, "b-retry")); err != nil || r.Outcome != swap.SameRun || r.RunGeneration != r2.Generation {
			t.Fatalf("staged re-run: %+v %v", r, err)
		}
		wantSeeds(t, seedsOf(t, st, part), "a", "b", "c")
		if u := unreferenced(t, st, part); len(u) != 0 {
			t.Fatalf("files left behind: %v", u)
		}
	})
}

func TestAppendNeedsRunIDAndRows(t *testing.T) {
	st := memstore.New()
	if _, err := swap.Begin(ctx, st, "dt=1", swap.Options{Append: true}); !errors.Is(err, swap.ErrAppendNeedsRunID) {
		t.Fatalf("no run id: %v", err)
	}
	txn, err := swap.Begin(ctx, st, "dt=1", swap.Options{Append: true, RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx, manifest.Content{}); !errors.Is(err, swap.ErrEmptyCommit) {
		t.Fatalf("empty append: %v", err)
	}
	if _, err := swap.ReadPointer(ctx, st, "dt=1"); !errors.Is(err, swap.ErrNoData) {
		t.Fatalf("empty append changed the partition: %v", err)
	}
}

// TestAppendReRunAfterManyAppends: the pointer remembers 100 commits; a
// re-run of a run 150 appends back is still a no-op, through its record,
// and so is one whose record was never completed (killed between its swap
// and the record's completion), through the manifests' chain.
func TestAppendReRunAfterManyAppends(t *testing.T) {
	st := memstore.New()
	part := "dt=2026-11-29"
	first := mustAppend(t, st, part, "run-0", "s0")
	// run-1's record as an attempt killed right after its swap leaves it.
	second := mustAppend(t, st, part, "run-1", "s1")
	rec, err := swap.ReadRunRecord(ctx, st, part, "run-1")
	if err != nil || rec == nil || rec.Generation != second.Generation {
		t.Fatalf("record %+v %v", rec, err)
	}
	rec.Generation = ""
	data, err := swap.EncodeRunRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, swap.RunKey(part, "run-1"), data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	seeds := []string{"s0", "s1"}
	for i := 2; i < 152; i++ {
		mustAppend(t, st, part, fmt.Sprintf("run-%d", i), fmt.Sprintf("s%d", i))
		seeds = append(seeds, fmt.Sprintf("s%d", i))
	}
	for _, c := range []struct{ run, gen string }{{"run-0", first.Generation}, {"run-1", second.Generation}} {
		r, err := appendRun(t, st, part, c.run, "dup", swap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Changed || r.Outcome != swap.SameRun || r.RunGeneration != c.gen {
			t.Fatalf("re-run of %s after 150 appends: %+v", c.run, r)
		}
	}
	if rec, _ := swap.ReadRunRecord(ctx, st, part, "run-1"); rec == nil || rec.Generation != second.Generation {
		t.Fatalf("the walk did not complete the record: %+v", rec)
	}
	wantSeeds(t, seedsOf(t, st, part), seeds...)
}

// TestAppendRace: many goroutines append distinct runs to one partition
// (from no partition at all: the first commit's race moves the losers'
// files into the winner's data generation), three attempts of each run at
// once: every run's files land exactly once.
func TestAppendRace(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		const runs, attempts = 8, 3
		var wg sync.WaitGroup
		errs := make(chan error, runs*attempts)
		opts := swap.Options{MaxAttempts: 50, MaxElapsed: time.Minute, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}
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
	})
}

// TestAppendWithReplaceAndRollback: a replacing commit replaces what the
// appends added; appends then add to it; a rollback to an append's
// generation restores the files that generation held.
func TestAppendWithReplaceAndRollback(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		st := newStore(t)
		part := "dt=2026-11-29"
		mustCommit(t, st, part, "base", swap.Options{RunID: "replace-1"})
		a1 := mustAppend(t, st, part, "run-1", "a1")
		wantSeeds(t, seedsOf(t, st, part), "base", "a1")
		mustCommit(t, st, part, "base2", swap.Options{RunID: "replace-2"})
		mustAppend(t, st, part, "run-2", "a2")
		wantSeeds(t, seedsOf(t, st, part), "base2", "a2")
		// run-1 appended before the replace: a re-run is still a no-op.
		if r, err := appendRun(t, st, part, "run-1", "a1", swap.Options{}); err != nil || r.Outcome != swap.SameRun || r.RunGeneration != a1.Generation {
			t.Fatalf("re-run after replace: %+v %v", r, err)
		}
		rb, err := swap.Rollback(ctx, st, part, a1.Generation, swap.Options{})
		if err != nil || !rb.Changed {
			t.Fatalf("rollback: %+v %v", rb, err)
		}
		wantSeeds(t, seedsOf(t, st, part), "base", "a1")
		mustAppend(t, st, part, "run-3", "a3")
		wantSeeds(t, seedsOf(t, st, part), "base", "a1", "a3")
		// A rollback to an earlier generation of the same data
		// generation restores fewer files (not a no-op).
		rb, err = swap.Rollback(ctx, st, part, a1.Generation, swap.Options{})
		if err != nil || !rb.Changed {
			t.Fatalf("rollback within a chain of appends: %+v %v", rb, err)
		}
		wantSeeds(t, seedsOf(t, st, part), "base", "a1")
	})
}

// TestAppendCostFlat: the 1,000th append to a partition costs what the
// 2nd does. Requests: the same GETs (the run's record and the base's head,
// whatever came before) and the same PUTs, plus, every SegmentFiles files,
// the PUT of a segment (issued beside the manifest's, no round trip). It
// logs the median times of appends 2-51 and 951-1000 (and their means,
// which a loaded machine's stalls skew) and the head's size; with
// PSWAP_APPEND_COST_S3=1 it also runs on MinIO. Under -race it runs 300
// appends (past the pointer's full history of manifest.MaxHistory), the
// same checks on the 300th; scripts/test.sh runs the 1,000 without -race
// (see race.Share).
func TestAppendCostFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 appends")
	}
	n := race.Share(1000, 300)
	const window = 50
	run := func(t *testing.T, st store.Store) {
		c := storetest.NewCounting(st)
		part := "dt=2026-11-29"
		var first, last map[string]int
		times := make([]time.Duration, n)
		total, lateTotal := 0, 0
		for i := range n {
			c.Reset()
			t0 := time.Now()
			mustAppend(t, c, part, fmt.Sprintf("run-%d", i), fmt.Sprintf("s%d", i))
			times[i] = time.Since(t0)
			switch {
			case i == 1: // the 1st append onto a generation (the 0th creates it)
				first = c.Counts()
			case i == n-1:
				last = c.Counts()
			}
			total += c.Total()
			if i >= n-window {
				lateTotal += c.Total()
			}
		}
		snap := checkInvariants(t, st, part)
		mb, _, err := store.ReadAll(ctx, st, layout.ManifestKey(part, snap.Pointer.Generation))
		if err != nil {
			t.Fatal(err)
		}
		stats := func(d []time.Duration) (median, mean time.Duration) {
			s := slices.Clone(d)
			slices.Sort(s)
			var sum time.Duration
			for _, x := range s {
				sum += x
			}
			return s[len(s)/2], sum / time.Duration(len(s))
		}
		em, ea := stats(times[1 : 1+window])
		mm, _ := stats(times[manifest.MaxHistory : manifest.MaxHistory+window])
		lm, la := stats(times[n-window:])
		t.Logf("append #2 requests %v; #%d %v; %.2f requests an append on average, %.2f over the last %d; median time of #2-#%d %v, of #%d-#%d %v (x%.2f; of #%d-#%d, once the pointer's history is full, %v: x%.2f); means %v, %v (x%.2f); the manifest of %d appends (%d files) is %d bytes",
			first, n, last, float64(total)/float64(n), float64(lateTotal)/window, window, window+1, em, n-window+1, n, lm, float64(lm)/float64(em),
			manifest.MaxHistory+1, manifest.MaxHistory+window, mm, float64(lm)/float64(mm),
			ea, la, float64(la)/float64(ea), n, len(snap.Files), len(mb))
		// The same comparison under the same load: 30 pairs, each the 2nd
		// append to a fresh partition, then the next append to the deep
		// one, interleaved.
		const pairs = 30
		fresh, deep := make([]time.Duration, pairs), make([]time.Duration, pairs)
		for k := range pairs {
			fp := fmt.Sprintf("dt=2026-11-30/k=%d", k)
			mustAppend(t, c, fp, "run-0", "f0")
			t0 := time.Now()
			mustAppend(t, c, fp, "run-1", "f1")
			fresh[k] = time.Since(t0)
			t0 = time.Now()
			mustAppend(t, c, part, fmt.Sprintf("run-%d", n+k), fmt.Sprintf("s%d", n+k))
			deep[k] = time.Since(t0)
		}
		fm, _ := stats(fresh)
		dm, _ := stats(deep)
		t.Logf("interleaved, %d pairs: median 2nd append %v, median append #%d-#%d %v (x%.2f)", pairs, fm, n+1, n+pairs, dm, float64(dm)/float64(fm))
		if last["get"] != first["get"] || last["put-if-match"] != first["put-if-match"] || last["put"] != first["put"] {
			t.Fatalf("requests of append #%d %v, of the 2nd %v", n, last, first)
		}
		if segs := last["put-if-none-match"] - first["put-if-none-match"]; segs < 0 || segs > manifest.MaxSegmentLevel+1 {
			t.Fatalf("append #%d made %d more create-if-absent PUTs than the 2nd (at most a segment per level)", n, segs)
		}
		if len(mb) > 16<<10 {
			t.Fatalf("the manifest of %d appends is %d bytes: it grows with them", n, len(mb))
		}
	}
	t.Run("mem", func(t *testing.T) { run(t, memstore.New()) })
	t.Run("s3", func(t *testing.T) {
		if !testenv.S3Enabled() || os.Getenv("PSWAP_APPEND_COST_S3") == "" {
			t.Skip("PSWAP_APPEND_COST_S3=1 and MinIO")
		}
		run(t, testenv.S3(t))
	})
}
