package views

import (
	"context"
	"fmt"

	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/store"
)

// Resolve returns the views of the table whose table.json is doc (nil: it
// has none) and whether doc records them. A table that records none has
// the default views (Iceberg) and, if the store holds a Delta log, the
// Delta view: one listing of at most one key finds out, so that a log a
// table had before views were recorded is not left behind.
func Resolve(ctx context.Context, st store.Store, doc *tablemeta.Table) (tablemeta.Views, bool, error) {
	if v, recorded := doc.ViewsOf(); recorded {
		return v, true, nil
	}
	v := tablemeta.DefaultViews()
	has, err := HasDeltaLog(ctx, st)
	if err != nil {
		return v, false, err
	}
	v.Delta = has
	return v, false, nil
}

// HasDeltaLog reports whether the table has a Delta log: any object under
// _delta_log/ (one listing request).
func HasDeltaLog(ctx context.Context, st store.Store) (bool, error) {
	for _, err := range st.List(ctx, deltalog.LogDir) {
		if err != nil {
			return false, fmt.Errorf("look for a Delta log: %w", err)
		}
		return true, nil
	}
	return false, nil
}
