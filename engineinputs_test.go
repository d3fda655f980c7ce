package pswap_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/swap"
)

// Inputs that engines write (issue 24): files whose types or layout the
// engines users run produce, taken end to end: staged, committed, checked
// against the table's schema, and published as Iceberg metadata.

// publishedTable opens the current Iceberg metadata of a file:// table
// with iceberg-go and returns its schema and the rows its data files
// record (planned from the manifests: no data file is read).
func publishedTable(t *testing.T, loc string) (*iceberg.Schema, int64) {
	t.Helper()
	fs := func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "t"}, loc, fs, nil)
	if err != nil {
		t.Fatalf("iceberg-go: open %s: %v", loc, err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatalf("iceberg-go: plan: %v", err)
	}
	var rows int64
	for _, task := range tasks {
		rows += task.File.Count()
	}
	return tbl.Schema(), rows
}

// A Parquet file with a logical type Arrow does not know (parquet-testing's
// unknown-logical-type.parquet: a column annotated with a type from a
// newer format version) is staged with that column read as its physical
// type (binary), the commit lands, and the publish after it, and every
// later one, reads the footer the same way: the Iceberg schema has the
// column as binary and the files' rows. Before, the publish panicked in
// Arrow's schema reader under lakehouse.FooterSchema.
func TestUnknownLogicalTypePublishes(t *testing.T) {
	src := filepath.Join("staging", "testdata", "parquet-testing", "unknown-logical-type.parquet")
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	res, err := commitPath(t, tb, "dt=2026-11-29", src, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Rows == 0 {
		t.Fatalf("commit: %+v", res)
	}
	meta, err := tablemeta.Load(ctx, tb.Store())
	if err != nil {
		t.Fatal(err)
	}
	col, ok := meta.Schema.Field("column with unknown type")
	if !ok || !col.Type.Equal(tablemeta.BinaryType) {
		t.Fatalf("table.json column: %+v (found %v), want binary", col, ok)
	}
	p, _ := tb.Partition("dt=2026-11-29")
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The footer schema the metadata derives, straight.
	s, err := lakehouse.FooterSchema(ctx, st, snap.Files[:1])
	if err != nil {
		t.Fatalf("FooterSchema: %v", err)
	}
	if f, ok := s.FieldsByName("column with unknown type"); !ok || f[0].Type.ID().String() != "BINARY" {
		t.Fatalf("FooterSchema: %v", s)
	}
	// The publish after the commit, then a full one (`pswap publish`).
	pub := p.Publish(ctx, res, pswap.PublishOptions{})
	if !pub.Published {
		t.Fatalf("publish after the commit: %v", pub.Err)
	}
	full, err := tb.Publish(ctx, pswap.PublishOptions{})
	if err != nil {
		t.Fatalf("pswap publish: %v", err)
	}
	if full.MetadataLocation != pub.MetadataLocation {
		t.Fatalf("pswap publish moved the metadata to %s from %s with nothing to do", full.MetadataLocation, pub.MetadataLocation)
	}
	sc, rows := publishedTable(t, pub.MetadataLocation)
	f, ok := sc.FindFieldByName("column with unknown type")
	if !ok || !f.Type.Equals(iceberg.PrimitiveTypes.Binary) {
		t.Fatalf("Iceberg schema: %v", sc)
	}
	if rows != res.Rows {
		t.Fatalf("Iceberg data files record %d rows, the commit %d", rows, res.Rows)
	}
	if !strings.HasPrefix(pub.MetadataLocation, "file://") {
		t.Fatalf("metadata location %s", pub.MetadataLocation)
	}
}

// storedTable reads the current generation of a partition back from the
// table's store with Arrow: the stored files' schema and all their rows.
func storedTable(t *testing.T, tb *pswap.Table, key string) arrow.Table {
	t.Helper()
	p, err := tb.Partition(key)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	var sc *arrow.Schema
	for _, f := range snap.Files {
		data, _, err := store.ReadAll(ctx, tb.Store(), f.Key)
		if err != nil {
			t.Fatal(err)
		}
		r, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sc = tbl.Schema()
		tr := array.NewTableReader(tbl, -1)
		for tr.Next() {
			rec := tr.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		tr.Release()
		tbl.Release()
		r.Close()
	}
	out := array.NewTableFromRecords(sc, recs)
	for _, r := range recs {
		r.Release()
	}
	t.Cleanup(out.Release)
	return out
}

// timestampValues returns the values of a timestamp column (nulls as
// math.MinInt64) and its type.
func timestampValues(t *testing.T, tbl arrow.Table, col string) ([]int64, *arrow.TimestampType) {
	t.Helper()
	idx := tbl.Schema().FieldIndices(col)
	if len(idx) != 1 {
		t.Fatalf("no column %s in %v", col, tbl.Schema())
	}
	var out []int64
	for _, c := range tbl.Column(idx[0]).Data().Chunks() {
		a := c.(*array.Timestamp)
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) {
				out = append(out, math.MinInt64)
			} else {
				out = append(out, int64(a.Value(i)))
			}
		}
	}
	return out, tbl.Schema().Field(idx[0]).Type.(*arrow.TimestampType)
}

// nsRecord is a record of one nanosecond timestamp column "ts" (tz as
// given) with the values (math.MinInt64: null).
func nsRecord(t *testing.T, tz string, vals ...int64) arrow.RecordBatch {
	t.Helper()
	typ := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: tz}
	b := array.NewTimestampBuilder(memory.DefaultAllocator, typ)
	defer b.Release()
	for _, v := range vals {
		if v == math.MinInt64 {
			b.AppendNull()
		} else {
			b.Append(arrow.Timestamp(v))
		}
	}
	a := b.NewArray()
	defer a.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "ts", Type: typ, Nullable: true}}, nil), []arrow.Array{a}, int64(len(vals)))
	t.Cleanup(rec.Release)
	return rec
}

// Parquet TIMESTAMP(NANOS) (pandas' and pyarrow's default) and Arrow
// records in nanoseconds: the table records a microsecond timestamp
// (timestamptz with a zone), the stored files hold microseconds, every
// value exactly (before 1970 too), and the published Iceberg schema says
// timestamp over files that hold what it says. Before, the table recorded
// timestamp_ns and the files nanoseconds, published as Iceberg v2's
// microsecond timestamp: engines read values 1000x too large.
func TestNanosecondTimestampsStoredAsMicroseconds(t *testing.T) {
	vals := []int64{1_764_412_496_123_456_000, math.MinInt64, -1_000, -86_400_000_000_000 * 365, 0}
	for _, tc := range []struct {
		name, tz string
		kind     tablemeta.Kind
		commit   func(tb *pswap.Table, rec arrow.RecordBatch) (pswap.Result, error)
	}{
		{"parquet", "", tablemeta.Timestamp, func(tb *pswap.Table, rec arrow.RecordBatch) (pswap.Result, error) {
			return commitPath(t, tb, "dt=2026-11-29", parquetFile(t, rec), pswap.WriteOptions{})
		}},
		{"parquet-utc", "UTC", tablemeta.TimestampTZ, func(tb *pswap.Table, rec arrow.RecordBatch) (pswap.Result, error) {
			return commitPath(t, tb, "dt=2026-11-29", parquetFile(t, rec), pswap.WriteOptions{})
		}},
		{"record", "UTC", tablemeta.TimestampTZ, func(tb *pswap.Table, rec arrow.RecordBatch) (pswap.Result, error) {
			return commitRecord(t, tb, "dt=2026-11-29", rec, pswap.WriteOptions{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := filestore.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tb := pswap.NewTable(st)
			res, err := tc.commit(tb, nsRecord(t, tc.tz, vals...))
			if err != nil {
				t.Fatal(err)
			}
			meta, err := tablemeta.Load(ctx, tb.Store())
			if err != nil {
				t.Fatal(err)
			}
			if f, _ := meta.Schema.Field("ts"); f.Type.Kind != tc.kind {
				t.Fatalf("table.json: ts is %s, want %s", f.Type, tc.kind)
			}
			got, typ := timestampValues(t, storedTable(t, tb, "dt=2026-11-29"), "ts")
			if typ.Unit != arrow.Microsecond || int64(len(got)) != res.Rows {
				t.Fatalf("stored %s, %d values, committed %d rows", typ, len(got), res.Rows)
			}
			for i, v := range vals {
				want := v
				if v != math.MinInt64 {
					want = v / 1000
				}
				if got[i] != want {
					t.Fatalf("row %d: stored %d, want %d", i, got[i], want)
				}
			}
			p, _ := tb.Partition("dt=2026-11-29")
			if rep, err := p.Verify(ctx); err != nil || !rep.OK {
				t.Fatalf("verify: %+v %v", rep, err)
			}
			pb := p.Publish(ctx, res, pswap.PublishOptions{})
			if !pb.Published {
				t.Fatal(pb.Err)
			}
			sc, rows := publishedTable(t, pb.MetadataLocation)
			f, _ := sc.FindFieldByName("ts")
			want := iceberg.Type(iceberg.PrimitiveTypes.Timestamp)
			if tc.tz != "" {
				want = iceberg.PrimitiveTypes.TimestampTz
			}
			if !f.Type.Equals(want) || rows != res.Rows {
				t.Fatalf("Iceberg: ts %v, %d rows", f.Type, rows)
			}
		})
	}
}

// A nanosecond timestamp that is not a whole microsecond cannot be stored
// in Iceberg v2's microseconds without changing it: the input is refused
// (bad input, naming the column), and nothing is committed.
func TestSubMicrosecondTimestampRefused(t *testing.T) {
	tb := pswap.NewTable(memstore.New())
	rec := nsRecord(t, "UTC", 1_764_412_496_123_456_000, 1_764_412_496_123_456_789)
	for name, commit := range map[string]func() (pswap.Result, error){
		"parquet": func() (pswap.Result, error) {
			return commitPath(t, tb, "dt=2026-11-29", parquetFile(t, rec), pswap.WriteOptions{})
		},
		"record": func() (pswap.Result, error) { return commitRecord(t, tb, "dt=2026-11-29", rec, pswap.WriteOptions{}) },
	} {
		_, err := commit()
		if !errors.Is(err, pswap.ErrBadInput) || !strings.Contains(err.Error(), `"ts"`) || !strings.Contains(err.Error(), "microsecond") {
			t.Fatalf("%s: %v", name, err)
		}
		p, _ := tb.Partition("dt=2026-11-29")
		if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
			t.Fatalf("%s: after the refusal: %v", name, err)
		}
	}
}

type timedRow struct {
	ID int64
	At time.Time
	Op *time.Time `parquet:"op,optional"`
}

// Go structs: a time.Time is a nanosecond timestamp by default
// (parquet-go's), written in microseconds for the table's microsecond
// column: the digits below the microsecond are dropped (UnixMicro), as
// Go's clock readings carry them. The same rows commit again as identical
// content.
func TestGoTimeStoredAsMicroseconds(t *testing.T) {
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	base := time.Date(2026, 11, 29, 10, 0, 0, 123_456_789, time.UTC)
	old := time.Date(1960, 1, 1, 0, 0, 0, 999, time.UTC)
	rows := []timedRow{{1, base, &base}, {2, old, nil}}
	commit := func() pswap.Result {
		p, _ := tb.Partition("dt=2026-11-29")
		w, err := p.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := pswap.Write(w, rows...); err != nil {
			t.Fatal(err)
		}
		res, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := commit()
	meta, err := tablemeta.Load(ctx, tb.Store())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"At", "op"} {
		if f, _ := meta.Schema.Field(c); f.Type.Kind != tablemeta.TimestampTZ {
			t.Fatalf("table.json: %s is %s", c, f.Type)
		}
	}
	tbl := storedTable(t, tb, "dt=2026-11-29")
	at, typ := timestampValues(t, tbl, "At")
	op, _ := timestampValues(t, tbl, "op")
	if typ.Unit != arrow.Microsecond || len(at) != 2 {
		t.Fatalf("stored %s, %d rows", typ, len(at))
	}
	if at[0] != base.UnixMicro() || at[1] != old.UnixMicro() || op[0] != base.UnixMicro() || op[1] != math.MinInt64 {
		t.Fatalf("stored %v %v, want %d %d", at, op, base.UnixMicro(), old.UnixMicro())
	}
	if again := commit(); again.Changed || again.Generation != res.Generation {
		t.Fatalf("the same rows again: %+v", again)
	}
	p, _ := tb.Partition("dt=2026-11-29")
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

type goSale struct {
	ID     int64
	Amount float64
}

// engineParquet is what engines write for goSale's columns: the same
// columns, optional (DuckDB, Spark and Polars write every column
// optional), with the values given (NaN: null); stats false writes no
// column statistics.
func engineParquet(t *testing.T, ids []int64, amounts []float64, stats bool) []byte {
	t.Helper()
	mem := memory.DefaultAllocator
	ib, ab := array.NewInt64Builder(mem), array.NewFloat64Builder(mem)
	defer ib.Release()
	defer ab.Release()
	for i := range ids {
		ib.Append(ids[i])
		if math.IsNaN(amounts[i]) {
			ab.AppendNull()
		} else {
			ab.Append(amounts[i])
		}
	}
	ia, aa := ib.NewArray(), ab.NewArray()
	defer ia.Release()
	defer aa.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "ID", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "Amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{ia, aa}, int64(len(ids)))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(parquet.WithStats(stats)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// currentSum reads a partition's current files from the store and returns
// their rows and the sum of column col (float64).
func currentSum(t *testing.T, tb *pswap.Table, key, col string) (int64, float64) {
	t.Helper()
	tbl := storedTable(t, tb, key)
	var sum float64
	for _, c := range tbl.Column(tbl.Schema().FieldIndices(col)[0]).Data().Chunks() {
		for _, v := range c.(*array.Float64).Float64Values() {
			sum += v
		}
	}
	return tbl.NumRows(), sum
}

// A table first written from Go structs (NOT NULL columns), then given
// engine output (optional columns) without nulls: accepted the same way
// whether the files are local (read, converted) or committed as they are
// (adopted from a reservation; copied from s3://, as `commit --partitioned
// s3://...` does), where the footers' null counts prove "no nulls" without
// reading a page. With a null, or without statistics to prove it, the
// files committed as they are are refused (bad input) naming the column;
// a local file with a null is refused too. Before, the files committed as
// they are were refused even without nulls.
func TestEngineOptionalColumnsIntoNotNullTable(t *testing.T) {
	ids, amounts := []int64{1, 2, 3, 4}, []float64{1.5, 2.5, 3.5, 4.25}
	clean := engineParquet(t, ids, amounts, true)
	withNull := engineParquet(t, ids, []float64{1.5, math.NaN(), 3.5, 4.25}, true)
	noStats := engineParquet(t, ids, amounts, false)
	newTable := func(t *testing.T, st store.Store) *pswap.Table {
		tb := pswap.NewTable(st)
		p, _ := tb.Partition("dt=2026-11-28")
		w, err := p.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := pswap.Write(w, goSale{1, 10}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		meta, err := tablemeta.Load(ctx, tb.Store())
		if err != nil {
			t.Fatal(err)
		}
		if f, _ := meta.Schema.Field("Amount"); f.Nullable {
			t.Fatalf("Go struct column Amount is nullable: %v", meta.Schema)
		}
		return tb
	}
	local := func(t *testing.T, tb *pswap.Table, data []byte) (pswap.Result, error) {
		path := filepath.Join(t.TempDir(), "part-0.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return commitPath(t, tb, "dt=2026-11-29", path, pswap.WriteOptions{})
	}
	adopted := func(t *testing.T, tb *pswap.Table, data []byte) (pswap.Result, error) {
		p, _ := tb.Partition("dt=2026-11-29")
		res, err := p.Reserve(ctx, pswap.CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		putObj(t, tb.Store(), res.Prefix+"part-0.parquet", data)
		putObj(t, tb.Store(), res.Prefix+"_SUCCESS", nil)
		return p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
	}
	copied := func(t *testing.T, tb *pswap.Table, data []byte) (pswap.Result, error) {
		st := tb.Store().(*s3store.Store)
		bucket, _ := testenv.S3Bucket(t)
		src, err := st.Sibling(bucket, "")
		if err != nil {
			t.Fatal(err)
		}
		dir := fmt.Sprintf("engine-out/%s/%d/dt=2026-11-29/", t.Name(), time.Now().UnixNano())
		putObj(t, src, dir+"part-0.parquet", data)
		p, _ := tb.Partition("dt=2026-11-29")
		return p.CommitObjects(ctx, []string{"s3://" + bucket + "/" + dir}, pswap.WriteOptions{})
	}
	for _, path := range []struct {
		name   string
		store  func(t *testing.T) store.Store
		commit func(t *testing.T, tb *pswap.Table, data []byte) (pswap.Result, error)
		asIs   bool
	}{
		{"local", func(*testing.T) store.Store { return memstore.New() }, local, false},
		{"adopted", func(*testing.T) store.Store { return memstore.New() }, adopted, true},
		{"copied-s3", func(t *testing.T) store.Store { return testenv.S3(t) }, copied, true},
	} {
		t.Run(path.name, func(t *testing.T) {
			tb := newTable(t, path.store(t))
			// Nulls: refused, naming the column, nothing committed.
			_, err := path.commit(t, tb, withNull)
			if !errors.Is(err, pswap.ErrBadInput) || !strings.Contains(err.Error(), `"Amount"`) {
				t.Fatalf("a null in a NOT NULL column: %v", err)
			}
			p, _ := tb.Partition("dt=2026-11-29")
			if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
				t.Fatalf("after the refusal: %v", err)
			}
			// No statistics: a local file is read; files as they are
			// cannot prove it.
			_, err = path.commit(t, tb, noStats)
			if path.asIs && (!errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), "do not prove")) {
				t.Fatalf("no statistics, as is: %v", err)
			} else if !path.asIs && err != nil {
				t.Fatalf("no statistics, local: %v", err)
			}
			// No nulls, proven by the footer: accepted, exact.
			res, err := path.commit(t, tb, clean)
			if err != nil {
				t.Fatalf("optional columns without nulls: %v", err)
			}
			if !res.Changed && !path.asIs {
				// The no-statistics file committed the same rows already.
				if res.Outcome != "identical" {
					t.Fatalf("same rows again: %+v", res)
				}
			}
			rows, sum := currentSum(t, tb, "dt=2026-11-29", "Amount")
			if rows != 4 || sum != 11.75 {
				t.Fatalf("stored %d rows, sum %v; want 4, 11.75", rows, sum)
			}
		})
	}
}

// Files committed as they are that create the table must hold what it
// records: nanosecond timestamps make a microsecond column, which adopted
// files (never converted) do not fit, so they are refused naming the
// column, and no table.json is left. Before, the table recorded
// timestamp_ns.
func TestAdoptedNanosecondsRefused(t *testing.T) {
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	var buf bytes.Buffer
	rec := nsRecord(t, "UTC", 1_764_412_496_123_456_000)
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p, res := reserve(t, tb)
	putObj(t, mem, res.Prefix+"part-0.parquet", buf.Bytes())
	_, err = p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
	if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), `"ts"`) || !strings.Contains(err.Error(), "microseconds") {
		t.Fatalf("adopted nanoseconds: %v", err)
	}
	if _, err := tablemeta.Load(ctx, tb.Store()); !errors.Is(err, pswap.ErrNotFound) {
		t.Fatalf("table.json after the refusal: %v", err)
	}
}

// Spark's INT96 timestamps (parquet-testing's int96_from_spark.parquet,
// Spark 3.4: years 2024, 9999 and 290000, and a null) are read in
// microseconds, as Spark and DuckDB read them: the file is accepted
// (before: refused as corrupt, "outside the Arrow nanosecond range"),
// copied as it is into a timestamptz column, and its rows are exactly the
// microseconds its documentation lists: an Arrow record of those values
// is identical content.
func TestInt96FromSparkReadAsMicroseconds(t *testing.T) {
	src := filepath.Join("staging", "testdata", "parquet-testing", "int96_from_spark.parquet")
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	res, err := commitPath(t, tb, "dt=2026-11-29", src, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 6 {
		t.Fatalf("committed %d rows, want 6", res.Rows)
	}
	meta, err := tablemeta.Load(ctx, tb.Store())
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := meta.Schema.Field("a"); f.Type.Kind != tablemeta.TimestampTZ {
		t.Fatalf("table.json: a is %s", f.Type)
	}
	// The file is stored as it is (INT96 bytes, byte for byte).
	p, _ := tb.Partition("dt=2026-11-29")
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := os.ReadFile(strings.TrimPrefix(snap.Files[0].URI, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, orig) {
		t.Fatal("the stored file differs from the input")
	}
	if rep, err := p.Verify(ctx); err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// The same instants in microseconds (int96_from_spark.md) are the
	// same content: the commit is a no-op.
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	defer b.Release()
	for _, v := range []int64{1704141296123456, 1704070800000000, 253402225200000000, 1735599600000000, math.MinInt64, 9089380393200000000} {
		if v == math.MinInt64 {
			b.AppendNull()
		} else {
			b.Append(arrow.Timestamp(v))
		}
	}
	a := b.NewArray()
	defer a.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "a", Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, 6)
	defer rec.Release()
	again, err := commitRecord(t, tb, "dt=2026-11-29", rec, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || again.Outcome != "identical" {
		t.Fatalf("the same microseconds as a record: %+v (want identical content)", again)
	}
}

// parquetOf writes a one-column Parquet file of arr (Arrow's writer).
func parquetOf(t *testing.T, name string, arr arrow.Array, nullable bool) string {
	t.Helper()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: name, Type: arr.DataType(), Nullable: nullable}}, nil), []arrow.Array{arr}, int64(arr.Len()))
	t.Cleanup(rec.Release)
	return parquetFile(t, rec)
}

// uint64 columns (Polars', arrow-rs') go into a long column: the values
// are converted, checked one by one; a value above 2^63-1 is refused
// (bad input) naming the column and what to write instead. Before, the
// table refused the type. An unsigned column is never adopted as it is
// into a long column (engines would read uint32's high values as negative
// longs): a local file is converted, adopted files are refused.
func TestUint64StoredAsLong(t *testing.T) {
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	b := array.NewUint64Builder(memory.DefaultAllocator)
	vals := []uint64{0, 1, math.MaxInt64, 42}
	b.AppendValues(vals, nil)
	a := b.NewArray()
	defer a.Release()
	res, err := commitPath(t, tb, "dt=2026-11-29", parquetOf(t, "u", a, false), pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := tablemeta.Load(ctx, tb.Store())
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := meta.Schema.Field("u"); !f.Type.Equal(tablemeta.LongType) {
		t.Fatalf("table.json: u is %s", f.Type)
	}
	tbl := storedTable(t, tb, "dt=2026-11-29")
	var got []uint64
	for _, c := range tbl.Column(0).Data().Chunks() {
		for _, v := range c.(*array.Int64).Int64Values() {
			got = append(got, uint64(v))
		}
	}
	if res.Rows != 4 || !slices.Equal(got, vals) {
		t.Fatalf("stored %v (%d rows), want %v", got, res.Rows, vals)
	}
	// 2^63 does not fit.
	b.AppendValues([]uint64{7, math.MaxInt64 + 1}, nil)
	big := b.NewArray()
	defer big.Release()
	_, err = commitPath(t, tb, "dt=2026-11-30", parquetOf(t, "u", big, false), pswap.WriteOptions{})
	if !errors.Is(err, pswap.ErrBadInput) || !strings.Contains(err.Error(), `"u"`) || !strings.Contains(err.Error(), "decimal(20,0)") {
		t.Fatalf("uint64 above 2^63-1: %v", err)
	}
	p, _ := tb.Partition("dt=2026-11-30")
	if _, err := p.Current(ctx); !errors.Is(err, pswap.ErrNoData) {
		t.Fatalf("after the refusal: %v", err)
	}
}

// An unsigned column adopted as it is into a long column is refused: its
// values are not converted. Before, uint32 files were adopted into a long
// column as they were.
func TestUnsignedNotAdoptedAsLong(t *testing.T) {
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	if _, err := commitRecord(t, tb, "dt=2026-11-28", record(t, "u", []int64{1}), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	b := array.NewUint32Builder(memory.DefaultAllocator)
	b.AppendValues([]uint32{1, math.MaxUint32}, nil)
	a := b.NewArray()
	defer a.Release()
	b.Release()
	data, err := os.ReadFile(parquetOf(t, "u", a, true))
	if err != nil {
		t.Fatal(err)
	}
	p, res := reserve(t, tb)
	putObj(t, mem, res.Prefix+"part-0.parquet", data)
	_, err = p.CommitStaged(ctx, res.Generation, pswap.CommitOptions{})
	if !errors.Is(err, pswap.ErrSchemaMismatch) || !strings.Contains(err.Error(), `"u"`) || !strings.Contains(err.Error(), "uint32") {
		t.Fatalf("uint32 files adopted into a long column: %v", err)
	}
	// The same file from a local path is converted, every value exact.
	path := filepath.Join(t.TempDir(), "u.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := commitPath(t, tb, apart, path, pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if rows, sum := currentInt64Sum(t, tb, apart, "u"); rows != 2 || sum != 1+math.MaxUint32 {
		t.Fatalf("stored %d rows, sum %d", rows, sum)
	}
}

// currentInt64Sum reads a partition's current files and returns their
// rows and the sum of int64 column col.
func currentInt64Sum(t *testing.T, tb *pswap.Table, key, col string) (int64, int64) {
	t.Helper()
	tbl := storedTable(t, tb, key)
	var sum int64
	for _, c := range tbl.Column(tbl.Schema().FieldIndices(col)[0]).Data().Chunks() {
		for _, v := range c.(*array.Int64).Int64Values() {
			sum += v
		}
	}
	return tbl.NumRows(), sum
}

// listShape reads column col of a Parquet file as a list column: for each
// row, -1 for null, else the list's length.
func listShape(t *testing.T, path, col string) []int {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var out []int
	for _, c := range tbl.Column(tbl.Schema().FieldIndices(col)[0]).Data().Chunks() {
		l := c.(*array.List)
		for i := 0; i < l.Len(); i++ {
			if l.IsNull(i) {
				out = append(out, -1)
			} else {
				s, e := l.ValueOffsets(i)
				out = append(out, int(e-s))
			}
		}
	}
	return out
}

// An all-null list column (parquet-testing's null_list.parquet: pyarrow's
// list<null>, every element type unknown) goes into a table whose column
// is a list of a known element type: converted, the rows' nulls and empty
// lists exactly as they were. Before, the table refused it ("type null").
func TestAllNullListIntoKnownList(t *testing.T) {
	src := filepath.Join("staging", "testdata", "parquet-testing", "null_list.parquet")
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	b := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64)
	b.Append(true)
	b.ValueBuilder().(*array.Int64Builder).Append(4)
	a := b.NewArray()
	defer a.Release()
	b.Release()
	if _, err := commitPath(t, tb, "dt=2026-11-28", parquetOf(t, "emptylist", a, true), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := commitPath(t, tb, "dt=2026-11-29", src, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := listShape(t, src, "emptylist")
	p, _ := tb.Partition("dt=2026-11-29")
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, f := range snap.Files {
		got = append(got, listShape(t, strings.TrimPrefix(f.URI, "file://"), "emptylist")...)
	}
	if int64(len(got)) != res.Rows || !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("stored rows %v (%d committed), want %v", got, res.Rows, want)
	}
	tbl := storedTable(t, tb, "dt=2026-11-29")
	if typ := tbl.Schema().Field(0).Type; !arrow.TypeEqual(typ.(arrow.ListLikeType).Elem(), arrow.PrimitiveTypes.Int64) {
		t.Fatalf("stored as %s", typ)
	}
	// An Arrow record's large_list<null>, with a null, an empty list and
	// two null elements (Arrow's cast panicked on such lists).
	lb := array.NewLargeListBuilder(memory.DefaultAllocator, arrow.Null)
	lb.AppendNull()
	lb.Append(true)
	lb.Append(true)
	lb.ValueBuilder().AppendNulls(2)
	la := lb.NewArray()
	defer la.Release()
	lb.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "emptylist", Type: la.DataType(), Nullable: true}}, nil), []arrow.Array{la}, 3)
	defer rec.Release()
	if _, err := commitRecord(t, tb, "dt=2026-11-30", rec, pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	p, _ = tb.Partition("dt=2026-11-30")
	if snap, err = p.Current(ctx); err != nil || len(snap.Files) != 1 {
		t.Fatalf("current: %v", err)
	}
	if got := listShape(t, strings.TrimPrefix(snap.Files[0].URI, "file://"), "emptylist"); !slices.Equal(got, []int{-1, 0, 2}) {
		t.Fatalf("stored list lengths %v, want [-1 0 2]", got)
	}
}

// A generation staged before INT96 timestamps were read in microseconds
// recorded them as Arrow's nanoseconds, in its schema and content
// checksum: it still verifies (its checksum recomputed that way), and a
// wrong checksum is still a mismatch. Without the fallback, verify
// reported every such generation (Spark's output) as a mismatch.
func TestInt96GenerationStagedInNanosecondsVerifies(t *testing.T) {
	rec := nsRecord(t, "", 1_764_412_496_123_456_000, math.MinInt64, -86_400_000_000_000*365)
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, nil, pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(true)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "int96.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var old pqscan.RowScan
	old.Int96Nanos = true
	if err := old.Add(ctx, bytes.NewReader(buf.Bytes()), int64(buf.Len()), "int96.parquet"); err != nil {
		t.Fatal(err)
	}
	_, oldSum := old.Checksum()
	for _, tc := range []struct {
		name string
		sum  string
		ok   bool
	}{{"staged in nanoseconds", oldSum, true}, {"wrong", "colsum128:00000000000000000000000000000000", false}} {
		t.Run(tc.name, func(t *testing.T) {
			st := memstore.New()
			txn, err := swap.Begin(ctx, st, "dt=2026-11-29", swap.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := staging.New(ctx, st, txn.DataPrefix(), staging.Options{})
			if err := s.AddParquetFile(ctx, path); err != nil {
				t.Fatal(err)
			}
			c, err := s.Finish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(c.Schema, "timestamp[us, tz=UTC]") || c.ContentChecksum == oldSum {
				t.Fatalf("staged now: %s %s", c.Schema, c.ContentChecksum)
			}
			c.Schema = strings.ReplaceAll(c.Schema, "timestamp[us, tz=UTC]", "timestamp[ns, tz=UTC]")
			c.ContentChecksum = tc.sum
			if _, err := txn.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
			p, _ := pswap.NewTable(st).Partition("dt=2026-11-29")
			rep, err := p.Verify(ctx)
			if tc.ok != (err == nil && rep.OK) {
				t.Fatalf("verify: %+v %v", rep, err)
			}
		})
	}
}

type sparkRow struct {
	N int32            `parquet:"n"`
	A deprecated.Int96 `parquet:"a"`
}

// sparkInt96 is Spark's INT96 encoding of micros (DateTimeUtils.toJulianDay,
// in wrapping 64-bit arithmetic).
func sparkInt96(micros int64) deprecated.Int96 {
	const microsPerDay = 86_400_000_000
	julianUs := micros + 2440588*microsPerDay
	days, us := julianUs/microsPerDay, julianUs%microsPerDay
	nanos := uint64(us * 1000)
	return deprecated.Int96{uint32(nanos), uint32(nanos >> 32), uint32(int32(days))}
}

// An INT96 file that must be converted (its int32 column goes into the
// table's long column) is read through Arrow's records with its INT96
// column read in microseconds beside them: years beyond Arrow's
// nanosecond range are stored exactly. Before, Arrow's reader refused
// them (and the scan of a row group the fast scan gives up did too).
func TestInt96ConvertedExactly(t *testing.T) {
	micros := []int64{1704141296123456, 253402225200000000, -62135596800000000, 9089380393200000000, 0}
	rows := make([]sparkRow, len(micros))
	for i, m := range micros {
		rows[i] = sparkRow{N: int32(i), A: sparkInt96(m)}
	}
	path := filepath.Join(t.TempDir(), "spark.parquet")
	if err := pq.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := pswap.NewTable(st)
	// The table: n long, a timestamptz (both NOT NULL, as parquet-go wrote them).
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	b.Append(1)
	a := b.NewArray()
	defer a.Release()
	b.Release()
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	ib.Append(1)
	n := ib.NewArray()
	defer n.Release()
	ib.Release()
	first := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "n", Type: n.DataType()}, {Name: "a", Type: a.DataType()}}, nil), []arrow.Array{n, a}, 1)
	defer first.Release()
	if _, err := commitRecord(t, tb, "dt=2026-11-28", first, pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := commitPath(t, tb, "dt=2026-11-29", path, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, typ := timestampValues(t, storedTable(t, tb, "dt=2026-11-29"), "a")
	if typ.Unit != arrow.Microsecond || res.Rows != int64(len(micros)) || !slices.Equal(got, micros) {
		t.Fatalf("stored %v (%s, %d rows), want %v", got, typ, res.Rows, micros)
	}
}
