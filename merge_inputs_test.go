package pswap_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
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

// TestMergeDeleteMarkerNotATableColumn: the first merge into a new table
// does not make the --delete-when column a table column (the README says
// it is not written), so a later commit without it is accepted (issue
// 39, item 8).
func TestMergeDeleteMarkerNotATableColumn(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	dir := t.TempDir()
	in := writeFile(t, dir, "cdc.csv", "order_id,store,amount,op\n1,lisbon,10.5,U\n2,berlin,20,I\n")
	if _, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}, DeleteWhen: "op=D", Partition: "dt=2026-11-27"}); err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Data.FieldIndices("op") != nil {
		t.Errorf("the delete marker became a table column: %s", sc.Data)
	}
	if _, err := commitFile(t, tbl, "dt=2026-11-28", writeFile(t, dir, "d.csv", "order_id,store,amount\n3,oslo,30.5\n"), pswap.TableOptions{}); err != nil {
		t.Errorf("a commit without the marker: %v", err)
	}
	checkRows(t, st, map[string][]string{"dt=2026-11-27": {"1|lisbon|10.5", "2|berlin|20"}})
}

// evolvedSalesTable is mergeDays' table after a commit of dt=2026-11-30
// added a nullable column channel (EvolveSchema): the other days' files
// lack it.
func evolvedSalesTable(t *testing.T) (*pswap.Table, string) {
	t.Helper()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	seedMergeTable(t, tbl)
	dir := t.TempDir()
	if _, err := commitFile(t, tbl, "dt=2026-11-30", writeFile(t, dir, "30.csv", "order_id,store,amount,channel\n9,kyiv,90,web\n"), pswap.TableOptions{EvolveSchema: true}); err != nil {
		t.Fatal(err)
	}
	return tbl, dir
}

// TestMergeAfterEvolution: a merge into a partition written before the
// schema evolved widens its current rows to the table's schema (channel
// NULL) instead of failing with bad input (issue 39, item 7), and merge
// takes EvolveSchema as commit does (the current rows get the new column
// as NULL too).
func TestMergeAfterEvolution(t *testing.T) {
	ctx := context.Background()
	tbl, dir := evolvedSalesTable(t)
	st := tbl.Store()
	in := writeFile(t, dir, "upd.csv", "dt,order_id,store,amount,channel\n2026-11-27,2,berlin,21.5,shop\n")
	res, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}})
	if err != nil {
		t.Fatalf("merge into a partition written before the evolution: %v", err)
	}
	if res.Partitions[0].Kept != 2 || res.Partitions[0].Removed != 1 {
		t.Errorf("merge %+v", res.Partitions[0])
	}
	if got, want := columnValues(t, st, "dt=2026-11-27", "channel"), []string{"(null)", "(null)", "shop"}; !slices.Equal(got, want) {
		t.Errorf("channel holds %q, want %q", got, want)
	}
	// A new column, added by the merge.
	in = writeFile(t, dir, "upd2.csv", "dt,order_id,store,amount,channel,region\n2026-11-28,5,paris,55,web,eu\n")
	_, err = tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}})
	if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), "--evolve-schema") {
		t.Errorf("a new column without EvolveSchema: %v, want ErrSchemaMismatch naming --evolve-schema", err)
	}
	if _, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}, Table: pswap.TableOptions{EvolveSchema: true}}); err != nil {
		t.Fatalf("merge with EvolveSchema: %v", err)
	}
	if got, want := columnValues(t, st, "dt=2026-11-28", "region"), []string{"(null)", "eu"}; !slices.Equal(got, want) {
		t.Errorf("region holds %q, want %q", got, want)
	}
	sc, err := tbl.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Data.FieldIndices("region") == nil || sc.Version != 2 {
		t.Errorf("the table's schema after the merge: version %d\n%s", sc.Version, sc.Data)
	}
}

// TestMergeDeclaredDeleteMarker: a delete marker that the merge creating
// the table declares is a column of the table, written.
func TestMergeDeclaredDeleteMarker(t *testing.T) {
	ctx := context.Background()
	tbl := pswap.NewTable(memstore.New())
	in := writeFile(t, t.TempDir(), "cdc.csv", "order_id,amount,op\n1,10,U\n")
	decl, err := pswap.ParseColumnTypes("op=string,amount=double")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}, DeleteWhen: "op=D", Partition: "dt=2026-11-27",
		Table: pswap.TableOptions{Declare: decl}}); err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Data.FieldIndices("op") == nil || sc.Data.Field(sc.Data.FieldIndices("amount")[0]).Type.ID() != arrow.FLOAT64 {
		t.Errorf("the declared marker and amount: %s", sc.Data)
	}
}

// TestMergeUnknownOutcomeHonest: a merge whose pointer PUT is applied but
// whose reply is lost (and whose read-backs fail) retries the partition;
// the next attempt finds this run's generation current (same-run with a
// run id, identical without) and must report the swap it made: changed
// true, not a no-op (issue 39, item 5).
func TestMergeUnknownOutcomeHonest(t *testing.T) {
	for _, runID := range []string{"run-1", ""} {
		t.Run("run-id="+runID, func(t *testing.T) {
			ctx := context.Background()
			mem := memstore.New()
			seedMergeTable(t, pswap.NewTable(mem))
			down := fmt.Errorf("read: %w: connection reset", store.ErrTransient)
			var mu sync.Mutex
			lost, failGets := false, 0
			faulty := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
				if c.Key != layout.PointerKey("dt=2026-11-27") {
					return storetest.Fault{}
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case c.Op == "put" && !lost:
					lost, failGets = true, 4
					return storetest.Fault{After: down}
				case c.Op == "get" && failGets > 0:
					failGets--
					return storetest.Fault{Before: down}
				}
				return storetest.Fault{}
			})
			tbl := pswap.NewTable(faulty)
			in := writeFile(t, t.TempDir(), "upd.csv", "dt,order_id,store,amount\n2026-11-27,2,berlin,22\n")
			res, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"},
				Commit: pswap.CommitOptions{RunID: runID, MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}})
			if !lost {
				t.Fatal("no pointer PUT was lost")
			}
			if err != nil {
				if !errors.Is(err, pswap.ErrOutcomeUnknown) {
					t.Fatalf("merge: %v", err)
				}
				t.Logf("merge: %v", err)
				return // honest too: exit 1, outcome unknown
			}
			pm := res.Partitions[0]
			t.Logf("merge: %+v", pm)
			if !pm.Result.Changed || pm.Result.Outcome != pswap.Committed {
				t.Errorf("the merge swapped the partition itself, but reports changed=%v outcome %s", pm.Result.Changed, pm.Result.Outcome)
			}
			if got := pointers(t, mem)["dt=2026-11-27"]; got != pm.Result.Generation {
				t.Errorf("current generation %s, the merge reports %s", got, pm.Result.Generation)
			}
		})
	}
}

// TestMergeSameRunChangedInput: a re-run of a merge with the same run id
// and a corrected input is a no-op that keeps what the run merged, as for
// commit, but it says so (PartitionMerge.InputDiffers; the CLI warns),
// and Force re-merges the corrected input (issue 39, item 6). A re-run
// with the same input does not warn.
func TestMergeSameRunChangedInput(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	seedMergeTable(t, tbl)
	dir := t.TempDir()
	first := writeFile(t, dir, "a.csv", "dt,order_id,store,amount\n2026-11-27,2,berlin,22\n")
	fixed := writeFile(t, dir, "b.csv", "dt,order_id,store,amount\n2026-11-27,2,berlin,23\n")
	opts := pswap.MergeOptions{Keys: []string{"order_id"}, Commit: pswap.CommitOptions{RunID: "run-1"}}
	if _, err := tbl.Merge(ctx, []string{first}, opts); err != nil {
		t.Fatal(err)
	}
	res, err := tbl.Merge(ctx, []string{first}, opts)
	if err != nil || res.Partitions[0].Result.Outcome != pswap.SameRun || res.Partitions[0].InputDiffers {
		t.Fatalf("a re-run with the same input: %+v, %v; want same-run, not differing", res.Partitions, err)
	}
	res, err = tbl.Merge(ctx, []string{fixed}, opts)
	if err != nil || res.Partitions[0].Result.Outcome != pswap.SameRun || !res.Partitions[0].InputDiffers {
		t.Fatalf("a re-run with a corrected input: %+v, %v; want same-run, InputDiffers", res.Partitions, err)
	}
	checkRows(t, st, map[string][]string{"dt=2026-11-27": {"1|lisbon|10.5", "2|berlin|22", "3|oslo|30"}})
	opts.Commit.Force = true
	res, err = tbl.Merge(ctx, []string{fixed}, opts)
	if err != nil || !res.Partitions[0].Result.Changed {
		t.Fatalf("a forced re-run: %+v, %v; want it merged", res.Partitions, err)
	}
	checkRows(t, st, map[string][]string{"dt=2026-11-27": {"1|lisbon|10.5", "2|berlin|23", "3|oslo|30"}})
}

// TestMergeScratchCleaned: a merge's scratch folder (the input converted
// to Parquet, the current file being filtered) carries its process id, so
// that the next merge removes the folders of processes that are gone (a
// killed merge's copies of table data) and leaves those of live ones
// (issue 39, item 9).
func TestMergeScratchCleaned(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	stale := filepath.Join(tmp, "pswap-merge-999999999-123")
	live := filepath.Join(tmp, fmt.Sprintf("pswap-merge-%d-456", os.Getpid()))
	for _, d := range []string{stale, live} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, d, "current-1.parquet", "table data")
	}
	tbl := pswap.NewTable(memstore.New())
	seedMergeTable(t, tbl)
	in := writeFile(t, t.TempDir(), "upd.csv", "dt,order_id,store,amount\n2026-11-27,2,berlin,22\n")
	if _, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}, TempDir: tmp}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the scratch folder of a dead merge is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the scratch folder of a live process was removed: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "pswap-merge-*"))
	if len(left) != 1 {
		t.Errorf("scratch folders after the merge: %q, want only the live one", left)
	}
}
