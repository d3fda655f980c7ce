package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// Retries happen in one layer: ls has no loop of its own (the SDK retries
// each request, up to --max-attempts), so the listing's pointer reads, which
// the library retries by default (swap.ListPointers), make one attempt each
// at pswap's layer: a pointer GET that fails is not repeated on top of the
// SDK's attempts.
func TestLsRetriesInOneLayer(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	for _, part := range []string{"dt=2026-11-01", "dt=2026-11-02", "dt=2026-11-03"} {
		txn, err := swap.Begin(ctx, mem, part, swap.Options{})
		if err == nil {
			_, err = txn.Commit(ctx, swaptest.Stage(t, mem, txn.DataPrefix(), 1, part))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	code, stderr, n := runFailingGet(t, mem, layout.PointerKey("dt=2026-11-02"), "ls")
	if code == 0 || !strings.Contains(stderr, "503") {
		t.Fatalf("ls with a pointer that answers 503: exit %d, stderr %q", code, stderr)
	}
	if n != 1 {
		t.Fatalf("ls read the failing pointer %d times at pswap's layer, want once (the SDK retries)", n)
	}
}

// gc too: its reads of the Iceberg metadata (the protection of what the
// snapshots name, the expiry), which the library retries by default
// (lakehouse.ExpireOptions.MaxAttempts), make one attempt each at pswap's
// layer.
func TestGCRetriesInOneLayer(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	txn, err := swap.Begin(ctx, mem, "dt=2026-11-01", swap.Options{})
	if err == nil {
		_, err = txn.Commit(ctx, swaptest.Stage(t, mem, txn.DataPrefix(), 1, "a"))
	}
	if err != nil {
		t.Fatal(err)
	}
	code, stderr, n := runFailingGet(t, mem, lakehouse.VersionHintKey, "gc")
	if code == 0 || !strings.Contains(stderr, "503") {
		t.Fatalf("gc with a version hint that answers 503: exit %d, stderr %q", code, stderr)
	}
	if n != 1 {
		t.Fatalf("gc read the version hint %d times at pswap's layer, want once (the SDK retries)", n)
	}
}

// runFailingGet runs pswap with args on mem, every GET of key answering
// 503, and returns the exit status, stderr and the GETs of key.
func runFailingGet(t *testing.T, mem store.Store, key string, args ...string) (code int, stderr string, gets int64) {
	t.Helper()
	var n atomic.Int64
	flaky := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "get" && c.Key == key {
			n.Add(1)
			return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
		}
		return storetest.Fault{}
	})
	var out, errb bytes.Buffer
	a := &app{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv:    func(string) string { return "" },
		wrapStore: func(store.Store) store.Store { return flaky }}
	code = run(a, append([]string{"--table", "file://" + t.TempDir()}, args...))
	return code, errb.String(), n.Load()
}
