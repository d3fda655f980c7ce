package pswap_test

import (
	"context"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/memstore"
)

// TestMergeDeleteOnlyAbsentPartition: a change log whose only row for a
// day that never loaded is a delete leaves that day absent (a no-op,
// outcome NothingToDelete, changed false) instead of creating it empty,
// which made `status --require-complete` report the day as loaded (issue
// 39, item 4). The day it updates merges as usual.
func TestMergeDeleteOnlyAbsentPartition(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	seedMergeTable(t, tbl)
	in := writeFile(t, t.TempDir(), "cdc.csv", "dt,order_id,store,amount,op\n"+
		"2026-11-27,2,berlin,22,U\n"+
		"2026-11-30,9,,0,D\n")
	res, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}, DeleteWhen: "op=D"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Partitions) != 2 {
		t.Fatalf("partitions %+v", res.Partitions)
	}
	absent := res.Partitions[1]
	if absent.Partition != "dt=2026-11-30" || absent.Result.Changed || absent.Result.Outcome != pswap.NothingToDelete || absent.Err != nil {
		t.Errorf("the delete-only day: %+v, want unchanged, outcome %s", absent, pswap.NothingToDelete)
	}
	if g, ok := pointers(t, st)["dt=2026-11-30"]; ok {
		t.Errorf("the delete-only day was created (generation %s)", g)
	}
	if !res.Partitions[0].Result.Changed {
		t.Errorf("the updated day: %+v", res.Partitions[0])
	}
}
