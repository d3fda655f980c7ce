package pswap_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// Table.Partitions follows the table's layout from table.json
// (swap.TableListOptions, one GET): on an hourly table it reads one
// pointer per partition and none in the day folders above them (it read
// one per day), and a folder of another layout is not listed.
func TestPartitionsFollowTableLayout(t *testing.T) {
	mem := memstore.New()
	str := tablemeta.Type{Kind: tablemeta.String}
	doc := &tablemeta.Table{Layout: tablemeta.LayoutTable, Version: tablemeta.VersionLayout, LastColumnID: 3,
		PartitionColumns: []tablemeta.PartitionColumn{{ID: 2, Name: "dt", Type: str}, {ID: 3, Name: "hr", Type: str}},
		Schema:           tablemeta.Schema{Fields: []tablemeta.Field{{ID: 1, Name: "id", Type: tablemeta.Type{Kind: tablemeta.Long}, Nullable: true}}}}
	if _, _, _, err := tablemeta.Create(ctx, mem, doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for d := range 3 {
		for h := range 4 {
			part := fmt.Sprintf("dt=2026-11-%02d/hr=%02d", d+1, h)
			want = append(want, part)
			txn, err := swap.Begin(ctx, mem, part, swap.Options{})
			if err == nil {
				_, err = txn.Commit(ctx, swaptest.Stage(t, mem, txn.DataPrefix(), 1, part))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// Not of the layout: never read, never listed.
	if _, err := mem.Put(ctx, "_pswap/p/other=1/pointer.json", []byte("{not json"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	cs := storetest.NewCounting(mem)
	got, err := pswap.NewTable(cs).Partitions(ctx, "")
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Partitions = %q, %v; want %q", got, err, want)
	}
	// table.json and the 12 pointers; the listings of _pswap/p/ and of
	// the 3 days, none of the root (no legacy partition can be there).
	if c := cs.Counts(); c["get"] != 1+12 || c["list"] != 1+3 || cs.Total() != 1+12+1+3 {
		t.Fatalf("Partitions: requests %v, want 13 GETs and 4 listings", c)
	}
}
