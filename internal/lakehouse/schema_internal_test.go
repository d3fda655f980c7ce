package lakehouse

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
)

// TestBuildSchemaMissingColumnBecomesOptional: a generation whose files
// lack a required column of the table makes it optional (readers fill it
// with nulls; a required column a file lacks fails them), while the
// partition column, which no file holds, stays as it is.
func TestBuildSchemaMissingColumnBecomesOptional(t *testing.T) {
	key, err := partition.Parse("dt=2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	prev := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "city", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "dt", Type: iceberg.PrimitiveTypes.String, Required: true},
	)
	as := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	src, err := footerSource(as, key)
	if err != nil {
		t.Fatal(err)
	}
	sc, changed, err := buildSchema(prev, 3, src, key)
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		t.Fatal("a column the files lack left the schema unchanged")
	}
	want := map[string]bool{"id": true, "city": false, "dt": true}
	for _, f := range sc.Fields() {
		if f.Required != want[f.Name] {
			t.Errorf("%s: required %v, want %v", f.Name, f.Required, want[f.Name])
		}
	}
	if sc.ID != prev.ID+1 {
		t.Errorf("schema id %d, want %d", sc.ID, prev.ID+1)
	}
	// The same files again change nothing.
	if _, changed, err := buildSchema(sc, 3, src, key); err != nil || changed {
		t.Errorf("again: changed %v, %v", changed, err)
	}
}

// TestIcebergTypeAsFooters: table.json's types map to the Iceberg types
// that the footers of the files stored in them (Type.Arrow) mapped to, so
// a table publishes the same types from table.json as from its files
// (nanosecond timestamps included: Iceberg v2 timestamps, as before).
func TestIcebergTypeAsFooters(t *testing.T) {
	field := func(name string, t tablemeta.Type, nullable bool) tablemeta.Field {
		return tablemeta.Field{Name: name, Type: t, Nullable: nullable}
	}
	types := []tablemeta.Type{
		tablemeta.BooleanType, tablemeta.IntType, tablemeta.LongType, tablemeta.FloatType, tablemeta.DoubleType,
		tablemeta.DecimalType(9, 2), tablemeta.DecimalType(38, 0), tablemeta.DateType, tablemeta.TimeType,
		tablemeta.TimestampType, tablemeta.TimestampTZType, tablemeta.TimestampNsType, tablemeta.TimestampTZNsType,
		tablemeta.StringType, tablemeta.BinaryType, tablemeta.FixedType(16),
		{Kind: tablemeta.Struct, Fields: []tablemeta.Field{field("a", tablemeta.IntType, false), field("b", tablemeta.StringType, true)}},
		{Kind: tablemeta.List, Element: &tablemeta.Field{Name: "element", Type: tablemeta.LongType, Nullable: true}},
		{Kind: tablemeta.List, Element: &tablemeta.Field{Name: "element", Type: tablemeta.LongType}},
		{Kind: tablemeta.Map, Key: &tablemeta.Field{Name: "key", Type: tablemeta.StringType},
			Value: &tablemeta.Field{Name: "value", Type: tablemeta.DoubleType, Nullable: true}},
		{Kind: tablemeta.Map, Key: &tablemeta.Field{Name: "key", Type: tablemeta.StringType},
			Value: &tablemeta.Field{Name: "value", Type: tablemeta.DoubleType}},
	}
	if len(icebergPrimitives)+2+3 != int(tablemeta.Map) {
		t.Fatalf("%d primitive kinds mapped: a kind was added, map it and list it here", len(icebergPrimitives))
	}
	for _, tt := range types {
		got, err := icebergType("c", tt)
		if err != nil {
			t.Fatalf("%s: %v", tt, err)
		}
		want, err := footerType(arrow.Field{Name: "c", Type: tt.Arrow()})
		if err != nil {
			t.Fatalf("%s stored as %s: %v", tt, tt.Arrow(), err)
		}
		if !got.Equals(want) {
			t.Errorf("%s: %s, its files' footers %s", tt, got, want)
		}
	}
}

// TestBuildSchemaKeepsPublishedNestedFields: a nested field the table has
// keeps its published id and doc whatever table.json says of them (a doc
// added to table.json by hand does not make every publish fail on a
// changed struct), and the schema does not change.
func TestBuildSchemaKeepsPublishedNestedFields(t *testing.T) {
	key, err := partition.Parse("dt=2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	info := func(id int, doc string) *iceberg.StructType {
		return &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: id, Name: "x", Type: iceberg.PrimitiveTypes.Int64, Doc: doc}}}
	}
	prev := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "x", Type: info(2, ""), Required: true},
		iceberg.NestedField{ID: 3, Name: "dt", Type: iceberg.PrimitiveTypes.String})
	src := source{
		fields: []iceberg.NestedField{{ID: 1, Name: "x", Type: info(7, "a doc"), Required: true}},
		parts:  []iceberg.NestedField{{ID: 8, Name: "dt", Type: iceberg.PrimitiveTypes.Date}},
	}
	sc, changed, err := buildSchema(prev, 3, src, key)
	if err != nil || changed || sc != prev {
		t.Fatalf("changed %v, %v: %v", changed, err, sc)
	}
}
