package lakehouse_test

import (
	"fmt"
	"maps"
	"path"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// appendOnly appends a run of 3 rows to part, without publishing.
func appendOnly(t testing.TB, st store.Store, part, run string) swap.Result {
	t.Helper()
	return commit(t, st, part, 3, run, swap.Options{Append: true, RunID: run})
}

// appendManifests is the names of the append manifests (pswap-ap...) of
// the latest version's current snapshot.
func appendManifests(t testing.TB, st store.Store) []string {
	t.Helper()
	loc, _, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, icebergIO(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := icebergIO(st)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if name := path.Base(mf.FilePath()); strings.HasPrefix(name, "pswap-ap") {
			out = append(out, name)
		}
	}
	return out
}

// wantView checks that iceberg-go reads the pointers' rows, and that the
// current snapshot is op and changes files as said (-1: unchecked).
func wantView(t testing.TB, st store.Store, what, op string, added, deleted int) {
	t.Helper()
	want := pointerRows(t, st)
	loc, _, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := icebergRows(t, st, loc)
	if !maps.Equal(got, want) {
		t.Fatalf("%s: iceberg-go rows per partition:\n%v\nthe pointers':\n%v", what, sorted(got), sorted(want))
	}
	sum, _, _, _ := icebergPlan(t, st)
	if sum["operation"] != op || added >= 0 && sum["added-data-files"] != fmt.Sprint(added) || deleted >= 0 && sum["deleted-data-files"] != fmt.Sprint(deleted) {
		t.Fatalf("%s: snapshot %v, want %s adding %d files, deleting %d", what, sum, op, added, deleted)
	}
}

// TestAppendManifests: the publish of an append writes an append manifest
// of the run's file, merged as a counter of base 4, and every path around
// it keeps the view exact: another partition's commit in the group folds
// the append manifests into the group's manifest, a replace deletes every
// appended file, a view that lags takes the path of any commit, a
// reconcile finds it up to date and repairs a lost append manifest, a
// rollback restores fewer files, and a new month folds them into the
// cold manifest.
func TestAppendManifests(t *testing.T) {
	st := memstore.New()
	p, q := "dt=2026-11-29", "dt=2026-11-28"
	publish(t, st, commit(t, st, p, 5, "base", swap.Options{}))
	var gens []swap.Result
	for i := range 20 {
		res := appendOnly(t, st, p, fmt.Sprintf("a%d", i))
		gens = append(gens, res)
		publish(t, st, res)
		if i%4 == 3 {
			wantView(t, st, fmt.Sprintf("append %d", i+1), "append", 1, 0)
		}
	}
	// 20 is 110 in base 4: two append manifests, of 16 and 4 appends.
	if apps := appendManifests(t, st); len(apps) != 2 {
		t.Fatalf("after 20 appends: append manifests %v, want 2", apps)
	}

	// Another partition's commit in the group: the group's manifest is
	// written anew and takes the appends in.
	publish(t, st, commit(t, st, q, 4, "q", swap.Options{}))
	wantView(t, st, "a commit of another partition of the month", "append", 1, 0)
	if apps := appendManifests(t, st); len(apps) != 0 {
		t.Fatalf("after the group's manifest was written: append manifests %v", apps)
	}
	for i := range 5 {
		publish(t, st, appendOnly(t, st, p, fmt.Sprintf("b%d", i)))
	}
	wantView(t, st, "appends after the fold", "append", 1, 0)
	if apps := appendManifests(t, st); len(apps) != 2 { // 5 is 11 in base 4
		t.Fatalf("after 5 more appends: append manifests %v, want 2", apps)
	}

	// A view that lags two appends: the path of any commit.
	appendOnly(t, st, p, "c0")
	publish(t, st, appendOnly(t, st, p, "c1"))
	wantView(t, st, "a publish two appends behind", "append", 2, 0)
	if apps := appendManifests(t, st); len(apps) != 0 {
		t.Fatalf("after a publish behind: append manifests %v", apps)
	}
	publish(t, st, appendOnly(t, st, p, "c2"))
	wantView(t, st, "an append after", "append", 1, 0)

	// A reconcile finds the view up to date; with an append manifest lost,
	// it writes the partition anew.
	if r, err := lakehouse.Publish(ctx, st, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("reconcile of an up-to-date view: %+v %v", r, err)
	}
	apps := appendManifests(t, st)
	if len(apps) != 1 {
		t.Fatalf("append manifests %v, want 1", apps)
	}
	if err := st.Delete(ctx, lakehouse.MetadataDir+"/"+apps[0]); err != nil {
		t.Fatal(err)
	}
	if r, err := lakehouse.Publish(ctx, st, lakehouse.Options{}); err != nil || !r.Changed {
		t.Fatalf("reconcile of a lost append manifest: %+v %v", r, err)
	}
	wantView(t, st, "the reconcile of a lost append manifest", "append", 1, 0) // the lost file added again

	// A rollback to an earlier append of the chain: fewer files.
	publish(t, st, appendOnly(t, st, p, "d0"))
	rb, err := swap.Rollback(ctx, st, p, gens[10].Generation, swap.Options{})
	if err != nil || !rb.Changed {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	publish(t, st, rb)
	wantView(t, st, "a rollback", "overwrite", -1, -1)
	for i := range 6 {
		publish(t, st, appendOnly(t, st, p, fmt.Sprintf("e%d", i)))
	}
	wantView(t, st, "appends after the rollback", "append", 1, 0)

	// A replace deletes every file of the partition, the appended ones too.
	before := pointerFiles(t, st, p)
	publish(t, st, commit(t, st, p, 2, "replace", swap.Options{}))
	wantView(t, st, "a replace", "overwrite", 1, before)
	if apps := appendManifests(t, st); len(apps) != 0 {
		t.Fatalf("after a replace: append manifests %v", apps)
	}

	// Appends, then a new month: the group goes cold, its appends too.
	for i := range 3 {
		publish(t, st, appendOnly(t, st, p, fmt.Sprintf("f%d", i)))
	}
	publish(t, st, commit(t, st, "dt=2026-12-01", 2, "dec", swap.Options{}))
	wantView(t, st, "a new month", "append", 1, 0)
	if apps := appendManifests(t, st); len(apps) != 0 {
		t.Fatalf("after a new month: append manifests %v", apps)
	}
	// An append to a cold partition: the path of any commit.
	publish(t, st, appendOnly(t, st, p, "g0"))
	wantView(t, st, "an append to a cold partition", "append", 1, 0)
	if r, err := lakehouse.Publish(ctx, st, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("reconcile at the end: %+v %v", r, err)
	}
}

// pointerFiles is the number of files of part's current generation.
func pointerFiles(t testing.TB, st store.Store, part string) int {
	t.Helper()
	s, err := swap.Resolve(ctx, st, part)
	if err != nil {
		t.Fatal(err)
	}
	return len(s.Manifest.Files)
}
