package gc_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// raceEnv is a store and a way to measure how long a reader took, in the
// time the store's clock counts.
type raceEnv struct {
	st     store.Store
	clock  func() time.Time // monotonic where possible
	minAge time.Duration    // in the store's time
	run    time.Duration    // how long to run, in real time
	// pause between a writer's commits and a reader's reads, so that 16
	// busy goroutines on a small machine leave GC its share of the CPU.
	writerPause, readerPause time.Duration
	minRounds                int64 // GC rounds that make the run count
}

// TestRaceWritersReadersGC runs 8 committing writers, 8 readers and a GC
// loop on one partition. GC keeps no generation for rollback and only
// MinAge protects readers, so it collects as much as it is ever allowed
// to. Readers resolve the pointer, then read every file, and fail on any
// missing object unless they took longer than MinAge. After each GC round
// the generation current right after it must have lost nothing.
func TestRaceWritersReadersGC(t *testing.T) {
	t.Run("mem", func(t *testing.T) {
		t.Parallel()
		// A clock 20 times as fast as real time: a 10s MinAge passes in half
		// a real second, so GC collects many generations in a short run.
		start, base := time.Now(), time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time { return base.Add(time.Since(start) * 20) }
		raceRun(t, raceEnv{st: memstore.New(memstore.Options{Now: clock}), clock: clock, minAge: 10 * time.Second, run: 2 * time.Second,
			writerPause: 20 * time.Millisecond, readerPause: 10 * time.Millisecond, minRounds: 5})
	})
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		st, err := filestore.New(filepath.Join(t.TempDir(), "table"))
		if err != nil {
			t.Fatal(err)
		}
		raceRun(t, raceEnv{st: st, clock: time.Now, minAge: time.Second, run: 4 * time.Second,
			writerPause: 10 * time.Millisecond, readerPause: 10 * time.Millisecond, minRounds: 5})
	})
	t.Run("s3", func(t *testing.T) {
		if !testenv.S3Enabled() {
			t.Skip("S3 tests need MinIO: run scripts/test.sh")
		}
		t.Parallel()
		// MinIO shares the machine's cores with the test: lighter load.
		raceRun(t, raceEnv{st: testenv.S3(t), clock: time.Now, minAge: time.Second, run: 5 * time.Second,
			writerPause: 100 * time.Millisecond, readerPause: 50 * time.Millisecond, minRounds: 3})
	})
}

func raceRun(t *testing.T, env raceEnv) {
	st := env.st
	mustCommit(t, st, part, "initial")
	var (
		stop                           atomic.Bool
		wg                             sync.WaitGroup
		commits, conflicts             atomic.Int64
		reads, slowReads               atomic.Int64
		rounds, busy, deleted, orphans atomic.Int64
	)
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		stop.Store(true)
	}
	for w := range 8 {
		wg.Go(func() {
			opts := swap.Options{RunID: fmt.Sprint("writer-", w), Force: true, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}
			if w%2 == 0 {
				opts.OnConflict = swap.Overwrite
			}
			for i := 0; !stop.Load(); i++ {
				opts.RunID = fmt.Sprintf("writer-%d-%d", w, i)
				_, err := commit(t, st, part, opts.RunID, opts)
				switch {
				case err == nil:
					commits.Add(1)
				case errors.Is(err, swap.ErrConflict):
					conflicts.Add(1)
				default:
					fail("writer %d: %v", w, err)
				}
				time.Sleep(env.writerPause)
			}
		})
	}
	for r := range 8 {
		wg.Go(func() {
			for !stop.Load() {
				t0 := env.clock()
				snap, err := swap.Resolve(ctx, st, part)
				if err != nil {
					if env.clock().Sub(t0) < env.minAge {
						fail("reader %d: resolve: %v", r, err)
					} else {
						slowReads.Add(1)
					}
					continue
				}
				for _, f := range snap.Files {
					b, _, err := store.ReadAll(ctx, st, f.Key)
					if err != nil {
						if took := env.clock().Sub(t0); took < env.minAge {
							fail("reader %d: generation %s resolved %s ago: %v", r, snap.Pointer.Generation, took, err)
						} else {
							slowReads.Add(1)
						}
						break
					}
					sum := sha256.Sum256(b)
					if manifest.SHA256Checksum(sum[:]) != f.Checksum {
						fail("reader %d: %s has the wrong checksum", r, f.Key)
					}
				}
				reads.Add(1)
				time.Sleep(env.readerPause)
			}
		})
	}
	// Writers commit all the time: GC needs more than the default attempts
	// to find a moment when the pointer holds still for one plan.
	opts := gc.Options{Keep: gc.None, MinAge: env.minAge, MaxAttempts: 50}
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			var rep gc.Report
			var err error
			if i%4 == 3 {
				var tr gc.TableReport
				tr, err = gc.Table(ctx, st, "", opts)
				if len(tr.Partitions) == 1 {
					rep = tr.Partitions[0]
				}
			} else {
				rep, err = gc.Partition(ctx, st, part, opts)
			}
			if errors.Is(err, gc.ErrBusy) {
				busy.Add(1)
			} else if err != nil {
				fail("gc: %v", err)
				return
			}
			rounds.Add(1)
			deleted.Add(int64(rep.Objects))
			orphans.Add(int64(len(rep.Orphans)))
			// What is current right after GC has lost nothing.
			b, err := swap.ReadPointer(ctx, st, part)
			if err != nil {
				fail("read pointer after gc: %v", err)
				return
			}
			m, err := swap.ReadManifest(ctx, st, part, b.Pointer.Generation)
			if err != nil {
				fail("the current generation's manifest after gc: %v", err)
				return
			}
			for _, f := range swap.Files(st, m) {
				if slices.Contains(rep.Keys, f.Key) {
					fail("gc deleted %s of the current generation %s", f.Key, m.Generation)
				}
			}
			if slices.Contains(rep.Keys, layout.ManifestKey(part, m.Generation)) || slices.Contains(rep.Keys, layout.PointerKey(part)) {
				fail("gc deleted the current manifest or the pointer")
			}
		}
	})
	// Run for env.run, and on a loaded machine longer (up to ten times),
	// until the race has really raced.
	enough := func() bool {
		return commits.Load() >= 10 && reads.Load() >= 10 && rounds.Load() >= env.minRounds && deleted.Load() > 0
	}
	for start := time.Now(); !stop.Load() && time.Since(start) < 10*env.run; {
		time.Sleep(50 * time.Millisecond)
		if time.Since(start) >= env.run && enough() {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d commits, %d conflicts, %d reads (%d slower than MinAge), %d gc rounds (%d busy), %d objects deleted, %d orphans",
		commits.Load(), conflicts.Load(), reads.Load(), slowReads.Load(), rounds.Load(), busy.Load(), deleted.Load(), orphans.Load())
	if t.Failed() {
		return
	}
	if !enough() {
		t.Fatalf("the race did not race: %d commits, %d reads, %d gc rounds, %d objects deleted",
			commits.Load(), reads.Load(), rounds.Load(), deleted.Load())
	}
	checkCurrent(t, st, part)
	if _, err := gc.Partition(ctx, st, part, opts); err != nil {
		t.Fatal(err)
	}
	checkCurrent(t, st, part)
}
