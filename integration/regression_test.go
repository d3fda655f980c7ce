package integration

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Regression (found by TestFaultMix): the manifest PUT is applied but its
// reply is lost; the retry meets 412 (our own write), and the read-back
// that should prove the stored manifest is ours meets a transient 503. The
// commit used to fail with "manifest exists with other content: corrupt
// partition metadata" (not retried, exit 1, and a false alarm of
// corruption); a failed read-back is as transient as any other read.
func TestManifestReadBackFault(t *testing.T) { minioAndGCS(t, testManifestReadBackFault) }

func testManifestReadBackFault(t *testing.T, e *tableEnv) {
	const part = "dt=2026-11-29"
	first := mustCommitRows(t, e.st, part, 3, "first", pswap.CommitOptions{RunID: "r0"})
	st := e.viaProxy(t, 1) // no SDK retries: every fault reaches pswap
	var putDropped, getFailed atomic.Bool
	e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if pathKind(r.Path) != layout.KindManifest {
			return faultproxy.Pass
		}
		if r.IsPut() && putDropped.CompareAndSwap(false, true) {
			return faultproxy.DropReply
		}
		if r.Method == "GET" && getFailed.CompareAndSwap(false, true) {
			return faultproxy.SlowDown
		}
		return faultproxy.Pass
	})
	res, err := commitRows(st, part, 4, "second", pswap.CommitOptions{RunID: "r1", BaseDelay: time.Millisecond})
	e.proxy.SetRule(nil)
	if !putDropped.Load() || !getFailed.Load() {
		t.Fatalf("faults not injected: put dropped %v, read-back failed %v", putDropped.Load(), getFailed.Load())
	}
	if err != nil {
		t.Fatalf("a transient failure of the manifest read-back failed the commit: %v", err)
	}
	state := e.check(t, checkOpts{expect: []string{part}})
	if ps := state[part]; ps.gen() != res.Generation || ps.snap.Manifest.Parent != first.Generation || len(ps.hist) != 2 {
		t.Fatalf("current %s (parent %s, %d generations), committed %s", ps.gen(), ps.snap.Manifest.Parent, len(ps.hist), res.Generation)
	}
}

// Regression (found by TestFaultMix; fixed in staging): a data file's PUT
// is applied but its reply is lost; the SDK's own retry meets 412
// (If-None-Match: *, our own write). The Stager used to fail the whole
// commit with "precondition failed" after every byte was uploaded; the key
// is unique to this generation, so it now reads the object back and
// accepts it when it holds exactly the bytes written.
func TestDataPutLostReplyIsNotAFailure(t *testing.T) {
	minioAndGCS(t, testDataPutLostReplyIsNotAFailure)
}

func testDataPutLostReplyIsNotAFailure(t *testing.T, e *tableEnv) {
	const part = "dt=2026-11-29"
	st := e.viaProxy(t, 3) // the SDK retries the lost reply itself
	var dropped atomic.Bool
	e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.IsPut() && pathKind(r.Path) == layout.KindData && dropped.CompareAndSwap(false, true) {
			return faultproxy.DropReply
		}
		return faultproxy.Pass
	})
	res, err := commitRows(st, part, 4, "a", pswap.CommitOptions{RunID: "r1"})
	e.proxy.SetRule(nil)
	if !dropped.Load() {
		t.Fatal("no data PUT was dropped")
	}
	if err != nil {
		t.Fatalf("a lost reply of a data file's PUT failed the commit: %v", err)
	}
	e.check(t, checkOpts{expect: []string{part}})
	if res.Outcome != swap.Committed {
		t.Fatalf("outcome %s", res.Outcome)
	}
}

// Regression (found by PSWAP_STRESS TestFaultMix; fixed in staging): after
// a data PUT's 412, the read-back that proves the object is ours met a
// transient failure (503, 409, reset) and the Stager failed the commit at
// once; the read-back is a read like any other and is now retried with
// backoff, as swap.putManifest does for the manifest.
func TestDataPutReadBackFault(t *testing.T) { minioAndGCS(t, testDataPutReadBackFault) }

func testDataPutReadBackFault(t *testing.T, e *tableEnv) {
	const part = "dt=2026-11-29"
	st := e.viaProxy(t, 3)
	var dropped, getFailed atomic.Bool
	e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if pathKind(r.Path) != layout.KindData {
			return faultproxy.Pass
		}
		if r.IsPut() && dropped.CompareAndSwap(false, true) {
			return faultproxy.DropReply
		}
		if r.Method == "GET" && dropped.Load() && getFailed.CompareAndSwap(false, true) {
			return faultproxy.Conflict
		}
		return faultproxy.Pass
	})
	_, err := commitRows(st, part, 4, "a", pswap.CommitOptions{RunID: "r1"})
	e.proxy.SetRule(nil)
	if !dropped.Load() || !getFailed.Load() {
		t.Fatalf("faults not injected: dropped %v, read-back failed %v", dropped.Load(), getFailed.Load())
	}
	if err != nil {
		t.Fatalf("a transient failure of the read-back failed the commit: %v", err)
	}
	e.check(t, checkOpts{expect: []string{part}})
}

// hookStore wraps a store to stop a client at chosen points.
type hookStore struct {
	store.Store
	beforeDelete func()           // once, before the first deletion
	afterPut     func(key string) // after every successful Put
	beforePut    func(key string) // before every Put
	afterGet     func(key string) // after every Get
	once         sync.Once
}

func (h *hookStore) Delete(ctx context.Context, key string) error {
	if h.beforeDelete != nil {
		h.once.Do(h.beforeDelete)
	}
	return h.Store.Delete(ctx, key)
}

func (h *hookStore) Put(ctx context.Context, key string, data []byte, o store.PutOptions) (store.Attrs, error) {
	if h.beforePut != nil {
		h.beforePut(key)
	}
	a, err := h.Store.Put(ctx, key, data, o)
	if err == nil && h.afterPut != nil {
		h.afterPut(key)
	}
	return a, err
}

func (h *hookStore) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	rc, a, err := h.Store.Get(ctx, key)
	if h.afterGet != nil {
		h.afterGet(key)
	}
	return rc, a, err
}

// Regression (found while racing rollback against GC; fixed in gc and
// swap): a rollback to a generation retired long ago (beyond Keep, older
// than MinAge: GC may collect it, with the default options) raced a
// garbage collection:
//
//  1. GC lists the partition and plans to collect generation G1;
//  2. `rollback --to G1` reads G1's manifest, lists its files (all there)
//     and writes its own manifest R (data_generation G1);
//  3. GC re-reads the pointer (unchanged: the rollback has not swapped
//     yet) and deletes G1's manifest and data files;
//  4. the rollback swaps the pointer to R.
//
// R was current and its files gone: I2 broken, every reader failed. Now GC
// deletes manifests first and re-lists them before deleting data, sparing
// data a new manifest names, and the rollback re-reads G1's manifest after
// writing R. Both orders of the last two steps are forced here:
//   - gc-first: G1's manifest is gone when the rollback re-reads it: the
//     rollback is refused at once (no retries: a missing manifest does not
//     come back) and nothing changes;
//   - rollback-first: the rollback re-read G1's manifest before GC deleted
//     it; GC's re-list sees R and spares G1's data; the rollback lands
//     whole.
func TestRollbackRacingGCKeepsDataOfCurrent(t *testing.T) {
	for _, order := range []string{"gc-first", "rollback-first"} {
		t.Run(order, func(t *testing.T) {
			e := newFileEnv(t)
			const part = "dt=2026-11-29"
			g1 := mustCommitRows(t, e.st, part, 3, "g1", pswap.CommitOptions{RunID: "g1"})
			mustCommitRows(t, e.st, part, 4, "g2", pswap.CommitOptions{RunID: "g2"})
			g3 := mustCommitRows(t, e.st, part, 5, "g3", pswap.CommitOptions{RunID: "g3"})
			// Everything was written 8 hours ago: G1 is retired longer than
			// the default MinAge (6h) and beyond the default Keep (1).
			old := time.Now().Add(-8 * time.Hour)
			filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					os.Chtimes(p, old, old)
				}
				return err
			})

			gcPlanned, rWritten, reRead, gcDone := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
			g1Manifest := layout.ManifestKey(part, g1.Generation)
			var written, reReadOnce sync.Once
			gcStore := &hookStore{Store: e.st, beforeDelete: func() {
				close(gcPlanned)
				if order == "gc-first" {
					<-rWritten
				} else {
					<-reRead
				}
			}}
			rbStore := &hookStore{Store: e.st,
				afterPut: func(key string) {
					if pathKind(key) == layout.KindManifest {
						written.Do(func() { close(rWritten) })
						if order == "gc-first" {
							<-gcDone // GC deletes G1 before the rollback looks again
						}
					}
				},
				afterGet: func(key string) {
					if key == g1Manifest && chanClosed(rWritten) {
						reReadOnce.Do(func() { close(reRead) })
					}
				},
				beforePut: func(key string) {
					if key == layout.PointerKey(part) {
						<-gcDone
					}
				},
			}
			var rep gc.Report
			var gcErr error
			go func() {
				defer close(gcDone)
				rep, gcErr = gc.Partition(ctx, gcStore, part, gc.Options{})
			}()
			// GC has listed and planned once it reaches its first deletion;
			// the rollback starts then.
			select {
			case <-gcPlanned:
			case <-gcDone:
				t.Fatalf("gc deleted nothing: %+v %v", rep, gcErr)
			}
			res, rbErr := swap.Rollback(ctx, rbStore, part, g1.Generation, swap.Options{RunID: "rb"})
			stats := res.Stats
			<-gcDone
			if gcErr != nil {
				t.Fatalf("gc: %v", gcErr)
			}
			t.Logf("gc collected %v; rollback: %v", rep.Collected, rbErr)
			state := e.check(t, checkOpts{expect: []string{part}})
			switch order {
			case "gc-first":
				if !errors.Is(rbErr, swap.ErrGenerationNotFound) {
					t.Errorf("rollback to a generation collected meanwhile: %v, want ErrGenerationNotFound", rbErr)
				}
				if stats.Retries != 0 {
					t.Errorf("the refused rollback retried %d reads of a manifest that is gone", stats.Retries)
				}
				if state[part].gen() != g3.Generation {
					t.Errorf("a refused rollback changed the partition")
				}
			case "rollback-first":
				if rbErr != nil || state[part].gen() != res.Generation || state[part].snap.Manifest.DataGen() != g1.Generation {
					t.Errorf("rollback: %v; current %s", rbErr, state[part].gen())
				}
			}
		})
	}
}

func chanClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Regression (found by TestCrashCommit on file://): a writer killed in the
// middle of a file leaves the file store's temporary file
// (".part-00000.parquet.<random>.pswap-tmp") in its generation folder.
// List hides temporary files, so GC never saw them and they stayed
// forever: a disk leak per crash. The file store now reports them as
// unfinished uploads (store.UploadLister), which GC aborts once they are
// older than the orphan age, like S3's abandoned multipart uploads.
func TestGCRemovesKilledWritersTempFiles(t *testing.T) {
	e := newFileEnv(t)
	const part = "dt=2026-11-29"
	mustCommitRows(t, e.st, part, 3, "a", pswap.CommitOptions{RunID: "a"})
	// Two writers that never finished: one died two days ago, one is
	// still writing.
	var temps []string
	for _, gen := range []string{"01a10000-0000-7000-8000-000000000001", "01a10000-0000-7000-8000-000000000002"} {
		w, err := e.st.NewWriter(ctx, layout.DataPrefix(part, gen)+"part-00000.parquet", store.WriterOptions{PutOptions: store.PutOptions{IfNoneMatch: true}})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("half a parquet file"))
		m, _ := filepath.Glob(filepath.Join(e.dir, filepath.FromSlash(layout.DataPrefix(part, gen)), ".*.pswap-tmp"))
		if len(m) != 1 {
			t.Fatalf("temporary files of %s: %v", gen, m)
		}
		temps = append(temps, m[0])
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(temps[0], old, old); err != nil {
		t.Fatal(err)
	}
	r := e.runCLI(t, "gc", "--table", e.url, "--json")
	if r.code != 0 {
		t.Fatalf("gc: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(temps[0]); err == nil {
		t.Errorf("gc left the two-day-old temporary file of a dead writer: %s", temps[0])
	} else if _, err := os.Stat(filepath.Dir(temps[0])); err == nil {
		t.Errorf("gc left the dead writer's empty generation folder")
	}
	if _, err := os.Stat(temps[1]); err != nil {
		t.Errorf("gc removed the temporary file of a writer still writing: %v", err)
	}
	e.check(t, checkOpts{expect: []string{part}})
}
