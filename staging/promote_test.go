package staging

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/tablemeta"
)

// Every table type's canonical Arrow type is what staging's canonical
// schema derives from the Parquet it writes for it, so data in a table's
// types is stored as it is and never converted twice.
func TestTableTypesAreCanonical(t *testing.T) {
	elem := func(tt tablemeta.Type, nullable bool) *tablemeta.Field {
		return &tablemeta.Field{Name: "element", Type: tt, Nullable: nullable}
	}
	types := []tablemeta.Type{
		tablemeta.BooleanType, tablemeta.IntType, tablemeta.LongType, tablemeta.FloatType, tablemeta.DoubleType,
		tablemeta.DecimalType(9, 2), tablemeta.DecimalType(18, 4), tablemeta.DecimalType(38, 10),
		tablemeta.DateType, tablemeta.TimeType, tablemeta.TimestampType, tablemeta.TimestampTZType,
		tablemeta.TimestampNsType, tablemeta.TimestampTZNsType, tablemeta.StringType, tablemeta.BinaryType,
		tablemeta.FixedType(16),
		{Kind: tablemeta.List, Element: elem(tablemeta.LongType, true)},
		{Kind: tablemeta.List, Element: elem(tablemeta.StringType, false)},
		{Kind: tablemeta.Struct, Fields: []tablemeta.Field{{Name: "a", Type: tablemeta.IntType, Nullable: true}, {Name: "b", Type: tablemeta.StringType}}},
		{Kind: tablemeta.Map, Key: &tablemeta.Field{Name: "key", Type: tablemeta.StringType}, Value: &tablemeta.Field{Name: "value", Type: tablemeta.DoubleType, Nullable: true}},
	}
	_, s := newMem(t, Options{})
	for _, tt := range types {
		for _, nullable := range []bool{true, false} {
			want := tablemeta.Schema{Fields: []tablemeta.Field{{ID: 1, Name: "c", Type: tt, Nullable: nullable}}}
			c, err := pqscan.SchemaOfArrow(want.Arrow(), s.arrowProps)
			if err != nil {
				t.Errorf("%s: %v", tt, err)
				continue
			}
			got, err := tablemeta.SchemaFromArrow(c.Arrow)
			if err != nil || !got.SameTypes(want) {
				t.Errorf("%s (nullable %v): canonical %s maps back to %s (%v)", tt, nullable, c.Arrow, got, err)
			}
			if !arrow.TypeEqual(c.Arrow.Field(0).Type, tt.Arrow()) {
				t.Errorf("%s: canonical type %s, the table's Arrow type %s", tt, c.Arrow.Field(0).Type, tt.Arrow())
			}
		}
	}
}

// conformTo is a ConformFunc that stores every input in target.
func conformTo(target *arrow.Schema) ConformFunc {
	return func(Input, *arrow.Schema) (*arrow.Schema, error) { return target, nil }
}

func int32Record(t *testing.T, nullable bool, vals []int32, valid []bool) arrow.RecordBatch {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues(vals, valid)
	a := b.NewArray()
	defer a.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: nullable}}, nil), []arrow.Array{a}, int64(a.Len()))
	t.Cleanup(rec.Release)
	return rec
}

func TestConformConvertsRecords(t *testing.T) {
	long := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	st, s := newMem(t, Options{Conform: conformTo(long)})
	if err := s.WriteRecord(int32Record(t, true, []int32{1, 2, 3}, nil)); err != nil {
		t.Fatal(err)
	}
	c, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tbl := readArrow(t, fileBytes(t, st, c.Files[0]))
	if f := tbl.Schema().Field(0); f.Type.ID() != arrow.INT64 || f.Nullable {
		t.Fatalf("stored as %v", f)
	}
	// The content checksum is the one of the same rows written as int64.
	_, s2 := newMem(t, Options{})
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, nil)
	a := b.NewArray()
	defer a.Release()
	rec := array.NewRecordBatch(long, []arrow.Array{a}, 3)
	defer rec.Release()
	if err := s2.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	c2, _ := s2.Finish(context.Background())
	if c.ContentChecksum != c2.ContentChecksum || c.Schema != c2.Schema {
		t.Fatalf("converted %s %q, native %s %q", c.ContentChecksum, c.Schema, c2.ContentChecksum, c2.Schema)
	}
}

func TestConformRefusesNullsInNotNull(t *testing.T) {
	long := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	st, s := newMem(t, Options{Conform: conformTo(long)})
	err := s.WriteRecord(int32Record(t, true, []int32{1, 0}, []bool{true, false}))
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), `column "n" holds 1 nulls, but the table's column is NOT NULL`) {
		t.Fatalf("%v", err)
	}
	for a, err := range st.List(context.Background(), "") {
		t.Fatalf("left behind: %v %v", a.Key, err)
	}
}

func TestConformGoStructsCannotConvert(t *testing.T) {
	long := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	_, s := newMem(t, Options{Conform: conformTo(long)})
	type row struct {
		N int32 `parquet:"n"`
	}
	err := Write(s, row{N: 1})
	if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "change the types to the table's") {
		t.Fatalf("%v", err)
	}
}

func TestConformErrorNamesInput(t *testing.T) {
	refuse := func(in Input, _ *arrow.Schema) (*arrow.Schema, error) {
		if !in.Text {
			t.Errorf("%s is not text", in.Name)
		}
		return nil, errors.New("no")
	}
	_, s := newMem(t, Options{Conform: refuse})
	err := s.AddCSV(context.Background(), strings.NewReader("a\n1\n"), "x.csv", CSVOptions{})
	if err == nil || !strings.Contains(err.Error(), "no (in CSV x.csv)") {
		t.Fatalf("%v", err)
	}
}
