package swap_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// createTable writes the table.json of a table of these partition columns,
// created in the table-level layout.
func createTable(t *testing.T, st store.Store, cols ...string) {
	t.Helper()
	str := tablemeta.Type{Kind: tablemeta.String}
	doc := &tablemeta.Table{Layout: tablemeta.LayoutTable, Version: tablemeta.VersionLayout}
	for i, c := range cols {
		doc.PartitionColumns = append(doc.PartitionColumns, tablemeta.PartitionColumn{ID: i + 2, Name: c, Type: str})
	}
	doc.LastColumnID = len(cols) + 1
	doc.Schema = tablemeta.Schema{Fields: []tablemeta.Field{{ID: 1, Name: "id", Type: tablemeta.Type{Kind: tablemeta.Long}, Nullable: true}}}
	if _, _, _, err := tablemeta.Create(ctx, st, doc); err != nil {
		t.Fatal(err)
	}
}

// A listing follows the table's layout from table.json (TableListOptions,
// one GET; ListPointers ignored it, and still does): on an hourly
// table (and one of three custom columns) it reads one pointer per
// partition and none of the folders above them (it read one per day), it
// lists each level once, and it does not walk the root for partitions of
// the legacy layout, which a table created in the table-level layout
// cannot have. A folder that is not of the layout is not read.
func TestListPointersFollowsTableLayout(t *testing.T) {
	for _, c := range []struct {
		name   string
		cols   []string
		parts  []string
		uppers int // folders above the partitions: listed once each
	}{
		{"hourly", []string{"dt", "hr"}, keys("dt=2026-11-%02d/hr=%02d", 3, 6), 3},
		{"monthly", []string{"month"}, keys("month=2026-%02d", 5, 0), 0},
		{"custom", []string{"region", "dt", "hr"}, append(keys("region=eu/dt=2026-11-%02d/hr=%02d", 2, 3), keys("region=us/dt=2026-11-%02d/hr=%02d", 2, 3)...), 2 + 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memstore.New()
			createTable(t, mem, c.cols...)
			commitMany(t, mem, c.parts, 1, 1)
			// Not of the layout: never read.
			if _, err := mem.Put(ctx, "_pswap/p/other=1/pointer.json", []byte("{not json"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			cs := storetest.NewCounting(mem)
			opts, err := swap.TableListOptions(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			listed, err := swap.ListPointersWith(ctx, cs, "", opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range listed {
				if l.Err != nil {
					t.Errorf("%s: %v", l.Partition, l.Err)
				}
				got = append(got, l.Partition)
			}
			want := slices.Sorted(slices.Values(c.parts))
			if !slices.Equal(got, want) {
				t.Fatalf("listed %q, want %q", got, want)
			}
			n := cs.Counts()
			// One GET of table.json, one per partition; one listing of
			// _pswap/p/ and one of each folder above the partitions.
			if n["get"] != len(c.parts)+1 || n["list"] != 1+c.uppers {
				t.Errorf("%d partitions, %d folders above them: requests %v, want %d GETs and %d lists",
					len(c.parts), c.uppers, n, len(c.parts)+1, 1+c.uppers)
			}
		})
	}
}

// keys formats every day d (1..days) and, when hours > 0, hour h
// (0..hours-1) into format.
func keys(format string, days, hours int) []string {
	var out []string
	for d := 1; d <= days; d++ {
		if hours == 0 {
			out = append(out, fmt.Sprintf(format, d))
			continue
		}
		for h := range hours {
			out = append(out, fmt.Sprintf(format, d, h))
		}
	}
	return out
}
