package pswap_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// keyVariant is a merge input's key column: its Arrow type and the JSON
// of the keys k2 and k4 (the second key of the table's rows, and a new
// one) in that type.
type keyVariant struct {
	typ  arrow.DataType
	json string
}

// keyCase is a table whose key column has type typ, holding the keys k1,
// k2, k3 (base, JSON in typ), and the merge inputs that hold k2 and k4
// in other types and units.
type keyCase struct {
	name     string
	typ      arrow.DataType
	base     string
	variants []keyVariant
}

func tsType(u arrow.TimeUnit, tz string) arrow.DataType {
	return &arrow.TimestampType{Unit: u, TimeZone: tz}
}

// keyCases are every key type the table schema knows, each with inputs
// in every Arrow type that the table stores in it.
func keyCases() []keyCase {
	const h = int64(3600) // an hour in seconds
	ints := func(mul int64, vs ...int64) string {
		s := make([]string, len(vs))
		for i, v := range vs {
			s[i] = fmt.Sprint(v * mul)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	var tsVariants = func(tz string, zones ...string) []keyVariant {
		var out []keyVariant
		for _, z := range append([]string{tz}, zones...) {
			out = append(out,
				keyVariant{tsType(arrow.Second, z), ints(1, 2*h, 4*h)},
				keyVariant{tsType(arrow.Millisecond, z), ints(1_000, 2*h, 4*h)},
				keyVariant{tsType(arrow.Microsecond, z), ints(1_000_000, 2*h, 4*h)},
				keyVariant{tsType(arrow.Nanosecond, z), ints(1_000_000_000, 2*h, 4*h)})
		}
		return out
	}
	return []keyCase{
		{"long", arrow.PrimitiveTypes.Int64, `[1,2,3]`, []keyVariant{
			{arrow.PrimitiveTypes.Int8, `[2,4]`}, {arrow.PrimitiveTypes.Int16, `[2,4]`},
			{arrow.PrimitiveTypes.Int32, `[2,4]`}, {arrow.PrimitiveTypes.Int64, `[2,4]`},
			{arrow.PrimitiveTypes.Uint8, `[2,4]`}, {arrow.PrimitiveTypes.Uint16, `[2,4]`},
			{arrow.PrimitiveTypes.Uint32, `[2,4]`},
		}},
		{"int", arrow.PrimitiveTypes.Int32, `[1,2,3]`, []keyVariant{
			{arrow.PrimitiveTypes.Int8, `[2,4]`}, {arrow.PrimitiveTypes.Int16, `[2,4]`},
			{arrow.PrimitiveTypes.Int32, `[2,4]`},
		}},
		{"double", arrow.PrimitiveTypes.Float64, `[1.5,2.25,3]`, []keyVariant{
			{arrow.PrimitiveTypes.Float32, `[2.25,4]`}, {arrow.PrimitiveTypes.Float64, `[2.25,4]`},
		}},
		{"string", arrow.BinaryTypes.String, `["a","b","c"]`, []keyVariant{
			{arrow.BinaryTypes.String, `["b","d"]`}, {arrow.BinaryTypes.LargeString, `["b","d"]`},
		}},
		{"binary", arrow.BinaryTypes.Binary, `["YQ==","Yg==","Yw=="]`, []keyVariant{
			{arrow.BinaryTypes.Binary, `["Yg==","ZA=="]`}, {arrow.BinaryTypes.LargeBinary, `["Yg==","ZA=="]`},
		}},
		{"date", arrow.FixedWidthTypes.Date32, `[20000,20001,20002]`, []keyVariant{
			{arrow.FixedWidthTypes.Date32, `[20001,20003]`},
			{arrow.FixedWidthTypes.Date64, ints(86_400_000, 20001, 20003)},
		}},
		{"time", arrow.FixedWidthTypes.Time64us, ints(1_000_000, h, 2*h, 3*h), []keyVariant{
			{arrow.FixedWidthTypes.Time32s, ints(1, 2*h, 4*h)},
			{arrow.FixedWidthTypes.Time32ms, ints(1_000, 2*h, 4*h)},
			{arrow.FixedWidthTypes.Time64us, ints(1_000_000, 2*h, 4*h)},
			{arrow.FixedWidthTypes.Time64ns, ints(1_000_000_000, 2*h, 4*h)},
		}},
		{"timestamp", tsType(arrow.Microsecond, ""), ints(1_000_000, h, 2*h, 3*h), tsVariants("")},
		{"timestamptz", tsType(arrow.Microsecond, "UTC"), ints(1_000_000, h, 2*h, 3*h), tsVariants("UTC", "Europe/Lisbon", "+01:00")},
		{"decimal", &arrow.Decimal128Type{Precision: 10, Scale: 2}, `["1.50","2.25","3.00"]`, []keyVariant{
			{&arrow.Decimal128Type{Precision: 10, Scale: 2}, `["2.25","4.00"]`},
			{&arrow.Decimal128Type{Precision: 6, Scale: 2}, `["2.25","4.00"]`},
		}},
	}
}

// keyRecord is a record of columns k (typ, from keysJSON) and v (vals).
func keyRecord(t testing.TB, typ arrow.DataType, keysJSON string, vals ...string) arrow.RecordBatch {
	t.Helper()
	mem := memory.DefaultAllocator
	k, _, err := array.FromJSON(mem, typ, strings.NewReader(keysJSON))
	if err != nil {
		t.Fatalf("%s %s: %v", typ, keysJSON, err)
	}
	defer k.Release()
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	v := b.NewArray()
	defer v.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: typ, Nullable: false}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{k, v}, int64(k.Len()))
	t.Cleanup(rec.Release)
	return rec
}

// columnValues reads column name of a partition's current files back
// with Arrow's Parquet reader, as sorted text.
func columnValues(t testing.TB, st store.Store, key, name string) []string {
	t.Helper()
	out := readColumn(t, st, key, name)
	slices.Sort(out)
	return out
}

// readColumn reads column name of a partition's current files back with
// Arrow's Parquet reader, as text in file and row order.
func readColumn(t testing.TB, st store.Store, key, name string) []string {
	t.Helper()
	var out []string
	eachCurrentFile(t, st, key, func(file string, tb arrow.Table) {
		c := tableColumn(t, file, tb, name)
		for i := range c.Len() {
			out = append(out, c.ValueStr(i))
		}
	})
	return out
}

// TestMergeKeyTypesOracle: for every key type the table schema knows, a
// merge input whose key column holds the same values in another Arrow
// type or unit (a time in ms or ns for a table's time in µs, a timestamp
// in s, ms or ns, an int8 for a long, a large string for a string, a
// date64 for a date...) replaces the rows of those keys: the plain model
// is the table's rows with k2's value replaced and k4 added, 4 rows
// (issue 39, item 3: the key was hashed from Arrow's text of the input's
// value before its conversion, and a time key's rows doubled).
func TestMergeKeyTypesOracle(t *testing.T) {
	ctx := context.Background()
	runs := 0
	for _, kc := range keyCases() {
		for _, v := range kc.variants {
			t.Run(kc.name+"/"+v.typ.String(), func(t *testing.T) {
				st := memstore.New()
				tbl := pswap.NewTable(st)
				const day = "dt=2026-11-27"
				if _, err := commitPath(t, tbl, day, parquetFile(t, keyRecord(t, kc.typ, kc.base, "a", "b", "c")), pswap.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
				in := parquetFile(t, keyRecord(t, v.typ, v.json, "B", "D"))
				res, err := tbl.Merge(ctx, []string{in}, pswap.MergeOptions{Keys: []string{"k"}, Partition: day})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Partitions) != 1 || res.Partitions[0].Removed != 1 || res.Partitions[0].Kept != 2 {
					t.Errorf("merge result %+v: want 1 removed, 2 kept", res.Partitions)
				}
				want := []string{"B", "D", "a", "c"} // the plain model: k2 replaced, k4 added
				if got := columnValues(t, st, day, "v"); !slices.Equal(got, want) {
					t.Errorf("the partition holds the values %q, want %q (keys %q)", got, want, columnValues(t, st, day, "k"))
				}
				runs++
			})
		}
	}
	t.Logf("%d key type and unit combinations merged", runs)
}
