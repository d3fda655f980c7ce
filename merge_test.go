package pswap_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// The sales days the merge tests start from: two partitions, and a third
// that no merge input touches.
var mergeDays = map[string]string{
	"dt=2026-11-27": "order_id,store,amount\n1,lisbon,10.5\n2,berlin,20\n3,oslo,30\n",
	"dt=2026-11-28": "order_id,store,amount\n4,madrid,40\n5,paris,50\n",
	"dt=2026-11-29": "order_id,store,amount\n6,rome,60\n",
}

// mergeChanges updates 2 and 5, deletes 3, inserts 7 (into 11-27) and 8
// (into 11-28); 6's partition is untouched.
const mergeChanges = "dt,order_id,store,amount,op\n" +
	"2026-11-27,2,berlin,21.5,U\n" +
	"2026-11-27,3,,0,D\n" +
	"2026-11-27,7,vienna,70,I\n" +
	"2026-11-28,5,paris,55,U\n" +
	"2026-11-28,8,prague,80,I\n"

// mergeWant is every partition's rows after mergeChanges, sorted.
var mergeWant = map[string][]string{
	"dt=2026-11-27": {"1|lisbon|10.5", "2|berlin|21.5", "7|vienna|70"},
	"dt=2026-11-28": {"4|madrid|40", "5|paris|55", "8|prague|80"},
	"dt=2026-11-29": {"6|rome|60"},
}

func writeFile(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// seedMergeTable commits mergeDays, amount declared double.
func seedMergeTable(t testing.TB, tbl *pswap.Table) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	for _, key := range slices.Sorted(maps.Keys(mergeDays)) {
		body := mergeDays[key]
		p, err := tbl.Partition(key)
		if err != nil {
			t.Fatal(err)
		}
		w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "seed"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddPath(ctx, writeFile(t, dir, strings.TrimPrefix(key, "dt=")+".csv", body), pswap.FormatAuto); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// eachCurrentFile reads each file of a partition's current generation
// back from the store with Arrow's Parquet reader (not pswap's code) and
// hands it to f as a table, released after.
func eachCurrentFile(t testing.TB, st store.Store, key string, f func(file string, tb arrow.Table)) {
	t.Helper()
	ctx := context.Background()
	snap, err := swap.Resolve(ctx, st, key)
	if err != nil {
		t.Fatalf("resolve %s: %v", key, err)
	}
	for _, fr := range snap.Files {
		data, _, err := store.ReadAll(ctx, st, fr.Key)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := r.ReadTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f(fr.Key, tb)
		tb.Release()
	}
}

// tableColumn is column name of tb (read from file) as one array.
func tableColumn(t testing.TB, file string, tb arrow.Table, name string) arrow.Array {
	t.Helper()
	idx := tb.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("%s: no column %s", file, name)
	}
	col, err := array.Concatenate(tb.Column(idx[0]).Data().Chunks(), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return col
}

// readRows reads a partition's current rows back from the store with
// Arrow's Parquet reader (not the merge's code), as sorted
// "order_id|store|amount" strings.
func readRows(t testing.TB, st store.Store, key string) []string {
	t.Helper()
	var rows []string
	eachCurrentFile(t, st, key, func(file string, tb arrow.Table) {
		if tb.NumCols() != 3 {
			t.Fatalf("%s: %d columns, want 3 (%s)", file, tb.NumCols(), tb.Schema())
		}
		var cols []arrow.Array
		for _, n := range []string{"order_id", "store", "amount"} {
			cols = append(cols, tableColumn(t, file, tb, n))
		}
		for i := range int(tb.NumRows()) {
			rows = append(rows, cols[0].ValueStr(i)+"|"+cols[1].ValueStr(i)+"|"+cols[2].ValueStr(i))
		}
	})
	slices.Sort(rows)
	return rows
}

func checkRows(t testing.TB, st store.Store, want map[string][]string) {
	t.Helper()
	for key, w := range want {
		if got := readRows(t, st, key); !slices.Equal(got, w) {
			t.Errorf("%s holds %q, want %q", key, got, w)
		}
	}
}

func pointers(t testing.TB, st store.Store) map[string]string {
	t.Helper()
	ls, err := swap.ListPointers(context.Background(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range ls {
		out[l.Partition] = l.Pointer.Generation
	}
	return out
}

// mergeStores are the stores every merge test runs on.
func mergeStores(t *testing.T) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"mem":  func(t *testing.T) store.Store { return memstore.New() },
		"file": func(t *testing.T) store.Store { return mustFileStore(t) },
		"minio": func(t *testing.T) store.Store {
			return testenv.S3(t)
		},
	}
}

func TestMerge(t *testing.T) {
	for name, open := range mergeStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			tbl := pswap.NewTable(st)
			seedMergeTable(t, tbl)
			before := pointers(t, st)
			in := writeFile(t, t.TempDir(), "changes.csv", mergeChanges)
			opts := pswap.MergeOptions{Keys: []string{"order_id"}, DeleteWhen: "op=D", Commit: pswap.CommitOptions{RunID: "cdc-1"}}
			res, err := tbl.Merge(ctx, []string{in}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Partitions) != 2 || res.InputRows != 5 {
				t.Fatalf("result %+v, want 2 partitions from 5 rows", res)
			}
			for _, p := range res.Partitions {
				if p.Result.Outcome != pswap.Committed || p.RunID != "cdc-1/"+p.Partition {
					t.Errorf("%s: outcome %s run %q", p.Partition, p.Result.Outcome, p.RunID)
				}
			}
			p27 := res.Partitions[0]
			if p27.Upserts != 2 || p27.Deletes != 1 || p27.Kept != 1 || p27.Removed != 2 {
				t.Errorf("dt=2026-11-27 counts %+v", p27)
			}
			checkRows(t, st, mergeWant)
			after := pointers(t, st)
			if after["dt=2026-11-29"] != before["dt=2026-11-29"] {
				t.Error("the untouched partition changed")
			}
			// The manifest records the merge.
			snap, err := swap.Resolve(ctx, st, "dt=2026-11-27")
			if err != nil {
				t.Fatal(err)
			}
			if snap.Manifest.Kind != manifest.KindMerge || snap.Manifest.Parent != before["dt=2026-11-27"] {
				t.Errorf("manifest kind %q parent %q", snap.Manifest.Kind, snap.Manifest.Parent)
			}
			// The audit tells the merge from the commits it follows.
			rows, err := tbl.Audit(ctx, pswap.AuditOptions{})
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]string{}
			for _, r := range rows {
				kinds[r.Generation] = string(r.Kind)
			}
			if kinds[snap.Manifest.Generation] != "merge" || kinds[before["dt=2026-11-27"]] != "commit" {
				t.Errorf("audit kinds %v", kinds)
			}
			// The same run again: a no-op; without a run id: identical.
			res, err = tbl.Merge(ctx, []string{in}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Partitions {
				if p.Result.Outcome != pswap.SameRun || p.Result.Changed {
					t.Errorf("re-run %s: %s", p.Partition, p.Result.Outcome)
				}
			}
			opts.Commit.RunID = ""
			res, err = tbl.Merge(ctx, []string{in}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Partitions {
				if p.Result.Outcome != pswap.Identical || p.Result.Changed {
					t.Errorf("merge again %s: %s", p.Partition, p.Result.Outcome)
				}
			}
			if !maps.Equal(pointers(t, st), after) {
				t.Error("a no-op merge moved a pointer")
			}
			checkRows(t, st, mergeWant)
		})
	}
}

func TestMergeBadInput(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	seedMergeTable(t, tbl)
	before := pointers(t, st)
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		opts       pswap.MergeOptions
		want       error
		msg        string
	}{
		{"duplicate key", "dt,order_id,store,amount\n2026-11-27,2,a,1\n2026-11-28,9,b,2\n2026-11-27,2,c,3\n",
			pswap.MergeOptions{}, pswap.ErrDuplicateKey, "order_id=2 appears in rows 1 and 3"},
		{"null key", "dt,order_id,store,amount\n2026-11-27,,a,1\n",
			pswap.MergeOptions{}, pswap.ErrBadKey, "row 1 has a null key"},
		{"no key column", "dt,id,store,amount\n2026-11-27,1,a,1\n",
			pswap.MergeOptions{}, pswap.ErrBadKey, `no key column "order_id"`},
		{"outside the partition", "dt,order_id,store,amount\n2026-11-27,1,a,1\n2026-11-28,2,b,2\n",
			pswap.MergeOptions{Partition: "dt=2026-11-27"}, pswap.ErrRoute, "row 2 belongs to dt=2026-11-28, outside the partition dt=2026-11-27"},
		{"bad partition value", "dt,order_id,store,amount\n2026-13-45,1,a,1\n",
			pswap.MergeOptions{}, pswap.ErrRoute, "row 1"},
		{"no partition column", "order_id,store,amount\n1,a,1\n",
			pswap.MergeOptions{}, pswap.ErrRoute, "no partition column (dt)"},
		{"schema", "dt,order_id,store,amount,extra\n2026-11-27,1,a,1,x\n",
			pswap.MergeOptions{}, pswap.ErrSchemaMismatch, "extra"},
		{"type", "dt,order_id,store,amount\n2026-11-27,1,a,lots\n",
			pswap.MergeOptions{}, pswap.ErrBadInput, "amount"},
		{"delete column", "dt,order_id,store,amount\n2026-11-27,1,a,1\n",
			pswap.MergeOptions{DeleteWhen: "op=D"}, pswap.ErrBadInput, `no delete marker column "op"`},
		{"empty", "dt,order_id,store,amount\n",
			pswap.MergeOptions{}, pswap.ErrBadInput, "no rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.Keys = []string{"order_id"}
			_, err := tbl.Merge(ctx, []string{writeFile(t, dir, strings.ReplaceAll(c.name, " ", "_")+".csv", c.body)}, o)
			if !errors.Is(err, c.want) || !errors.Is(err, pswap.ErrBadInput) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v; want %v with %q", err, c.want, c.msg)
			}
			if !maps.Equal(pointers(t, st), before) {
				t.Fatal("bad input changed a pointer")
			}
		})
	}
	checkRows(t, st, map[string][]string{"dt=2026-11-27": {"1|lisbon|10.5", "2|berlin|20", "3|oslo|30"}})
}

func TestMergeDedupe(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		dedupe string
		want   []string
	}{
		{"last", []string{"1|lisbon|10.5", "2|c|3", "3|oslo|30"}},
		{"first", []string{"1|lisbon|10.5", "2|a|1", "3|oslo|30"}},
	} {
		st := memstore.New()
		tbl := pswap.NewTable(st)
		seedMergeTable(t, tbl)
		in := writeFile(t, t.TempDir(), "in.csv", "dt,order_id,store,amount\n2026-11-27,2,a,1\n2026-11-27,2,c,3\n")
		if _, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}, Dedupe: c.dedupe}); err != nil {
			t.Fatal(err)
		}
		checkRows(t, st, map[string][]string{"dt=2026-11-27": c.want})
	}
}

// TestMergeTimeColumn routes by a timestamp column through the table's
// daily layout, into a partition that did not exist (the input alone).
func TestMergeTimeColumn(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	dir := t.TempDir()
	p, _ := tbl.Partition("dt=2026-11-27")
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddPath(ctx, writeFile(t, dir, "a.csv", "order_id,sold_at,amount\n1,2026-11-27T10:00:00Z,1.5\n2,2026-11-27T11:00:00Z,2.5\n"), pswap.FormatAuto); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	in := writeFile(t, dir, "b.csv", "order_id,sold_at,amount\n2,2026-11-27T23:59:59Z,9.5\n3,2026-11-28T00:00:00Z,3.5\n")
	res, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}, TimeColumn: "sold_at"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Partitions) != 2 || res.Partitions[1].Partition != "dt=2026-11-28" {
		t.Fatalf("partitions %+v", res.Partitions)
	}
	snap, err := swap.Resolve(ctx, st, "dt=2026-11-27")
	if err != nil || snap.Manifest.Rows != 2 {
		t.Fatalf("dt=2026-11-27: %v rows, %v", snap.Manifest.Rows, err)
	}
	snap, err = swap.Resolve(ctx, st, "dt=2026-11-28")
	if err != nil || snap.Manifest.Rows != 1 {
		t.Fatalf("dt=2026-11-28: %v", err)
	}
}

// TestMergeConcurrent: merges of disjoint keys into the same partitions,
// and replacing commits, race; every merge that reports success is in the
// final state unless a later replace superseded it: no lost update.
func TestMergeConcurrent(t *testing.T) {
	for name, open := range mergeStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			tbl := pswap.NewTable(st)
			seedMergeTable(t, tbl)
			dir := t.TempDir()
			const writers = 6
			var wg sync.WaitGroup
			errs := make([]error, writers)
			rebases := make([]int, writers)
			for i := range writers {
				body := "dt,order_id,store,amount\n"
				for _, day := range []string{"2026-11-27", "2026-11-28"} {
					body += fmt.Sprintf("%s,%d,w%d,%d\n", day, 1000+i, i, i) // a key of its own in each day
				}
				in := writeFile(t, dir, fmt.Sprintf("w%d.csv", i), body)
				wg.Go(func() {
					res, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"order_id"}, MaxRebases: 20,
						Commit: pswap.CommitOptions{RunID: fmt.Sprintf("w%d", i)}})
					errs[i] = err
					for _, p := range res.Partitions {
						rebases[i] += p.Rebases
					}
				})
			}
			wg.Wait()
			total := 0
			for i, err := range errs {
				if err != nil {
					t.Fatalf("writer %d: %v", i, err)
				}
				total += rebases[i]
			}
			t.Logf("%d merges of 2 partitions each, %d rebases", writers, total)
			for _, key := range []string{"dt=2026-11-27", "dt=2026-11-28"} {
				got := readRows(t, st, key)
				base := len(strings.Split(strings.TrimSpace(mergeDays[key]), "\n")) - 1
				if len(got) != base+writers {
					t.Errorf("%s holds %d rows, want %d (a lost update): %q", key, len(got), base+writers, got)
				}
			}
		})
	}
}
