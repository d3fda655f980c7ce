package integration

import (
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
