package pswap_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/storetest"
)

// outerCounting counts the requests of a table's store and of the store
// above it (pswap.OuterStore), where the guard of a new table looks.
type outerCounting struct {
	*storetest.Counting
	outer *storetest.Counting
}

func (o *outerCounting) Outer() (store.Store, string) {
	st, root := o.Counting.Store.(pswap.OuterStore).Outer()
	if o.outer == nil {
		o.outer = storetest.NewCounting(st)
	}
	return o.outer, root
}

// openCounting opens the table at a local path through outerCounting.
func openCounting(t *testing.T, dir string) (*pswap.Table, *outerCounting) {
	t.Helper()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	oc := &outerCounting{Counting: storetest.NewCounting(st)}
	return pswap.NewTable(oc), oc
}

// writeTo begins a write of part with opts and commits one row.
func writeTo(tb *pswap.Table, part string, opts pswap.WriteOptions) (pswap.Result, error) {
	p, err := tb.Partition(part)
	if err != nil {
		return pswap.Result{}, err
	}
	w, err := p.Begin(ctx, opts)
	if err != nil {
		return pswap.Result{}, err
	}
	if err := pswap.Write(w, row{ID: 1, Name: "a"}); err != nil {
		return pswap.Result{}, err
	}
	return w.Commit(ctx)
}

// files lists the regular files under dir (none if it does not exist).
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoTableInsideATable: a write never creates a table under another
// table's partition folders or _pswap folders, nor at a prefix holding
// tables, for tables with table.json and for old ones with only pointers;
// the error names the enclosing table, and nothing is written (issue 40
// item 2).
func TestNoTableInsideATable(t *testing.T) {
	dir := t.TempDir()
	lake := filepath.Join(dir, "lake")
	sales := filepath.Join(lake, "sales")
	tb, _ := openCounting(t, sales)
	if _, err := writeTo(tb, "dt=2026-11-29", pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// An old table: partitions with pointers of the legacy layout, no
	// table.json.
	old := filepath.Join(dir, "old", "orders")
	ofs, err := filestore.New(old)
	if err != nil {
		t.Fatal(err)
	}
	swaptest.LegacyPartition(t, ofs, "dt=2026-11-29", 1)
	for _, tc := range []struct {
		root, enclosing string
		inside          bool // inside the enclosing table (else above it)
	}{
		{filepath.Join(sales, "dt=2026-11-29"), sales, true},
		{filepath.Join(sales, "dt=2026-11-30"), sales, true}, // a partition folder yet to be
		{filepath.Join(sales, "dt=2026-11-29", "_pswap", "gen"), sales, true},
		{filepath.Join(sales, "_pswap"), sales, true},
		{filepath.Join(sales, "metadata"), sales, true},
		{filepath.Join(sales, "dt=2026-11-29", "extra"), sales, true},
		{lake, sales, false},
		{dir, sales, false}, // sales sorts after lake/... but the first table decides
		{filepath.Join(old, "dt=2026-11-29"), old, true},
		{filepath.Join(old, "dt=2026-11-29", "hr=13"), old, true},
		{filepath.Join(dir, "old"), old, false},
	} {
		before := filesUnder(t, tc.root)
		tb, _ := openCounting(t, tc.root)
		for _, must := range []bool{false, true} {
			_, err := writeTo(tb, "dt=2026-12-01", pswap.WriteOptions{MustExist: must})
			if !errors.Is(err, pswap.ErrNestedTable) || !errors.Is(err, pswap.ErrBadInput) {
				t.Fatalf("write at %s (must exist %v): %v, want ErrNestedTable", tc.root, must, err)
			}
			want := "inside the table file://" + tc.enclosing
			if !tc.inside {
				want = "holds the table file://" + tc.enclosing
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("write at %s: %q does not say %q", tc.root, err, want)
			}
		}
		if after := filesUnder(t, tc.root); len(after) != len(before) {
			t.Errorf("write at %s: refused, but wrote %d files", tc.root, len(after)-len(before))
		}
	}
	// Beside the tables, and in a folder named like a partition that is
	// no table's, a table may be created.
	for _, root := range []string{filepath.Join(lake, "returns"), filepath.Join(dir, "env=prod", "sales")} {
		tb, _ := openCounting(t, root)
		if _, err := writeTo(tb, "dt=2026-12-01", pswap.WriteOptions{}); err != nil {
			t.Errorf("write at %s: %v", root, err)
		}
	}
}

// TestMustExistNeedsTheTablesMarker: MustExist (the CLI's --must-exist)
// accepts a table by its table.json, or an old table by a partition's
// pointer, and nothing else: not files an engine left, not the files a
// first commit staged before it was interrupted.
func TestMustExistNeedsTheTablesMarker(t *testing.T) {
	dir := t.TempDir()
	must := pswap.WriteOptions{MustExist: true}
	fresh, _ := openCounting(t, filepath.Join(dir, "fresh"))
	if _, err := writeTo(fresh, "dt=2026-11-29", must); !errors.Is(err, pswap.ErrNoTable) || !errors.Is(err, pswap.ErrNotFound) {
		t.Fatalf("must exist, no table: %v", err)
	}
	if ok, err := fresh.Exists(ctx); ok || err != nil {
		t.Fatalf("Exists of nothing: %v, %v", ok, err)
	}
	// Something stored, but not a table.
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(filepath.Join(other, "dt=2026-11-29", "_pswap", "gen", "g"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"README", "dt=2026-11-29/part-0.parquet", "dt=2026-11-29/_pswap/gen/g/part-0.parquet"} {
		if err := os.WriteFile(filepath.Join(other, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ot, _ := openCounting(t, other)
	if ok, err := ot.Exists(ctx); ok || err != nil {
		t.Fatalf("Exists of files that are no table: %v, %v", ok, err)
	}
	if _, err := writeTo(ot, "dt=2026-11-30", must); !errors.Is(err, pswap.ErrNoTable) {
		t.Fatalf("must exist, files but no table: %v", err)
	}
	// Without MustExist the interrupted first commit's folder takes the commit.
	if _, err := writeTo(ot, "dt=2026-11-30", pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := ot.Exists(ctx); !ok || err != nil {
		t.Fatalf("Exists after a commit: %v, %v", ok, err)
	}
	if _, err := writeTo(ot, "dt=2026-12-01", must); err != nil {
		t.Fatal(err)
	}
	// An old table: a pointer and no table.json.
	if err := os.Remove(filepath.Join(other, "_pswap", "table.json")); err != nil {
		t.Fatal(err)
	}
	if ok, err := ot.Exists(ctx); !ok || err != nil {
		t.Fatalf("Exists of an old table: %v, %v", ok, err)
	}
	if _, err := writeTo(ot, "dt=2026-12-02", must); err != nil {
		t.Fatalf("must exist, old table: %v", err)
	}
}

// TestNewTableGuardCost: the guard costs a first commit one listing of the
// root and one HEAD per folder above it (all at once), and a commit to an
// existing table nothing.
func TestNewTableGuardCost(t *testing.T) {
	root := filepath.Join(t.TempDir(), "lake", "sales")
	tb, oc := openCounting(t, root)
	if _, err := writeTo(tb, "dt=2026-11-29", pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	depth := strings.Count(filepath.ToSlash(root), "/") // folders above the root, "/" included
	if got := oc.outer.Counts(); got["stat"] != depth || oc.outer.Total() != depth {
		t.Errorf("first commit: %v above the root, want %d stats", got, depth)
	}
	firstLists := oc.Counts()["list"]
	oc.Reset()
	oc.outer.Reset()
	if _, err := writeTo(tb, "dt=2026-11-30", pswap.WriteOptions{MustExist: true}); err != nil {
		t.Fatal(err)
	}
	if oc.outer.Total() != 0 {
		t.Errorf("second commit: %v requests above the root, want none", oc.outer.Counts())
	}
	if got := oc.Counts()["list"]; got != firstLists-1 {
		t.Errorf("second commit: %d lists, the first %d: want one fewer (the guard's)", got, firstLists)
	}
	t.Logf("first commit: 1 list of the root + %d HEADs above it (one round trip); a commit to the table: 0", depth)
}

// TestNoReservationInsideATable: stage --reserve (Partition.Reserve) is
// refused where a commit would be, and leaves no staged record.
func TestNoReservationInsideATable(t *testing.T) {
	dir := t.TempDir()
	sales := filepath.Join(dir, "sales")
	tb, _ := openCounting(t, sales)
	if _, err := writeTo(tb, "dt=2026-11-29", pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(sales, "dt=2026-11-29")
	before := filesUnder(t, inner)
	ib, _ := openCounting(t, inner)
	p, err := ib.Partition("dt=2026-12-01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Reserve(ctx, pswap.CommitOptions{}); !errors.Is(err, pswap.ErrNestedTable) {
		t.Fatalf("reserve inside a table: %v, want ErrNestedTable", err)
	}
	if after := filesUnder(t, inner); len(after) != len(before) {
		t.Errorf("refused reservation left %d files", len(after)-len(before))
	}
	// In the table itself, a reservation of a new partition goes through.
	p, err = tb.Partition("dt=2026-12-01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Reserve(ctx, pswap.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
}
