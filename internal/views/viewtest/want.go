package viewtest

import (
	"context"
	"slices"

	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// Pointers reads what a view of the table at st must show (Want): every
// partition's current files, and table.json's columns.
func Pointers(ctx context.Context, st store.Store) (Want, error) {
	w := Want{Files: map[string][]string{}}
	listed, err := swap.ListPointers(ctx, st, "")
	if err != nil {
		return w, err
	}
	for _, l := range listed {
		if l.Err != nil {
			return w, l.Err
		}
		m, err := swap.ReadManifest(ctx, st, l.Partition, l.Pointer.Generation)
		if err != nil {
			return w, err
		}
		var keys []string
		for _, f := range swap.Files(st, m) {
			keys = append(keys, f.Key)
		}
		slices.Sort(keys)
		w.Files[l.Partition] = keys
	}
	t, _, err := tablemeta.Read(ctx, st)
	if err != nil {
		return w, err
	}
	for _, f := range t.Schema.Fields {
		w.Columns = append(w.Columns, f.Name)
	}
	for _, c := range t.PartitionColumns {
		w.Columns = append(w.Columns, c.Name)
	}
	return w, nil
}
