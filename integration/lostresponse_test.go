package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// The pointer PUT reaches MinIO (or fake-gcs-server) and is applied, but its reply is lost. With
// the SDK's own retries on, the retry meets 412 (our own write); with them
// off, the error is a transport failure. Both must end as success, never as
// an error or a second generation.
func TestLostPointerReplyIsSuccess(t *testing.T) {
	viaProxyStores(t, func(t *testing.T, viaProxy func(t testing.TB, sdkAttempts int) (store.Store, *faultproxy.Proxy)) {
		testLostPointerReply(t, viaProxy)
	})
	t.Run("azurite", func(t *testing.T) {
		if !testenv.AzureEnabled() {
			t.Skip("needs Azurite behind the fault proxy; scripts/test.sh starts one")
		}
		testLostPointerReply(t, func(t testing.TB, sdkAttempts int) (store.Store, *faultproxy.Proxy) {
			e := newAzuriteEnv(t)
			return e.azureViaProxy(t, sdkAttempts), e.proxy
		})
	})
}

func testLostPointerReply(t *testing.T, viaProxy func(t testing.TB, sdkAttempts int) (store.Store, *faultproxy.Proxy)) {
	for _, tc := range []struct {
		name        string
		action      faultproxy.Action
		sdkAttempts int
	}{
		{"drop-reply/sdk-retries", faultproxy.DropReply, 3},
		{"drop-reply/no-sdk-retry", faultproxy.DropReply, 1},
		{"applied-then-503/sdk-retries", faultproxy.ReplyThen503, 3},
		{"applied-then-503/no-sdk-retry", faultproxy.ReplyThen503, 1},
		{"throttled-429/sdk-retries", faultproxy.Throttle, 3},
		{"throttled-429/no-sdk-retry", faultproxy.Throttle, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, proxy := viaProxy(t, tc.sdkAttempts)
			part := "dt=2026-11-29"
			first, err := commitSeed(t, st, part, "first", swap.Options{RunID: "r0"})
			if err != nil {
				t.Fatal(err)
			}
			dropped := false
			proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
				if r.IsPut() && strings.HasSuffix(r.Path, "/pointer.json") && !dropped {
					dropped = true
					return tc.action
				}
				return faultproxy.Pass
			})
			res, err := commitSeed(t, st, part, "second", swap.Options{RunID: "r1", BaseDelay: 10 * time.Millisecond})
			stats := res.Stats
			if err != nil {
				t.Fatalf("lost reply reported as failure: %v", err)
			}
			if proxy.Count(tc.action) != 1 {
				t.Fatalf("proxy injected %d faults, want 1", proxy.Count(tc.action))
			}
			if !res.Changed || res.Outcome != swap.Committed {
				t.Fatalf("result %+v", res)
			}
			proxy.SetRule(nil)
			snap, err := swap.Resolve(ctx, st, part)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Pointer.Generation != res.Generation || snap.Manifest.Parent != first.Generation || snap.Pointer.Seq != 2 {
				t.Fatalf("current %s seq %d parent %s; committed %s", snap.Pointer.Generation, snap.Pointer.Seq, snap.Manifest.Parent, res.Generation)
			}
			h, _ := swap.History(ctx, st, part, 0)
			if len(h) != 2 {
				t.Fatalf("history has %d generations, want 2 (no doubled commit)", len(h))
			}
			t.Logf("%s: success after %d read-backs, %d retries", tc.name, stats.ReadBacks, stats.Retries)
		})
	}
}
