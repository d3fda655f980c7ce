package audit

import (
	"context"
	"fmt"
	"testing"

	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// Partitions and Collect see a table in both layouts: a legacy partition,
// a migrated one (its manifests listed at both keys, read once), and one
// written in the table-level layout, under a prefix too.
func TestCollectBothLayouts(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	legacy := swaptest.LegacyPartition(t, st, "dt=2026-11-01", 3)
	moved := swaptest.LegacyPartition(t, st, "dt=2026-11-02", 2)
	if _, err := swap.Migrate(ctx, st, "dt=2026-11-02", swap.Options{}); err != nil {
		t.Fatal(err)
	}
	txn, err := swap.Begin(ctx, st, "dt=2026-11-03", swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx, swaptest.Stage(t, st, txn.DataPrefix(), 1, "new")); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"", "dt=2026-11-", "dt=2026-11-02/"} {
		parts, err := Partitions(ctx, st, prefix, CollectOptions{})
		want := "[dt=2026-11-01 dt=2026-11-02 dt=2026-11-03]"
		if prefix == "dt=2026-11-02/" {
			want = "[dt=2026-11-02]"
		}
		if err != nil || fmt.Sprint(parts) != want {
			t.Fatalf("Partitions(%q) = %v %v, want %s", prefix, parts, err, want)
		}
	}
	for part, n := range map[string]int{"dt=2026-11-01": len(legacy), "dt=2026-11-02": len(moved), "dt=2026-11-03": 1} {
		f, err := Collect(ctx, st, part, CollectOptions{})
		if err != nil || f.Pointer == nil || len(f.Manifests) != n || len(f.Data) != n {
			t.Fatalf("%s: %d manifests, %d data folders, pointer %v, %v; want %d", part, len(f.Manifests), len(f.Data), f.Pointer != nil, err, n)
		}
		rows := Derive(f, Options{})
		if len(rows) != n || rows[0].State != "current" {
			t.Fatalf("%s: rows %+v", part, rows)
		}
	}
}
