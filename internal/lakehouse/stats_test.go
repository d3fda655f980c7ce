package lakehouse

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/manifest"
)

// statsRows is the data of TestStatsOf: row groups of 3 rows, the second of
// which has only nulls in i32 and ts.
var statsRows = []struct {
	i32  *int32
	i64  int64
	day  int32
	ts   *int64 // micros
	ms   int64  // millis
	s    string
	b    bool
	f    float64
	u    uint64
	none *int64
}{
	{i32: ptr[int32](-7), i64: 10, day: 20000, ts: ptr[int64](1_700_000_000_000_001), ms: 1_700_000_000_123, s: "banana", b: true, f: 0.5, u: 1},
	{i32: ptr[int32](3), i64: -40, day: 20001, ts: ptr[int64](1_700_000_000_000_000), ms: 1_700_000_000_001, s: "abcdefghijklmnopqrstuvwxyz", b: true, f: 2.5, u: 2},
	{i32: ptr[int32](12), i64: 5, day: 19999, ts: ptr[int64](1_700_000_500_000_000), ms: 1_700_000_000_000, s: "zzzzzzzzzzzzzzzz\U0010FFFF\U0010FFFFz", b: true, f: -1, u: 3},
	{i64: 7, day: 20002, ms: 1_600_000_000_000, s: "abc", b: true, f: 9, u: 1 << 63},
	{i64: 8, day: 20003, ms: 1_800_000_000_000, s: "", b: true, f: 3, u: 4},
	{i64: 9, day: 20004, ms: 1_700_000_000_000, s: "b", b: true, f: 3, u: 5},
	{i32: ptr[int32](100), i64: 1 << 40, day: 20005, ts: ptr[int64](-5), ms: 1_700_000_000_000, s: "bananas", b: true, f: 3, u: 6},
}

func ptr[T any](v T) *T { return &v }

// statsFile writes statsRows as Parquet with arrow-go, 3 rows per row
// group, and returns its footer and the table's Iceberg schema.
func statsFile(t *testing.T) (*metadata.FileMetaData, *iceberg.Schema) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "none", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "extra", Type: arrow.PrimitiveTypes.Int64}, // not in the table's schema
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range statsRows {
		if r.i32 != nil {
			b.Field(0).(*array.Int32Builder).Append(*r.i32)
		} else {
			b.Field(0).AppendNull()
		}
		b.Field(1).(*array.Int64Builder).Append(r.i64)
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(r.day))
		if r.ts != nil {
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(*r.ts))
		} else {
			b.Field(3).AppendNull()
		}
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ms))
		b.Field(5).(*array.StringBuilder).Append(r.s)
		b.Field(6).(*array.BooleanBuilder).Append(r.b)
		b.Field(7).(*array.Float64Builder).Append(r.f)
		b.Field(8).(*array.Uint64Builder).Append(r.u)
		b.Field(9).AppendNull()
		b.Field(10).(*array.Int64Builder).Append(1)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(3), parquet.WithStats(true))
	// Arrow's defaults: microseconds stay TIMESTAMP(MICROS), milliseconds
	// TIMESTAMP(MILLIS).
	w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r.NumRowGroups() != 3 {
		t.Fatalf("%d row groups, want 3", r.NumRowGroups())
	}
	return r.MetaData(), iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "i32", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "i64", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 4, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 5, Name: "ms", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 6, Name: "s", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 7, Name: "b", Type: iceberg.PrimitiveTypes.Bool, Required: true},
		iceberg.NestedField{ID: 8, Name: "f", Type: iceberg.PrimitiveTypes.Float64, Required: true},
		iceberg.NestedField{ID: 9, Name: "u", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 10, Name: "none", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 11, Name: "dt", Type: iceberg.PrimitiveTypes.String}, // a partition column
	)
}

func le32(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

// TestStatsOf: the statistics of a file of three row groups, checked
// against the rows it was written from: counts summed, null counts exact,
// bounds the minimum and maximum of the non-null values in Iceberg's
// serialization, strings truncated as Java Iceberg does, and no bounds
// where they would not be exact (doubles, unsigned integers, a column with
// no values).
func TestStatsOf(t *testing.T) {
	md, sc := statsFile(t)
	st := statsOf(md, sc)
	n := int64(len(statsRows))
	for id := 1; id <= 10; id++ {
		if st.values[id] != n {
			t.Errorf("field %d: value count %d, want %d", id, st.values[id], n)
		}
		if st.sizes[id] <= 0 {
			t.Errorf("field %d: column size %d", id, st.sizes[id])
		}
	}
	for _, id := range []int{11} {
		if _, ok := st.values[id]; ok {
			t.Errorf("field %d (not in the file) has statistics", id)
		}
	}
	wantNulls := map[int]int64{1: 3, 2: 0, 3: 0, 4: 3, 6: 0, 10: n}
	for id, want := range wantNulls {
		if got, ok := st.nulls[id]; !ok || got != want {
			t.Errorf("field %d: null count %d (%v), want %d", id, got, ok, want)
		}
	}
	minMax := func(vals []int64) (lo, hi int64) {
		lo, hi = vals[0], vals[0]
		for _, v := range vals {
			lo, hi = min(lo, v), max(hi, v)
		}
		return lo, hi
	}
	var i32s, i64s, days, tss []int64
	for _, r := range statsRows {
		if r.i32 != nil {
			i32s = append(i32s, int64(*r.i32))
		}
		if r.ts != nil {
			tss = append(tss, *r.ts)
		}
		i64s = append(i64s, r.i64)
		days = append(days, int64(r.day))
	}
	check := func(id int, lo, hi []byte) {
		t.Helper()
		if !bytes.Equal(st.lower[id], lo) || !bytes.Equal(st.upper[id], hi) {
			t.Errorf("field %d: bounds %x..%x, want %x..%x", id, st.lower[id], st.upper[id], lo, hi)
		}
	}
	lo, hi := minMax(i32s)
	check(1, le32(int32(lo)), le32(int32(hi)))
	lo, hi = minMax(i64s)
	check(2, le64(lo), le64(hi))
	lo, hi = minMax(days)
	check(3, le32(int32(lo)), le32(int32(hi)))
	lo, hi = minMax(tss)
	check(4, le64(lo), le64(hi))
	var mss []int64
	for _, r := range statsRows {
		mss = append(mss, r.ms)
	}
	lo, hi = minMax(mss)
	check(5, le64(lo*1000), le64(hi*1000)) // millisecond bounds in microseconds
	// The greatest string is cut to its first 16 code points (16 'z'), the
	// last of which is incremented: 15 'z' and '{'. The least is the empty
	// string, which bounds nothing: no lower bound (every string is at
	// least "", so it would prune nothing).
	check(6, nil, []byte("zzzzzzzzzzzzzzz{"))
	check(7, []byte{1}, []byte{1})
	for _, id := range []int{8, 9, 10} {
		if st.lower[id] != nil || st.upper[id] != nil {
			t.Errorf("field %d has bounds %x..%x, want none", id, st.lower[id], st.upper[id])
		}
	}
}

// The statistics a manifest records (pqscan.ColumnStats, as the writer
// computes them from the footer in hand, through the manifest's encoding)
// give the Iceberg entry exactly what reading the footer back gives.
func TestStatsFromManifestEqualFooter(t *testing.T) {
	md, sc := statsFile(t)
	m := &manifest.Manifest{
		Partition: "dt=2026-12-05", Generation: "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b",
		Content:   manifest.Content{ContentChecksum: "colsum128:00112233445566778899aabbccddeeff"},
		CreatedAt: time.Unix(1, 0), CommittedAt: time.Unix(2, 0),
	}
	m.Add(manifest.File{Path: "part-00000.parquet", Size: 100, Rows: md.NumRows,
		Checksum: "sha256:" + strings.Repeat("0", 64), Columns: pqscan.ColumnStats(md)})
	doc, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := manifest.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := statsFrom(back.Files[0].Columns, sc), statsOf(md, sc); !reflect.DeepEqual(got, want) {
		t.Fatalf("statistics from the manifest:\n%+v\nfrom the footer:\n%+v", got, want)
	}
}

// An INT96 timestamp column (Spark's default) has value counts and null
// counts in the Iceberg entry: Spark's footer records its null count,
// which Arrow's reader ignores with the rest of INT96 statistics (INT96
// has no defined order). No bounds: INT96 has none that are exact. The
// file is parquet-testing's int96_from_spark.parquet (parquet-mr 1.13.1);
// the nulls are counted by reading its rows.
func TestInt96NullCounts(t *testing.T) {
	path := filepath.Join("..", "..", "staging", "testdata", "parquet-testing", "int96_from_spark.parquet")
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.MetaData()
	if pt := md.Schema.Column(0).PhysicalType(); pt != parquet.Types.Int96 {
		t.Fatalf("column a stored as %s, want INT96", pt)
	}
	// Count the nulls from the definition levels (Arrow's reader refuses
	// these instants: outside its nanosecond range).
	var nulls, rows int64
	for g := 0; g < r.NumRowGroups(); g++ {
		cr, err := r.RowGroup(g).Column(0)
		if err != nil {
			t.Fatal(err)
		}
		n := r.RowGroup(g).NumRows()
		vals, defs := make([]parquet.Int96, n), make([]int16, n)
		total, _, err := cr.(*file.Int96ColumnChunkReader).ReadBatch(n, vals, defs, nil)
		if err != nil || total != n {
			t.Fatalf("row group %d: read %d of %d levels: %v", g, total, n, err)
		}
		for _, d := range defs {
			if d == 0 {
				nulls++
			}
		}
		rows += n
	}
	if nulls == 0 {
		t.Fatal("the file has no nulls: the test proves nothing")
	}
	isc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Timestamp})
	st := statsOf(md, isc)
	if st.values[1] != rows {
		t.Errorf("a: value count %d, want %d", st.values[1], rows)
	}
	if got, ok := st.nulls[1]; !ok || got != nulls {
		t.Errorf("a: null count %d (recorded %v), want %d", got, ok, nulls)
	}
	if st.lower[1] != nil || st.upper[1] != nil {
		t.Errorf("a: bounds %x..%x, want none for INT96", st.lower[1], st.upper[1])
	}
}
