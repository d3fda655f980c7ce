package pswap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// ErrNestedTable: a write would create a table inside another table (under
// one of its partition folders or its _pswap folders) or at a prefix that
// holds tables (a bucket root above them): most often a wrong --table URL.
// Nothing was written. It is also ErrBadInput.
var ErrNestedTable = errkind.New("a table cannot be created there", errkind.ErrBadInput)

// ErrNoTable: a write that must not create a table (WriteOptions.MustExist)
// found no table at the URL: neither its _pswap/table.json nor, for a table
// written before table.json existed, a partition's pointer. It is also
// ErrNotFound.
var ErrNoTable = errkind.New("no table", errkind.ErrNotFound)

// OuterStore is implemented by stores that can read above their root
// (filestore, s3store): Outer returns a store rooted at the top of the
// namespace (the file system's root, the bucket) and the root's path in
// it, without leading or trailing slash. A write that creates a table
// looks there for an enclosing table; a store without it (memstore, a
// wrapper) is checked below its root only.
type OuterStore interface {
	Outer() (outer store.Store, root string)
}

// maxScanKeys bounds the listing that looks for tables below a new
// table's root: one page of S3's listing.
const maxScanKeys = 1000

// Exists reports whether a table exists at t's root: its own marker, the
// table document _pswap/table.json, a partition pointer of the table-level
// layout (_pswap/p/<key>/pointer.json), or for a table written before
// table.json existed, a partition pointer of the legacy layout
// (<key>/_pswap/pointer.json) directly under the root. Other objects under the root (an engine's
// files, a folder of tables) are no table. It costs one GET when the
// table has a table.json; else a listing of the root (its first 1000
// keys) and one HEAD per partition folder seen in it.
func (t *Table) Exists(ctx context.Context) (bool, error) {
	if _, err := t.st.Stat(ctx, tablemeta.Key); err == nil {
		return true, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	s, err := scanBelow(ctx, t.st)
	return s.isTable, err
}

// below is what a listing of a root found there.
type below struct {
	isTable bool   // a partition pointer directly under the root (or table.json)
	nested  string // the key prefix of a table below the root ("" none)
}

// scanBelow lists the root's first maxScanKeys keys and stops at the first
// that decides: table.json or a partition pointer
// (_pswap/p/<k=v...>/pointer.json, or <k=v...>/_pswap/pointer.json in the
// legacy layout: the root is a table), or a _pswap folder below a folder that is not a
// partition's (<prefix>/_pswap/... or <prefix>/<k=v...>/_pswap/...: a table
// at prefix). The files a first commit staged before it was interrupted
// (<k=v...>/_pswap/gen/...) decide nothing: for each partition folder seen,
// its pointer is looked up once.
func scanBelow(ctx context.Context, st store.Store) (below, error) {
	seen := map[string]bool{}
	n := 0
	for a, err := range st.List(ctx, "") {
		if err != nil {
			return below{}, err
		}
		if n++; n > maxScanKeys {
			break
		}
		if strings.HasPrefix(a.Key, layout.MetaDir+"/") {
			// The root's own _pswap folder: table.json, or a partition's
			// state in the table-level layout (what a first commit staged
			// before it was interrupted decides nothing).
			if a.Key == tablemeta.Key {
				return below{isTable: true}, nil
			}
			if part, ok := layout.PartitionOfPointerKey(a.Key); ok && a.Key == layout.PointerKey(part) {
				return below{isTable: true}, nil
			}
			continue
		}
		dir, _, ok := strings.Cut(a.Key, "/"+layout.MetaDir+"/")
		if !ok {
			continue
		}
		if tablePrefix := enclosingPrefix(dir); tablePrefix != "" {
			return below{nested: tablePrefix}, nil
		}
		// dir is a partition key of the root.
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if a.Key == layout.LegacyPointerKey(dir) {
			return below{isTable: true}, nil
		}
		if _, err := st.Stat(ctx, layout.LegacyPointerKey(dir)); err == nil {
			return below{isTable: true}, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return below{}, err
		}
	}
	return below{}, nil
}

// enclosingPrefix returns, for the folder dir that holds a _pswap folder,
// the table it belongs to if that is not the root: dir without its
// trailing partition segments (k=v), or "" when dir is all partition
// segments (a partition of the root).
func enclosingPrefix(dir string) string {
	segs := strings.Split(dir, "/")
	i := len(segs)
	for i > 0 && isPartitionSegment(segs[i-1]) {
		i--
	}
	return strings.Join(segs[:i], "/")
}

// isPartitionSegment reports whether one path segment is a partition
// column (k=v).
func isPartitionSegment(seg string) bool {
	_, err := partition.Parse(seg)
	return err == nil && strings.Contains(seg, "=")
}

// CheckNewTable returns the error a write that creates a table at t's
// root would fail with, as Begin checks it (nil: a table may be created
// there): ErrNestedTable inside another table or at a prefix that holds
// tables, else with mustExist ErrNoTable unless Exists. A caller that
// refuses to create tables calls it to tell a wrong URL (exit 2 in the
// CLI) from a table not there yet.
func (t *Table) CheckNewTable(ctx context.Context, mustExist bool) error {
	return checkNewTable(ctx, t.st, mustExist)
}

// checkNewTable refuses to create a table where one cannot be: inside
// another table, or at a prefix that holds tables. mustExist also
// refuses when no table is there (ErrNoTable). Begin calls it only when
// the write would create the table (no table.json, no pointer of the
// partition), so a write to an existing table makes no request for it.
// It costs one listing of the root (stopped at its first 1000 keys) and,
// at the same time, one HEAD per folder above the root for its
// _pswap/table.json and one per partition folder the root sits in for its
// pointer: for s3://lake/sales, one LIST and one HEAD in one round trip.
// A HEAD that fails (a policy that denies reads above the table's prefix)
// is taken as "no table there".
func checkNewTable(ctx context.Context, st store.Store, mustExist bool) error {
	_, err := checkNewTableFound(ctx, st, mustExist)
	return err
}

// checkNewTableFound is checkNewTable that also reports whether a table
// (a partition's pointer, of either layout) was found at the root: false
// means that the write creates the table, in the table-level layout.
func checkNewTableFound(ctx context.Context, st store.Store, mustExist bool) (bool, error) {
	var (
		wg        sync.WaitGroup
		s         below
		scanErr   error
		enclosing string
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		s, scanErr = scanBelow(ctx, st)
	}()
	enclosing = enclosingTable(ctx, st)
	wg.Wait()
	if enclosing != "" {
		return s.isTable, fmt.Errorf("%w: %s is inside the table %s; a table is never created inside another (check the table URL)",
			ErrNestedTable, st.URI(""), enclosing)
	}
	if scanErr != nil {
		return false, scanErr
	}
	if s.nested != "" {
		return s.isTable, fmt.Errorf("%w: %s holds the table %s; a table is never created at a prefix that holds tables (check the table URL)",
			ErrNestedTable, st.URI(""), st.URI(s.nested))
	}
	if mustExist && !s.isTable {
		return s.isTable, fmt.Errorf("%w at %s: no _pswap/table.json and no partition under it", ErrNoTable, st.URI(""))
	}
	return s.isTable, nil
}

// enclosingTable returns the URI of a table that encloses st's root, or "".
// A root with a _pswap segment is inside one without a request; else the
// folders above the root are asked (OuterStore) at once.
func enclosingTable(ctx context.Context, st store.Store) string {
	o, ok := st.(OuterStore)
	if !ok {
		return ""
	}
	outer, root := o.Outer()
	if root == "" {
		return ""
	}
	segs := strings.Split(root, "/")
	for i, seg := range segs {
		if seg == layout.MetaDir {
			return outer.URI(enclosingPrefix(strings.Join(segs[:i], "/")))
		}
	}
	// Every folder above the root may be a table (its table.json); one
	// whose next segments down to the root start with partition columns
	// may be an old one (a pointer of those columns).
	type probe struct{ table, key string }
	var probes []probe
	for i := 0; i < len(segs); i++ {
		above := strings.Join(segs[:i], "/")
		probes = append(probes, probe{above, join(above, tablemeta.Key)})
		for j := i; j < len(segs) && isPartitionSegment(segs[j]); j++ {
			// (A table of the table-level layout has a table.json.)
			probes = append(probes, probe{above, layout.LegacyPointerKey(strings.Join(segs[i:j+1], "/"))})
			if above != "" {
				probes[len(probes)-1].key = above + "/" + probes[len(probes)-1].key
			}
		}
	}
	found := make([]bool, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := outer.Stat(ctx, p.key)
			found[i] = err == nil
		}()
	}
	wg.Wait()
	// The innermost table names the problem best.
	for i := len(probes) - 1; i >= 0; i-- {
		if found[i] {
			return outer.URI(probes[i].table)
		}
	}
	return ""
}

// join joins a key prefix ("" for the root) and a key.
func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "/" + key
}
