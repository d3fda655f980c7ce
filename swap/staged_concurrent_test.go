package swap_test

import (
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// Two processes commit the same staged generation (an orchestrator's retry
// while the first attempt still runs). The second read the staged record
// before the first committed and deleted it, and reaches its grace check
// too late: its refusal must not delete the data of the generation the
// first one made current. Found by internal/testing/sim (seed 196 before the fix:
// the current generation lost every file).
func TestCommitStagedTwiceAtOnceKeepsTheData(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	mem := memstore.New(memstore.Options{Now: func() time.Time { return now }})
	gen, _ := stageOnly(t, mem, "a", 3)
	opts := swap.Options{RunID: "r1"}
	second := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op != "get" || c.Key != layout.StagedKey(spart, gen) || c.N != 1 {
			return storetest.Fault{}
		}
		return storetest.Fault{Hook: func() {
			// The first process commits while the second holds the record.
			r, err := swap.CommitStaged(ctx, mem, spart, gen, opts, nil)
			if err != nil || !r.Changed || r.Generation != gen {
				t.Errorf("first commit --staged: %+v %v", r, err)
			}
			now = now.Add(swap.DefaultGracePeriod + time.Hour)
		}}
	})
	r, err := swap.CommitStaged(ctx, second, spart, gen, opts, nil)
	t.Logf("second commit --staged: %+v, %v", r, err)
	if err == nil && r.Changed {
		t.Fatalf("the second commit --staged reports a change: %+v", r)
	}
	checkInvariants(t, mem, spart)
	snap, err := swap.Resolve(ctx, mem, spart)
	if err != nil || snap.Manifest.Generation != gen {
		t.Fatalf("current after both: %+v %v", snap, err)
	}
}
