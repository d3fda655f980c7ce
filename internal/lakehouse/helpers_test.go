package lakehouse_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/internal/testing/icecheck"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/swap"
)

var ctx = context.Background()

// noWait is ctx under an environment (internal/env) whose retries do not
// wait.
var noWait = env.With(ctx, &env.Env{Timer: func(context.Context, time.Duration) error { return nil }})

// clocked is ctx under an environment whose local clock is now.
func clocked(now func() time.Time) context.Context {
	return env.With(ctx, &env.Env{Clock: now})
}

type row struct {
	ID     int64   `parquet:"id"`
	Name   string  `parquet:"name"`
	Amount float64 `parquet:"amount"`
}

func rows(n int, seed string) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{ID: int64(i), Name: fmt.Sprintf("%s-%d", seed, i), Amount: float64(i) / 4}
	}
	return out
}

// commit writes n rows as a new generation of part and swaps it in.
func commit(t testing.TB, st store.Store, part string, n int, seed string, opts swap.Options) swap.Result {
	t.Helper()
	res, _, err := commitErr(st, part, n, seed, opts)
	if err != nil {
		t.Fatalf("commit %s: %v", part, err)
	}
	return res
}

func commitErr(st store.Store, part string, n int, seed string, opts swap.Options) (swap.Result, *swap.Txn, error) {
	return commitAny(st, part, opts, rows(n, seed)...)
}

// commitAny writes rows of any type as a new generation of part and swaps
// it in.
func commitAny[T any](st store.Store, part string, opts swap.Options, rs ...T) (swap.Result, *swap.Txn, error) {
	return commitIn(ctx, st, part, opts, rs...)
}

// commitIn is commitAny under ctx (and its environment, internal/env).
func commitIn[T any](ctx context.Context, st store.Store, part string, opts swap.Options, rs ...T) (swap.Result, *swap.Txn, error) {
	return commitWith(ctx, st, part, opts, func(s *staging.Stager) error { return staging.Write(s, rs...) })
}

// commitWith commits what add stages as a new generation of part.
func commitWith(ctx context.Context, st store.Store, part string, opts swap.Options, add func(*staging.Stager) error) (swap.Result, *swap.Txn, error) {
	txn, err := swap.Begin(ctx, st, part, opts)
	if err != nil {
		return swap.Result{}, nil, err
	}
	s := staging.New(ctx, st, txn.DataPrefix(), staging.Options{})
	if err := add(s); err != nil {
		return swap.Result{}, txn, err
	}
	c, err := s.Finish(ctx)
	if err != nil {
		return swap.Result{}, txn, err
	}
	res, err := txn.Commit(ctx, c)
	return res, txn, err
}

// commitJSON commits rows given as JSON of the columns fields as a new
// generation of part.
func commitJSON(t *testing.T, st store.Store, part string, fields []arrow.Field, rows string) swap.Result {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, arrow.NewSchema(fields, nil), strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	return commitStaged(t, st, part, func(s *staging.Stager) error { return s.WriteRecord(rec) })
}

// commitStaged commits what add stages as a new generation of part.
func commitStaged(t *testing.T, st store.Store, part string, add func(*staging.Stager) error) swap.Result {
	t.Helper()
	res, _, err := commitWith(ctx, st, part, swap.Options{}, add)
	if err != nil {
		t.Fatalf("commit %s: %v", part, err)
	}
	return res
}

// publish publishes a commit's result the way the facade does.
func publish(t testing.TB, st store.Store, res swap.Result) lakehouse.Result {
	t.Helper()
	r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
	if err != nil {
		t.Fatalf("publish %s: %v", res.Partition, err)
	}
	return r
}

// backends runs f on a file:// table and, when enabled, on MinIO.
func backends(t *testing.T, f func(t *testing.T, st store.Store)) {
	t.Run("file", func(t *testing.T) {
		st, err := filestore.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f(t, st)
	})
	t.Run("s3", func(t *testing.T) {
		f(t, testenv.S3(t))
	})
}

// icebergIO is how iceberg-go reads the table: its own local file system
// for file://, pswap's store for s3:// (keeps iceberg-go's cloud bindings,
// and their SDKs, out of the build).
func icebergIO(st store.Store) table.FSysF {
	return func(ctx context.Context) (iceio.IO, error) {
		if strings.HasPrefix(st.URI(""), "file://") {
			return iceio.LocalFS{}, nil
		}
		return lakehouse.IO(ctx, st), nil
	}
}

// icebergRows scans the metadata file as a static table with iceberg-go and
// counts the rows it reads per partition (by the partition value iceberg-go
// reports for each file), and how many rows of the partition column came
// back NULL.
func icebergRows(t testing.TB, st store.Store, loc string) (perPart map[string]int64, nullPart int64) {
	t.Helper()
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, icebergIO(st), nil)
	if err != nil {
		t.Fatalf("iceberg-go: open %s: %v", loc, err)
	}
	scan := tbl.Scan()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		t.Fatalf("iceberg-go: plan: %v", err)
	}
	spec := tbl.Spec()
	perPart = map[string]int64{}
	for _, task := range tasks {
		var parts []string
		for _, f := range spec.Fields() {
			v := task.File.Partition()[f.FieldID]
			if d, ok := v.(iceberg.Date); ok {
				v = time.UnixMilli(0).UTC().AddDate(0, 0, int(d)).Format(time.DateOnly) // a typed dt column
			}
			parts = append(parts, fmt.Sprintf("%s=%v", f.Name, v))
		}
		key := strings.Join(parts, "/")
		_, recs, err := scan.ReadTasks(ctx, []table.FileScanTask{task})
		if err != nil {
			t.Fatalf("iceberg-go: read %s: %v", task.File.FilePath(), err)
		}
		for rec, err := range recs {
			if err != nil {
				t.Fatalf("iceberg-go: read %s: %v", task.File.FilePath(), err)
			}
			perPart[key] += rec.NumRows()
			for _, f := range spec.Fields() {
				idx := rec.Schema().FieldIndices(f.Name)
				if len(idx) == 0 {
					t.Fatalf("iceberg-go: column %s missing from the scan", f.Name)
				}
				nullPart += int64(rec.Column(idx[0]).NullN())
				if c, ok := rec.Column(idx[0]).(*array.String); ok && c.NullN() == 0 {
					for i := 0; i < c.Len(); i++ {
						if c.Value(i) != strings.TrimPrefix(parts[0], f.Name+"=") && len(parts) == 1 {
							t.Fatalf("iceberg-go: %s = %q in a file of %s", f.Name, c.Value(i), key)
						}
					}
				}
			}
			rec.Release()
		}
	}
	return perPart, nullPart
}

// pointerRows is the truth: rows of the current generation of every
// partition, from the pointers.
func pointerRows(t testing.TB, st store.Store) map[string]int64 {
	t.Helper()
	parts, err := swap.ListPartitions(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range parts {
		s, err := swap.Resolve(ctx, st, p)
		if err != nil {
			t.Fatal(err)
		}
		if s.Manifest.Rows > 0 {
			out[p] = s.Manifest.Rows
		}
	}
	return out
}

// duckRows counts the rows per partition that DuckDB reads from the current
// files (as `pswap files` lists them). S3 files are copied to a local
// folder first (DuckDB's S3 support is an extension this machine lacks).
func duckRows(t testing.TB, st store.Store) map[string]int64 {
	t.Helper()
	if !duckcheck.Usable(t) {
		return nil
	}
	parts, err := swap.ListPartitions(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var selects []string
	for _, p := range parts {
		s, err := swap.Resolve(ctx, st, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Files) == 0 {
			continue
		}
		var paths []string
		for i, f := range s.Files {
			data, _, err := store.ReadAll(ctx, st, f.Key)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("%d-%d.parquet", len(selects), i))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, duckcheck.Quote(path))
		}
		selects = append(selects, fmt.Sprintf("SELECT %s AS p, count(*) AS n FROM read_parquet([%s], hive_partitioning = false)",
			duckcheck.Quote(p), strings.Join(paths, ", ")))
	}
	if len(selects) == 0 {
		return map[string]int64{}
	}
	got, err := duckcheck.Query(ctx, strings.Join(selects, " UNION ALL "))
	if err != nil {
		t.Fatalf("duckdb: %v", err)
	}
	out := map[string]int64{}
	for _, r := range got {
		var n int64
		fmt.Sscan(fmt.Sprint(r["n"]), &n)
		out[fmt.Sprint(r["p"])] = n
	}
	return out
}

// checkReaders asserts that iceberg-go and icebird read exactly the current
// generations' rows per partition from the latest metadata, and that DuckDB
// over the same files agrees.
func checkReaders(t testing.TB, st store.Store) map[string]int64 {
	t.Helper()
	loc, _, err := lakehouse.Latest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	want := pointerRows(t, st)
	got, _ := icebergRows(t, st, loc)
	if !maps.Equal(got, want) {
		t.Fatalf("iceberg-go rows per partition:\n%v\nthe pointers' current generations:\n%v", sorted(got), sorted(want))
	}
	if icecheck.Usable(t) {
		r, err := icecheck.Read(ctx, st, "") // follows version-hint.text
		if err != nil {
			t.Fatal(err)
		}
		if got := r.RowsPerPartition(); !maps.Equal(got, want) {
			t.Fatalf("icebird rows per partition:\n%v\nthe pointers':\n%v", sorted(got), sorted(want))
		}
	}
	if duck := duckRows(t, st); duck != nil && !maps.Equal(duck, want) {
		t.Fatalf("DuckDB rows per partition:\n%v\nthe pointers':\n%v", sorted(duck), sorted(want))
	}
	return want
}

func sorted(m map[string]int64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "  %s: %d\n", k, m[k])
	}
	return b.String()
}
