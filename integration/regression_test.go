package integration

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/faultproxy"
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
