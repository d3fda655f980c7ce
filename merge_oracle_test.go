package pswap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// oracleDays are the partitions of the oracle test: 2,000 orders each;
// the input touches the first two.
var oracleDays = []string{"2026-11-27", "2026-11-28", "2026-11-29"}

// oracleChanges is a change log over the first two days: updates of
// existing orders (some twice in the log, so --dedupe last), inserts and
// deletes.
func oracleChanges() string {
	var b strings.Builder
	b.WriteString("dt,order_id,store,amount,op\n")
	for d, day := range oracleDays[:2] {
		base := (d + 1) * 100_000
		for i := range 300 {
			id := base + i*7 // existing orders every 7th
			switch i % 5 {
			case 0:
				fmt.Fprintf(&b, "%s,%d,,0,D\n", day, id)
			case 1:
				fmt.Fprintf(&b, "%s,%d,first-%d,%d.25,U\n", day, id, i, i)
				fmt.Fprintf(&b, "%s,%d,again-%d,%d.75,U\n", day, id, i, i) // the last wins
			default:
				fmt.Fprintf(&b, "%s,%d,store-%d,%d.5,U\n", day, id, i%13, i)
			}
			fmt.Fprintf(&b, "%s,%d,new-%d,%d,I\n", day, base+50_000+i, i%11, i) // new orders
		}
	}
	return b.String()
}

func oracleDay(d int) string {
	var b strings.Builder
	b.WriteString("order_id,store,amount\n")
	base := (d + 1) * 100_000
	for i := range 2000 {
		fmt.Fprintf(&b, "%d,store-%d,%d.5\n", base+i, i%17, i)
	}
	return b.String()
}

// download copies a partition's current files into dir.
func download(t *testing.T, st store.Store, key, dir string) []string {
	t.Helper()
	ctx := context.Background()
	snap, err := swap.Resolve(ctx, st, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, f := range snap.Files {
		data, _, err := store.ReadAll(ctx, st, f.Key)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%d.parquet", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func sqlList(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = duckcheck.Quote(p)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// TestMergeOracle merges a change log (updates, repeated updates, inserts,
// deletes over two of three days) on every store and has DuckDB, which
// shares no code with pswap, derive each partition from the files before
// the merge and the CSV (an anti-join and a union, the last change of a
// key winning) and compare it with the files after: rows exact.
func TestMergeOracle(t *testing.T) {
	duckcheck.SkipIfUnavailable(t)
	for name, open := range mergeStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			tbl := pswap.NewTable(st)
			dir := t.TempDir()
			for d, day := range oracleDays {
				p, _ := tbl.Partition("dt=" + day)
				w, err := p.Begin(ctx, pswap.WriteOptions{Staging: stagingSmallGroups()})
				if err != nil {
					t.Fatal(err)
				}
				if err := w.AddPath(ctx, writeFile(t, dir, day+".csv", oracleDay(d)), pswap.FormatAuto); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			before := map[string][]string{}
			for _, day := range oracleDays {
				before[day] = download(t, st, "dt="+day, filepath.Join(dir, "before", day))
			}
			ptrs := pointers(t, st)
			changes := writeFile(t, dir, "changes.csv", oracleChanges())
			res, err := tbl.Merge(ctx, []string{changes}, pswap.MergeOptions{Keys: []string{"order_id"}, DeleteWhen: "op=D", Dedupe: "last",
				Staging: stagingSmallGroups()})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Partitions) != 2 {
				t.Fatalf("merged %d partitions, want 2", len(res.Partitions))
			}
			if pointers(t, st)["dt="+oracleDays[2]] != ptrs["dt="+oracleDays[2]] {
				t.Error("the untouched partition moved")
			}
			var stmts []string
			stmts = append(stmts, fmt.Sprintf(`CREATE TABLE log AS SELECT *, row_number() OVER () AS seq FROM read_csv(%s, header=true,
				columns={'dt': 'VARCHAR', 'order_id': 'BIGINT', 'store': 'VARCHAR', 'amount': 'DOUBLE', 'op': 'VARCHAR'})`, duckcheck.Quote(changes)))
			// The last change of each key per day.
			stmts = append(stmts, `CREATE TABLE inp AS SELECT * FROM log QUALIFY row_number() OVER (PARTITION BY dt, order_id ORDER BY seq DESC) = 1`)
			var checks []string
			for _, day := range oracleDays {
				after := download(t, st, "dt="+day, filepath.Join(dir, "after", day))
				exp := fmt.Sprintf(`SELECT order_id, store, amount FROM read_parquet(%s) WHERE order_id NOT IN (SELECT order_id FROM inp WHERE dt = '%s')
					UNION ALL SELECT order_id, store, amount FROM inp WHERE dt = '%s' AND op <> 'D'`, sqlList(before[day]), day, day)
				got := fmt.Sprintf(`SELECT order_id, store, amount FROM read_parquet(%s)`, sqlList(after))
				checks = append(checks, fmt.Sprintf(`SELECT '%s' AS day,
					(SELECT count(*) FROM (%s)) AS want, (SELECT count(*) FROM (%s)) AS got,
					(SELECT count(*) FROM ((%s) EXCEPT ALL (%s))) AS missing,
					(SELECT count(*) FROM ((%s) EXCEPT ALL (%s))) AS extra`, day, exp, got, exp, got, got, exp))
			}
			stmts = append(stmts, strings.Join(checks, " UNION ALL ")+" ORDER BY day")
			out, err := duckcheck.Run(ctx, stmts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Rows) != len(oracleDays) {
				t.Fatalf("oracle rows %v", out.Rows)
			}
			for _, r := range out.Rows {
				t.Logf("%s %v: DuckDB's derivation %v rows, pswap's %v, missing %v, extra %v", name, r["day"], r["want"], r["got"], r["missing"], r["extra"])
				if fmt.Sprint(r["missing"]) != "0" || fmt.Sprint(r["extra"]) != "0" || fmt.Sprint(r["want"]) != fmt.Sprint(r["got"]) {
					t.Errorf("%v: pswap's merge differs from DuckDB's: %v", r["day"], r)
				}
			}
			// 2,000 - 58 deleted (ids past 2,000 delete nothing) + 12
			// updates of ids past 2,000 (inserts) + 300 new for each day.
			if fmt.Sprint(out.Rows[0]["got"]) != "2254" {
				t.Errorf("dt=%s holds %v rows, want 2254", oracleDays[0], out.Rows[0]["got"])
			}
		})
	}
}

// stagingSmallGroups writes row groups of 300 rows in files of about 8
// KiB: a partition of several files of several row groups, which the
// merge reads a row group at a time.
func stagingSmallGroups() staging.Options {
	return staging.Options{RowGroupRows: 300, TargetFileSize: 8 << 10}
}
