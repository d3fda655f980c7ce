package integration

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/gc"
	"github.com/pswap/pswap/internal/faultproxy"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Regression (found by TestFaultMix): the manifest PUT is applied but its
// reply is lost; the retry meets 412 (our own write), and the read-back
// that should prove the stored manifest is ours meets a transient 503. The
// commit used to fail with "manifest exists with other content: corrupt
// partition metadata" (not retried, exit 1, and a false alarm of
// corruption); a failed read-back is as transient as any other read.
func TestManifestReadBackFault(t *testing.T) {
	e := minioOnly(t)
	const part = "dt=2026-11-29"
	first := mustCommitRows(t, e.st, part, 3, "first", swap.Options{RunID: "r0"})
	st := e.viaProxy(t, 1) // no SDK retries: every fault reaches pswap
	var putDropped, getFailed atomic.Bool
	e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if !strings.Contains(r.Path, "/_pswap/manifests/") {
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
	res, err := commitRows(st, part, 4, "second", swap.Options{RunID: "r1", BaseDelay: time.Millisecond})
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

// knownBug skips a regression test of a bug in code owned elsewhere that
// is not fixed yet, unless PSWAP_KNOWN_BUGS=1 (then it fails until fixed).
func knownBug(t *testing.T, what string) {
	t.Helper()
	if v := os.Getenv("PSWAP_KNOWN_BUGS"); v == "" || v == "0" {
		t.Skip("known bug, not fixed yet (PSWAP_KNOWN_BUGS=1 runs it): " + what)
	}
}

// Known bug (found by TestFaultMix), staging/staging.go closePart: a data
// file's PUT is applied but its reply is lost; the SDK's own retry meets
// 412 (If-None-Match: *, our own write), and the Stager fails the whole
// commit with "precondition failed" after every byte was uploaded. The key
// is unique to this generation, so a 412 can only be our own earlier
// attempt: read it back and accept it when size and SHA-256 match what was
// written (as swap does for the manifest).
func TestDataPutLostReplyIsNotAFailure(t *testing.T) {
	knownBug(t, "staging: 412 after an SDK retry of a data file's own applied PUT fails the commit")
	e := minioOnly(t)
	const part = "dt=2026-11-29"
	st := e.viaProxy(t, 3) // the SDK retries the lost reply itself
	var dropped atomic.Bool
	e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.IsPut() && strings.Contains(r.Path, "/_pswap/gen/") && dropped.CompareAndSwap(false, true) {
			return faultproxy.DropReply
		}
		return faultproxy.Pass
	})
	res, err := commitRows(st, part, 4, "a", swap.Options{RunID: "r1"})
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

// hookStore wraps a store to stop a client at chosen points.
type hookStore struct {
	store.Store
	beforeDelete func()           // once, before the first deletion
	afterPut     func(key string) // after every successful Put
	beforePut    func(key string) // before every Put
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

// Known bug (found while racing rollback against GC): a rollback to a
// generation retired long ago (beyond Keep, older than MinAge: GC may
// collect it, with the default options) races a garbage collection:
//
//  1. GC lists the partition and plans to collect generation G1;
//  2. `rollback --to G1` reads G1's manifest, lists its files (all there)
//     and writes its own manifest R (data_generation G1);
//  3. GC re-reads the pointer (unchanged: the rollback has not swapped
//     yet) and deletes G1's manifest and data files;
//  4. the rollback swaps the pointer to R.
//
// R is current and its files are gone: I2 broken, every reader fails. GC
// protects data that a young uncommitted manifest refers to, but only for
// manifests in its listing, taken before R existed; swap.Rollback never
// looks again after writing R. A fix needs both sides: gc (gc/gc.go
// collectListed / plan.go) deletes manifests in a batch of their own, then
// re-lists the partition's manifests and drops from the data batch every
// generation a new manifest refers to; swap.Rollback, after writing R and
// before the pointer swap, re-reads G1's manifest and refuses
// (ErrGenerationNotFound) when it is gone. Then either the rollback sees
// G1's manifest deleted, or GC's re-list sees R.
func TestRollbackRacingGCKeepsDataOfCurrent(t *testing.T) {
	knownBug(t, "gc + swap.Rollback: GC can delete the data of a generation a rollback is making current")
	e := newFileEnv(t)
	const part = "dt=2026-11-29"
	g1 := mustCommitRows(t, e.st, part, 3, "g1", swap.Options{RunID: "g1"})
	mustCommitRows(t, e.st, part, 4, "g2", swap.Options{RunID: "g2"})
	mustCommitRows(t, e.st, part, 5, "g3", swap.Options{RunID: "g3"})
	// Everything was written 8 hours ago: G1 is retired longer than the
	// default MinAge (6h) and beyond the default Keep (1).
	old := time.Now().Add(-8 * time.Hour)
	filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return err
	})

	gcPlanned, rManifestWritten, gcDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	gcStore := &hookStore{Store: e.st, beforeDelete: func() { close(gcPlanned); <-rManifestWritten }}
	rbStore := &hookStore{Store: e.st,
		afterPut: func(key string) {
			if strings.Contains(key, "/_pswap/manifests/") {
				close(rManifestWritten)
			}
		},
		beforePut: func(key string) {
			if key == swap.PointerKey(part) {
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
	// GC has listed and planned once it reaches its first deletion; the
	// rollback starts then.
	select {
	case <-gcPlanned:
	case <-gcDone:
		t.Fatalf("gc deleted nothing: %+v %v", rep, gcErr)
	}
	_, rbErr := swap.Rollback(ctx, rbStore, part, g1.Generation, swap.Options{RunID: "rb"})
	<-gcDone
	if gcErr != nil {
		t.Fatalf("gc: %v", gcErr)
	}
	t.Logf("gc collected %v; rollback: %v", rep.Collected, rbErr)
	e.check(t, checkOpts{expect: []string{part}})
}
