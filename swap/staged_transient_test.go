package swap_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// A re-run of a staged commit whose earlier run died after writing its
// manifest reads that manifest back to settle the commit. A transient
// failure of that read is transient for the caller, who retries; it is
// not "corrupt", and nothing changes.
func TestCommitStagedRerunTransientRead(t *testing.T) {
	mem := memstore.New()
	mustCommit(t, mem, spart, "base", swap.Options{})
	gen, c := stageOnly(t, mem, "staged", 2)
	died := errors.New("process killed")
	first := storetest.NewFaulty(mem, func(call storetest.Call) storetest.Fault {
		if call.Op == "put" && call.Key == layout.PointerKey(spart) {
			return storetest.Fault{Before: fmt.Errorf("%w: %w", store.ErrAccessDenied, died)}
		}
		return storetest.Fault{}
	})
	if _, err := swap.CommitStaged(ctx, first, spart, gen, swap.Options{}, nil); !errors.Is(err, died) {
		t.Fatalf("first run: %v", err)
	}
	if _, err := mem.Stat(ctx, layout.ManifestKey(spart, gen)); err != nil {
		t.Fatalf("the first run left no manifest: %v", err)
	}
	before := checkInvariants(t, mem, spart)

	// The re-run: its write of the manifest is refused (it exists) and
	// read back (the first GET, which finds other bytes); settling then
	// reads the earlier manifest again, and that read fails with a 503.
	flaky := storetest.NewFaulty(mem, func(call storetest.Call) storetest.Fault {
		if call.Op == "get" && call.Key == layout.ManifestKey(spart, gen) && call.N >= 2 {
			return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
		}
		return storetest.Fault{}
	})
	_, err := swap.CommitStaged(ctx, flaky, spart, gen, swap.Options{MaxAttempts: 1}, nil)
	if err == nil || errors.Is(err, swap.ErrCorrupt) || !store.IsRetryable(err) {
		t.Fatalf("re-run with the manifest unreadable: %v; want a retryable error, not corrupt", err)
	}
	after := checkInvariants(t, mem, spart)
	if after.Pointer.Generation != before.Pointer.Generation {
		t.Fatalf("a failed re-run changed the current generation: %s -> %s", before.Pointer.Generation, after.Pointer.Generation)
	}
	if !stagedExists(t, mem, gen) {
		t.Fatal("the staged record is gone after a failed re-run")
	}
	// Once the store answers, the re-run commits it.
	r, err := swap.CommitStaged(ctx, mem, spart, gen, swap.Options{}, nil)
	if err != nil || !r.Changed || r.Rows != c.Rows {
		t.Fatalf("re-run: %+v %v", r, err)
	}
}

// One 503 on any read before the swap (the staged record, the listing of
// its files) is retried, as the transaction's own requests are: the
// commit succeeds and counts the retries.
func TestCommitStagedRetriesTransientReads(t *testing.T) {
	for _, op := range []string{"get", "list"} {
		t.Run(op, func(t *testing.T) {
			mem := memstore.New()
			mustCommit(t, mem, spart, "base", swap.Options{})
			gen, c := stageOnly(t, mem, "staged", 2)
			var hit int
			flaky := storetest.NewFaulty(mem, func(call storetest.Call) storetest.Fault {
				if call.Op == op && call.N == 1 && (op == "list" || call.Key == layout.StagedKey(spart, gen)) {
					hit++
					return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
				}
				return storetest.Fault{}
			})
			r, err := swap.CommitStaged(ctx, flaky, spart, gen, swap.Options{BaseDelay: 1}, nil)
			if err != nil || !r.Changed || r.Rows != c.Rows {
				t.Fatalf("CommitStaged after one 503 on %s: %+v %v", op, r, err)
			}
			if hit == 0 || r.Stats.Retries < 1 {
				t.Fatalf("fault hit %d times, retries %d", hit, r.Stats.Retries)
			}
			if snap := checkInvariants(t, mem, spart); snap.Manifest.DataGen() != gen {
				t.Fatalf("current data generation %s, want %s", snap.Manifest.DataGen(), gen)
			}
		})
	}
}
