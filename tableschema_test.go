package pswap_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// onStores runs f on a fresh table of every backend: memory, file, and S3
// on MinIO (skipped unless PSWAP_TEST_S3 is set).
func onStores(t *testing.T, f func(t *testing.T, tb *pswap.Table)) {
	t.Run("mem", func(t *testing.T) { f(t, pswap.NewTable(memstore.New())) })
	t.Run("file", func(t *testing.T) {
		st, err := filestore.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f(t, pswap.NewTable(st))
	})
	t.Run("s3", func(t *testing.T) { f(t, pswap.NewTable(testenv.S3(t))) })
}

// record builds a one-column-per-entry Arrow record from Go slices
// ([]int32, []int64, []float32, []float64, []string).
func record(t testing.TB, cols ...any) arrow.RecordBatch {
	t.Helper()
	var fields []arrow.Field
	var arrs []arrow.Array
	mem := memory.DefaultAllocator
	for i := 0; i < len(cols); i += 2 {
		name := cols[i].(string)
		var a arrow.Array
		switch v := cols[i+1].(type) {
		case []int32:
			b := array.NewInt32Builder(mem)
			b.AppendValues(v, nil)
			a = b.NewArray()
		case []int64:
			b := array.NewInt64Builder(mem)
			b.AppendValues(v, nil)
			a = b.NewArray()
		case []float32:
			b := array.NewFloat32Builder(mem)
			b.AppendValues(v, nil)
			a = b.NewArray()
		case []float64:
			b := array.NewFloat64Builder(mem)
			b.AppendValues(v, nil)
			a = b.NewArray()
		case []string:
			b := array.NewStringBuilder(mem)
			b.AppendValues(v, nil)
			a = b.NewArray()
		default:
			t.Fatalf("record: %T", v)
		}
		fields = append(fields, arrow.Field{Name: name, Type: a.DataType()})
		arrs = append(arrs, a)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(arrs[0].Len()))
	for _, a := range arrs {
		a.Release()
	}
	t.Cleanup(rec.Release)
	return rec
}

// parquetFile writes rec to a local Parquet file (Arrow's writer).
func parquetFile(t testing.TB, rec arrow.RecordBatch) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func textFile(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func commitPath(t testing.TB, tb *pswap.Table, key, path string, opts pswap.WriteOptions) (pswap.Result, error) {
	t.Helper()
	p, err := tb.Partition(key)
	if err != nil {
		return pswap.Result{}, err
	}
	w, err := p.Begin(ctx, opts)
	if err != nil {
		return pswap.Result{}, err
	}
	if err := w.AddPath(ctx, path, pswap.FormatAuto); err != nil {
		w.Abort(ctx)
		return pswap.Result{}, err
	}
	return w.Commit(ctx)
}

func commitRecord(t testing.TB, tb *pswap.Table, key string, rec arrow.RecordBatch, opts pswap.WriteOptions) (pswap.Result, error) {
	t.Helper()
	p, err := tb.Partition(key)
	if err != nil {
		return pswap.Result{}, err
	}
	w, err := p.Begin(ctx, opts)
	if err != nil {
		return pswap.Result{}, err
	}
	if err := w.WriteRecord(rec); err != nil {
		w.Abort(ctx)
		return pswap.Result{}, err
	}
	return w.Commit(ctx)
}

// keys lists every object of the table.
func keys(t testing.TB, st store.Store) []string {
	t.Helper()
	var out []string
	for a, err := range st.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a.Key)
	}
	return out
}

func TestTableSchemaCreatedByFirstCommit(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		if _, err := tb.Schema(ctx); !errors.Is(err, pswap.ErrNotFound) {
			t.Fatalf("before any commit: %v", err)
		}
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{1, 2}, "amount", []float64{7.5, 2}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		m, err := tablemeta.Load(ctx, tb.Store())
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Schema.String(); got != "1 id long not null\n2 amount double not null" {
			t.Fatalf("schema:\n%s", got)
		}
		if m.PartitionLayout() != "dt=2006-01-02" || m.PartitionColumns[0].Type.Kind != tablemeta.Date {
			t.Fatalf("partitions: %s", m.PartitionLayout())
		}
		// The facade's view of the same document.
		s, err := tb.Schema(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Data.String(); got != "schema:\n  fields: 2\n    - id: type=int64\n    - amount: type=float64" {
			t.Errorf("Schema().Data:\n%s", got)
		}
		if want := []pswap.PartitionColumn{{Name: "dt", Type: "date", Layout: "2006-01-02"}}; !slices.Equal(s.PartitionColumns, want) || s.Version != 0 {
			t.Errorf("Schema(): %+v, want partition columns %+v, version 0", s, want)
		}
		// The same schema passes.
		if _, err := commitRecord(t, tb, "dt=2026-11-28", record(t, "id", []int64{3}, "amount", []float64{1}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// assertUnchanged runs a write that must fail with want and checks that it
// left the store exactly as it was.
func assertUnchanged(t *testing.T, tb *pswap.Table, want error, say string, write func() error) {
	t.Helper()
	before := keys(t, tb.Store())
	meta, _, _ := store.ReadAll(ctx, tb.Store(), tablemeta.Key)
	err := write()
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
	if !strings.Contains(err.Error(), say) {
		t.Fatalf("error %q does not say %q", err, say)
	}
	// Nothing but the attempt's record (the audit's failed row), which
	// says it failed.
	after := keys(t, tb.Store())
	isRecord := func(k string) bool { return strings.Contains(k, "/attempts/") }
	for _, k := range after {
		if isRecord(k) && !slices.Contains(before, k) {
			data, _, err := store.ReadAll(ctx, tb.Store(), k)
			if err != nil || !strings.Contains(string(data), `"status":"failed"`) {
				t.Fatalf("a failed write's attempt record %s: %s %v, want status failed", k, data, err)
			}
		}
	}
	if b, a := slices.DeleteFunc(slices.Clone(before), isRecord), slices.DeleteFunc(slices.Clone(after), isRecord); !slices.Equal(b, a) {
		t.Fatalf("a failed write changed the store:\nbefore %q\nafter  %q", b, a)
	}
	if m, _, _ := store.ReadAll(ctx, tb.Store(), tablemeta.Key); string(m) != string(meta) {
		t.Fatal("a failed write changed table.json")
	}
}

func TestTableSchemaRefusesChanges(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{1}, "amount", []float64{7.5}, "note", []string{"a"}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			rec  arrow.RecordBatch
			say  string
		}{
			{"dropped", record(t, "id", []int64{1}, "amount", []float64{7.5}), `column "note" of the table is missing`},
			{"renamed", record(t, "id", []int64{1}, "amt", []float64{7.5}, "note", []string{"a"}), `column "amount" of the table is missing from the data, which has column "amt"`},
			{"retyped", record(t, "id", []string{"1"}, "amount", []float64{7.5}, "note", []string{"a"}), `column "id" is string in the data, the table's column is long`},
			{"narrowed", record(t, "id", []int64{1}, "amount", []float32{7.5}, "note", []string{"a"}), ""},
			{"added", record(t, "id", []int64{1}, "amount", []float64{7.5}, "note", []string{"a"}, "extra", []int64{1}), `column "extra" is not in the table's schema (add it on purpose with --evolve-schema`},
			{"double into long", record(t, "id", []float64{1}, "amount", []float64{7.5}, "note", []string{"a"}), `column "id" is double in the data, the table's column is long`},
		} {
			if c.name == "narrowed" {
				continue // float into double is a promotion: see TestTableSchemaPromotes
			}
			t.Run(c.name, func(t *testing.T) {
				assertUnchanged(t, tb, pswap.ErrSchemaMismatch, c.say, func() error {
					_, err := commitRecord(t, tb, "dt=2026-11-28", c.rec, pswap.WriteOptions{})
					return err
				})
				// The same through an existing Parquet file.
				path := parquetFile(t, c.rec)
				assertUnchanged(t, tb, pswap.ErrSchemaMismatch, c.say, func() error {
					_, err := commitPath(t, tb, "dt=2026-11-27", path, pswap.WriteOptions{})
					return err
				})
			})
		}
	})
}

func TestTableSchemaPartitionKeys(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{1}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		for key, say := range map[string]string{
			"dt=2026-13-45":       `dt value "2026-13-45" does not fit the layout 2006-01-02 (month out of range)`,
			"dt=20261127":         `dt value "20261127" does not fit the layout 2006-01-02`,
			"dt=2026-11-27/hr=13": "2 columns (dt, hr), the table has 1 (dt)",
		} {
			assertUnchanged(t, tb, pswap.ErrPartitionMismatch, say+" (hint: the table's partitions are dt=2006-01-02, e.g. dt=2026-11-29)", func() error {
				_, err := commitRecord(t, tb, key, record(t, "id", []int64{1}), pswap.WriteOptions{})
				return err
			})
		}
	})
}

func TestTableSchemaTampered(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{1}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		good, _, err := store.ReadAll(ctx, tb.Store(), tablemeta.Key)
		if err != nil {
			t.Fatal(err)
		}
		for name, bad := range map[string]string{
			"truncated": string(good[:len(good)/2]),
			"tampered":  strings.Replace(string(good), `"long"`, `"int64"`, 1),
			"empty":     "",
		} {
			t.Run(name, func(t *testing.T) {
				if _, err := tb.Store().Put(ctx, tablemeta.Key, []byte(bad), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				assertUnchanged(t, tb, pswap.ErrCorrupt, "table.json: ", func() error {
					_, err := commitRecord(t, tb, "dt=2026-11-28", record(t, "id", []int64{1}), pswap.WriteOptions{})
					return err
				})
			})
		}
	})
}

// duckTypes returns DuckDB's type of every column of the current files of
// a partition, and the values of col.
func duckTypes(t *testing.T, tb *pswap.Table, key, col string) (map[string]string, []string) {
	t.Helper()
	p, _ := tb.Partition(key)
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range snap.Files {
		files = append(files, duckcheck.Quote(strings.TrimPrefix(f.URI, "file://")))
	}
	list := "[" + strings.Join(files, ", ") + "]"
	rows, err := duckcheck.Query(ctx, fmt.Sprintf("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(%s))", list))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, r := range rows {
		types[fmt.Sprint(r["column_name"])] = fmt.Sprint(r["column_type"])
	}
	vals, err := duckcheck.Query(ctx, fmt.Sprintf("SELECT CAST(%s AS VARCHAR) AS v FROM read_parquet(%s) ORDER BY 1", col, list))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range vals {
		out = append(out, fmt.Sprint(r["v"]))
	}
	return types, out
}

func TestTableSchemaPromotes(t *testing.T) {
	duckcheck.SkipIfUnavailable(t)
	dir := t.TempDir()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	native := record(t, "id", []int64{1, 2, 3}, "amount", []float64{7.5, 2, 1.25})
	first, err := commitRecord(t, tb, "dt=2026-11-27", native, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	narrow := record(t, "amount", []float32{7.5, 2, 1.25}, "id", []int32{1, 2, 3}) // other order too
	for name, write := range map[string]func(key string) (pswap.Result, error){
		"record": func(key string) (pswap.Result, error) { return commitRecord(t, tb, key, narrow, pswap.WriteOptions{}) },
		"parquet": func(key string) (pswap.Result, error) {
			return commitPath(t, tb, key, parquetFile(t, narrow), pswap.WriteOptions{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			key := "dt=2026-11-28"
			if name == "parquet" {
				key = "dt=2026-11-29"
			}
			res, err := write(key)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := tb.Partition(key)
			snap, err := p.Current(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The promoted data is the same data: its checksum is the one
			// of the natively typed commit.
			first, _ := tb.Partition("dt=2026-11-27")
			fs, _ := first.Current(ctx)
			if snap.Manifest.ContentChecksum != fs.Manifest.ContentChecksum || res.Rows != 3 {
				t.Fatalf("checksum %s, want %s (rows %d)", snap.Manifest.ContentChecksum, fs.Manifest.ContentChecksum, res.Rows)
			}
			types, vals := duckTypes(t, tb, key, "amount")
			if types["id"] != "BIGINT" || types["amount"] != "DOUBLE" {
				t.Fatalf("DuckDB reads %v", types)
			}
			if !slices.Equal(vals, []string{"1.25", "2.0", "7.5"}) {
				t.Fatalf("values %v", vals)
			}
		})
	}
	_ = first
}

func TestTableSchemaCSVUsesTableTypes(t *testing.T) {
	duckcheck.SkipIfUnavailable(t)
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		if _, ok := tb.Store().(*filestore.Store); !ok {
			return // DuckDB reads the files from the local folder
		}
		if _, err := commitPath(t, tb, "dt=2026-11-27", textFile(t, "a.csv", "id,amount\n1,7.5\n2,2.25\n"), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		// A day whose amounts happen to be whole numbers is stored as
		// double too, never as int64.
		if _, err := commitPath(t, tb, "dt=2026-11-28", textFile(t, "b.csv", "id,amount\n3,8\n4,2\n"), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		types, vals := duckTypes(t, tb, "dt=2026-11-28", "amount")
		if types["amount"] != "DOUBLE" || !slices.Equal(vals, []string{"2.0", "8.0"}) {
			t.Fatalf("DuckDB reads %v %v", types, vals)
		}
		// JSON Lines as well.
		if _, err := commitPath(t, tb, "dt=2026-11-29", textFile(t, "c.jsonl", `{"id": 5, "amount": 3}`+"\n"), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		types, _ = duckTypes(t, tb, "dt=2026-11-29", "amount")
		if types["amount"] != "DOUBLE" || types["id"] != "BIGINT" {
			t.Fatalf("DuckDB reads %v", types)
		}
		// A value that does not fit the table's type names its line.
		assertUnchanged(t, tb, staging.ErrBadInput, "line 3", func() error {
			_, err := commitPath(t, tb, "dt=2026-11-30", textFile(t, "d.csv", "id,amount\n6,1\n7.5,1\n"), pswap.WriteOptions{})
			return err
		})
	})
}

func TestTableSchemaEvolve(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{1}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		evolve := pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: true}}
		if _, err := commitRecord(t, tb, "dt=2026-11-28", record(t, "id", []int64{2}, "note", []string{"x"}), evolve); err != nil {
			t.Fatal(err)
		}
		m, err := tablemeta.Load(ctx, tb.Store())
		if err != nil {
			t.Fatal(err)
		}
		if m.SchemaID != 1 || m.Schema.String() != "1 id long not null\n3 note string" || m.LastColumnID != 3 {
			t.Fatalf("evolved: id %d last %d\n%s", m.SchemaID, m.LastColumnID, m.Schema)
		}
		// Evolving never drops, renames or retypes.
		assertUnchanged(t, tb, pswap.ErrSchemaMismatch, `column "note" of the table is missing`, func() error {
			_, err := commitRecord(t, tb, "dt=2026-11-29", record(t, "id", []int64{2}), evolve)
			return err
		})
		assertUnchanged(t, tb, pswap.ErrSchemaMismatch, `column "id" is string in the data`, func() error {
			_, err := commitRecord(t, tb, "dt=2026-11-29", record(t, "id", []string{"2"}, "note", []string{"x"}, "more", []int64{1}), evolve)
			return err
		})
	})
}

// Two writers evolve the same table at once: each read table.json before
// the other wrote it. Adding the same column, both succeed; adding
// different ones, exactly one does, and the other fails naming the column
// its data lacks, having changed nothing.
func TestTableSchemaEvolveRace(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{1}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		evolve := pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: true}}
		race := func(recs ...arrow.RecordBatch) []error {
			ws := make([]*pswap.Writer, len(recs))
			for i, rec := range recs {
				p, _ := tb.Partition(fmt.Sprintf("dt=2026-12-%02d", i+1))
				w, err := p.Begin(ctx, evolve)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.WriteRecord(rec); err != nil {
					t.Fatal(err)
				}
				ws[i] = w
			}
			errs := make([]error, len(ws))
			var wg sync.WaitGroup
			for i, w := range ws {
				wg.Add(1)
				go func() { defer wg.Done(); _, errs[i] = w.Commit(ctx) }()
			}
			wg.Wait()
			return errs
		}
		for _, err := range race(record(t, "id", []int64{1}, "a", []string{"x"}), record(t, "id", []int64{2}, "a", []string{"y"})) {
			if err != nil {
				t.Fatalf("same column added twice: %v", err)
			}
		}
		errs := race(record(t, "id", []int64{1}, "a", []string{"x"}, "b", []int64{1}), record(t, "id", []int64{2}, "a", []string{"y"}, "c", []int64{1}))
		failed := 0
		for i, err := range errs {
			if err == nil {
				continue
			}
			failed++
			if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), "was changed by another writer at the same time") {
				t.Fatalf("loser: %v", err)
			}
			p, _ := tb.Partition(fmt.Sprintf("dt=2026-12-%02d", i+1))
			if snap, err := p.Current(ctx); err != nil || snap.Manifest.Rows != 1 || snap.Pointer.Seq != 1 {
				t.Fatalf("the loser's partition changed: %v", err)
			}
		}
		if failed != 1 {
			t.Fatalf("%d of 2 different evolutions failed: %v", failed, errs)
		}
		m, _ := tablemeta.Load(ctx, tb.Store())
		if m.SchemaID != 2 || len(m.Schema.Fields) != 3 {
			t.Fatalf("after the race:\n%s", m.Schema)
		}
	})
}

// A table committed to before table.json existed gets one on its next
// commit, from that commit's data.
func TestTableSchemaExistingTable(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{1}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := tb.Store().Delete(ctx, tablemeta.Key); err != nil {
			t.Fatal(err)
		}
		if _, err := commitRecord(t, tb, "dt=2026-11-28", record(t, "id", []int64{2}, "v", []float64{1}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		m, err := tablemeta.Load(ctx, tb.Store())
		if err != nil || len(m.Schema.Fields) != 2 {
			t.Fatalf("%v %v", err, m)
		}
	})
}

// Two first commits at once: the same schema, both succeed; another
// schema, the one that lost the create-if-absent fails naming the
// difference and leaves its partition untouched.
func TestTableSchemaCreateRace(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		race := func(keys []string, recs ...arrow.RecordBatch) []error {
			ws := make([]*pswap.Writer, len(recs))
			for i, rec := range recs {
				p, _ := tb.Partition(keys[i])
				w, err := p.Begin(ctx, pswap.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := w.WriteRecord(rec); err != nil {
					t.Fatal(err)
				}
				ws[i] = w
			}
			errs := make([]error, len(ws))
			var wg sync.WaitGroup
			for i, w := range ws {
				wg.Add(1)
				go func() { defer wg.Done(); _, errs[i] = w.Commit(ctx) }()
			}
			wg.Wait()
			return errs
		}
		for _, err := range race([]string{"dt=2026-11-01", "dt=2026-11-02"}, record(t, "id", []int64{1}), record(t, "id", []int64{2})) {
			if err != nil {
				t.Fatalf("same schema: %v", err)
			}
		}
		if err := tb.Store().Delete(ctx, tablemeta.Key); err != nil {
			t.Fatal(err)
		}
		errs := race([]string{"dt=2026-11-03", "dt=2026-11-04"}, record(t, "id", []int64{1}), record(t, "id", []string{"x"}))
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("want exactly one failure: %v", errs)
		}
		for i, err := range errs {
			if err == nil {
				continue
			}
			if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), "was created by another writer at the same time") {
				t.Fatalf("loser: %v", err)
			}
			p, _ := tb.Partition([]string{"dt=2026-11-03", "dt=2026-11-04"}[i])
			if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
				t.Fatalf("the loser's partition: %v", err)
			}
		}
	})
}

// The table schema costs a commit one GET (table.json), and the first
// commit of a table one create-if-absent PUT; evolving one If-Match PUT.
func TestTableSchemaRequests(t *testing.T) {
	cs := storetest.NewCounting(memstore.New())
	tb := pswap.NewTable(cs)
	for i, want := range []map[string]int{
		// GETs: pointer, table.json; the list of the new table's root
		// (nothing inside another table or above tables: tableguard.go);
		// the data file; PUTs: table.json (created), manifest, pointer
		// (created), and the attempt record (put).
		{"get": 2, "list": 1, "writer": 1, "put": 1, "put-if-none-match": 3},
		// The same, table.json only read; the pointer replaced.
		{"get": 2, "writer": 1, "put": 1, "put-if-none-match": 1, "put-if-match": 1},
	} {
		cs.Reset()
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{int64(i)}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := cs.Counts(); !maps.Equal(got, want) {
			t.Errorf("commit %d: requests %v, want %v", i+1, got, want)
		}
	}
	cs.Reset()
	evolve := pswap.WriteOptions{Table: pswap.TableOptions{EvolveSchema: true}}
	if _, err := commitRecord(t, tb, "dt=2026-11-28", record(t, "id", []int64{1}, "x", []int64{1}), evolve); err != nil {
		t.Fatal(err)
	}
	if got, want := cs.Counts(), map[string]int{"get": 2, "writer": 1, "put": 1, "put-if-none-match": 2, "put-if-match": 1}; !maps.Equal(got, want) {
		t.Errorf("evolving commit: requests %v, want %v", got, want)
	}
}

// GC never touches table.json (it is no partition's).
func TestTableSchemaSurvivesGC(t *testing.T) {
	st := memstore.New()
	tb := pswap.NewTable(st)
	for i := range 3 {
		if _, err := commitRecord(t, tb, "dt=2026-11-27", record(t, "id", []int64{int64(i)}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before, _, err := store.ReadAll(ctx, st, tablemeta.Key)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := gc.Table(ctx, st, "", gc.Options{Keep: 1, MinAge: time.Nanosecond, OrphanAge: time.Nanosecond, CommitWindow: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	after, _, err := store.ReadAll(ctx, st, tablemeta.Key)
	if err != nil || string(after) != string(before) {
		t.Fatalf("table.json after gc: %v", err)
	}
	t.Logf("gc: %+v", rep)
}

// A float16 column (parquet-testing's float16_nonzeros_and_nans.parquet)
// goes into a table as float: the table's column is float, the stored file
// holds float32, and hyparquet reads the same values from both files.
func TestTableSchemaFloat16IsFloat(t *testing.T) {
	duckcheck.SkipIfHyparquetUnavailable(t)
	src := filepath.Join("staging", "testdata", "parquet-testing", "float16_nonzeros_and_nans.parquet")
	dir := t.TempDir()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	res, err := commitPath(t, tb, "dt=2026-11-29", src, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := tablemeta.Load(ctx, tb.Store())
	if err != nil {
		t.Fatal(err)
	}
	f, ok := meta.Schema.Field("x")
	if !ok || f.Type.Kind != tablemeta.Float {
		t.Fatalf("table column x: %+v (found %v), want float", f, ok)
	}
	p, _ := tb.Partition("dt=2026-11-29")
	snap, err := p.Current(ctx)
	if err != nil || len(snap.Files) != 1 {
		t.Fatalf("current: %v %v", snap, err)
	}
	stored := strings.TrimPrefix(snap.Files[0].URI, "file://")
	got, err := duckcheck.ReadParquet(ctx, stored)
	if err != nil {
		t.Fatal(err)
	}
	want, err := duckcheck.ReadParquet(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if got.Checksum() != want.Checksum() || int64(len(got.Rows)) != res.Rows || res.Rows == 0 {
		t.Fatalf("stored rows %v, source rows %v (committed %d)", got.Rows, want.Rows, res.Rows)
	}
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// A schema declared up front (TableOptions.Declare) types the first
// commit's CSV and JSON Lines columns, so that a first day of whole numbers
// does not make a long column; a later declaration must match the table.
func TestTableSchemaDeclared(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		decl, err := pswap.ParseColumnTypes("amount=double,qty=int")
		if err != nil {
			t.Fatal(err)
		}
		wo := pswap.WriteOptions{Table: pswap.TableOptions{Declare: decl}}
		if _, err := commitPath(t, tb, "dt=2026-11-27", textFile(t, "a.csv", "id,amount,qty\n1,8,3\n2,2,1\n"), wo); err != nil {
			t.Fatal(err)
		}
		meta, err := tablemeta.Load(ctx, tb.Store())
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"id": "long", "amount": "double", "qty": "int"} {
			if f, ok := meta.Schema.Field(name); !ok || f.Type.String() != want {
				t.Errorf("column %s: %v %v, want %s", name, f.Type, ok, want)
			}
		}
		// The next day's 7.5 fits; JSON Lines too.
		if _, err := commitPath(t, tb, "dt=2026-11-28", textFile(t, "b.csv", "id,amount,qty\n3,7.5,2\n"), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := commitPath(t, tb, "dt=2026-11-29", textFile(t, "c.jsonl", `{"id": 4, "amount": 3, "qty": 1}`+"\n"), wo); err != nil {
			t.Fatal(err)
		}
		// Another type for an existing column: refused, nothing written.
		long, _ := pswap.ParseColumnTypes("amount=long")
		_, err = commitPath(t, tb, "dt=2026-11-30", textFile(t, "d.csv", "id,amount,qty\n5,1,1\n"), pswap.WriteOptions{Table: pswap.TableOptions{Declare: long}})
		if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), `column "amount" is declared long`) {
			t.Fatalf("declared long on a double column: %v, want ErrSchemaMismatch", err)
		}
		if p, _ := tb.Partition("dt=2026-11-30"); p != nil {
			if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
				t.Fatalf("the refused commit wrote something: %v", err)
			}
		}
	})
}
