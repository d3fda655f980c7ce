package views

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/store"
)

// State is what a view reflects of the pointers, read from the store
// (Status): a view is current when it reflects every partition's pointer.
type State struct {
	View, Name string
	// Version is the view's latest version (-1: none).
	Version int64
	// Location is the Iceberg metadata location (Iceberg, catalogs).
	Location string
	// Behind lists the partitions whose pointer is newer than what the
	// view reflects (or that it lacks), sorted.
	Behind []string
	// Seqs is the pointer sequence number the view reflects of each
	// partition compared that it has (Iceberg and Delta).
	Seqs map[string]int64
	// Lag says why a catalog is behind (it names an older version).
	Lag string
	// Err is why the view's state could not be read.
	Err error
}

// Current reports whether the view reflects every pointer it was
// compared with.
func (s State) Current() bool { return s.Err == nil && len(s.Behind) == 0 && s.Lag == "" }

// Status reads what each view of set reflects and compares it with
// current, each partition's pointer sequence number (partitions with
// files only: an empty partition has nothing in a view). A catalog is
// behind when it names an older Iceberg version than the latest.
func Status(ctx context.Context, st store.Store, set Set, current map[string]int64) []State {
	parts := slices.Sorted(maps.Keys(current))
	out := make([]State, len(set.Drivers)+len(set.Catalogs))
	fns := make([]func(), len(set.Drivers))
	for i, d := range set.Drivers {
		fns[i] = func() { out[i] = driverStatus(ctx, st, d, parts, current) }
	}
	if len(fns) > 0 {
		overlap.Do(ctx, fns...) // one at a time under internal/env's Order, as run
	}
	ice := State{Version: -1}
	for _, s := range out[:len(set.Drivers)] {
		if s.View == Iceberg {
			ice = s
		}
	}
	for j, c := range set.Catalogs {
		out[len(set.Drivers)+j] = catalogStatus(ctx, st, c, ice)
	}
	return out
}

func driverStatus(ctx context.Context, st store.Store, d Driver, parts []string, current map[string]int64) State {
	s := State{View: d.Name(), Name: d.Name()}
	r, err := d.Reflected(ctx, st, parts)
	s.Version, s.Location, s.Err = r.Version, r.Location, err
	seqs := r.Seqs
	if s.Err != nil {
		return s
	}
	s.Seqs = map[string]int64{}
	for _, p := range parts {
		got, ok := seqs[p]
		if ok {
			s.Seqs[p] = got
		}
		if !ok || got < current[p] {
			s.Behind = append(s.Behind, p)
		}
	}
	return s
}

// catalogStatus is a catalog's state: the version it names, behind the
// latest Iceberg version ice or not, and whether the file it names exists
// (a peer's VACUUM may have deleted it: one HEAD).
func catalogStatus(ctx context.Context, st store.Store, c catalog.Catalog, ice State) State {
	s := State{View: Catalog, Name: c.String(), Version: -1}
	loc, err := c.Current(ctx)
	if err != nil {
		s.Err = err
		return s
	}
	s.Location = loc
	if i := strings.LastIndex(loc, "/"); i >= 0 {
		if v, ok := lakehouse.VersionOfKey(lakehouse.MetadataDir + "/" + loc[i+1:]); ok {
			s.Version = int64(v)
		}
	}
	if ice.Version > 0 && s.Version < ice.Version {
		s.Lag = fmt.Sprintf("it names version %d, the latest is %d", s.Version, ice.Version)
	}
	if s.Lag == "" && ice.Location != "" && path.Dir(loc) == path.Dir(ice.Location) {
		_, err := st.Stat(ctx, lakehouse.MetadataDir+"/"+path.Base(loc))
		switch {
		case errors.Is(err, store.ErrNotFound):
			s.Lag = fmt.Sprintf("it names %s, which the store no longer has", path.Base(loc))
		case err != nil:
			s.Err = err
		}
	}
	return s
}
