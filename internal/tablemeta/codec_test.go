package tablemeta

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func golden(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/valid_table.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeGoldenRoundTrip(t *testing.T) {
	g := golden(t)
	tb, err := Decode(g)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tb.Schema.Fields); got != 6 {
		t.Fatalf("fields: %d", got)
	}
	tags, _ := tb.Schema.Field("tags")
	if tags.Type.Kind != List || tags.Type.Element.ID != 7 || !tags.Type.Element.Nullable || tags.Type.Element.Type.Kind != String {
		t.Fatalf("tags: %+v", tags.Type)
	}
	price, _ := tb.Schema.Field("price")
	if !price.Type.Equal(DecimalType(9, 2)) || price.Doc != "unit price in EUR" {
		t.Fatalf("price: %+v", price)
	}
	if tb.PartitionColumns[0].Type.Kind != Date || tb.PartitionColumns[0].Layout != "2006-01-02" {
		t.Fatalf("partition: %+v", tb.PartitionColumns)
	}
	enc, err := Encode(tb)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, g) {
		t.Fatalf("re-encoding differs:\n%s\nwant\n%s", enc, g)
	}
	if !tb.Clone().Schema.Equal(tb.Schema) {
		t.Fatal("clone differs")
	}
}

func TestDecodeNewerMinorIgnoresAdditions(t *testing.T) {
	g := strings.Replace(string(golden(t)), `"version": "1.2",`, `"version": "1.4", "retention": {"days": 3},`, 1)
	g = strings.Replace(g, `"nullable": false`, `"nullable": false, "initial_default": 0`, 1)
	tb, err := Decode([]byte(g))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := Encode(tb)
	if !bytes.Equal(enc, golden(t)) {
		t.Fatalf("re-encoding a 1.4 document should write ours:\n%s", enc)
	}
}

func TestDecodeRejects(t *testing.T) {
	g := string(golden(t))
	rep := func(old, new string) string {
		if !strings.Contains(g, old) {
			t.Fatalf("golden lacks %q", old)
		}
		return strings.Replace(g, old, new, 1)
	}
	cases := []struct {
		name, doc, want string
	}{
		{"truncated", g[:len(g)/2], "truncated JSON"},
		{"empty", "", "truncated JSON"},
		{"array", "[]", "not a JSON object"},
		{"trailing", g + "{}", "trailing data"},
		{"not utf8", "{\"format\": \"\xff\"}", "not valid UTF-8"},
		{"duplicate key", rep(`"schema_id": 0,`, `"schema_id": 0, "schema_id": 1,`), "schema_id: duplicate key"},
		{"unknown field", rep(`"schema_id": 0,`, `"schema_idd": 0, "schema_id": 0,`), "schema_idd: unknown field"},
		{"unknown nested field", rep(`"element_nullable": true`, `"element_nullable": true, "x": 1`), "schema[3].type.x: unknown field"},
		{"null", rep(`"schema_id": 0`, `"schema_id": null`), "schema_id: null is not allowed"},
		{"wrong format", rep(`"pswap-table"`, `"pswap-manifest"`), `format: "pswap-manifest", want "pswap-table"`},
		{"major", rep(`"1.2"`, `"3.0"`), "this pswap reads versions 1.x and 2.x"},
		{"bad version", rep(`"1.2"`, `"1.a"`), "not major.minor"},
		{"missing schema", g[:strings.Index(g, `,
  "schema": [`)] + "\n}\n", "schema: missing"},
		{"unknown type", rep(`"type": "long"`, `"type": "int64"`), `schema[0].type: "int64": unknown type`},
		{"decimal precision", rep(`decimal(9,2)`, `decimal(40,2)`), "want precision 1..38"},
		{"decimal spaces", rep(`decimal(9,2)`, `decimal(9, 2)`), "unknown type"},
		{"fixed zero", rep(`"decimal(9,2)"`, `"fixed[0]"`), "fixed[0]"},
		{"duplicate id", rep(`"id": 2,`, `"id": 1,`), "schema[1].id: 1 is also the id of schema[0]"},
		{"nested duplicate id", rep(`"element_id": 7`, `"element_id": 3`), "is also the id of"},
		{"partition id clash", rep(`"id": 10,`, `"id": 1,`), "is also the id of"},
		{"id above last", rep(`"last_column_id": 10`, `"last_column_id": 9`), "greater than last_column_id"},
		{"zero id", rep(`"id": 2,`, `"id": 0,`), "ids are positive"},
		{"duplicate name", rep(`"name": "amount"`, `"name": "ID"`), "duplicate of column"},
		{"empty name", rep(`"name": "amount"`, `"name": ""`), "empty"},
		{"control name", rep(`"name": "amount"`, `"name": "a\u0001"`), "control character"},
		{"nullable not bool", rep(`"nullable": true`, `"nullable": "yes"`), "must be true or false"},
		{"id not int", rep(`"id": 2,`, `"id": 2.5,`), "must be an integer"},
		{"id huge", rep(`"id": 2,`, `"id": 99999999999,`), "32-bit range"},
		{"map key nullable via type", rep(`"type": "map"`, `"type": "mop"`), `"mop": want struct, list or map`},
		{"no partition columns", rep(`"partition_columns": [`, `"partition_columns": [], "x": [`), "unknown field"},
		{"partition type", rep(`"type": "date"`, `"type": "long"`), "string, date or int"},
		{"partition layout", rep(`"layout": "2006-01-02"`, `"layout": "15:04"`), "minutes or seconds"},
		{"date layout not day", rep(`"layout": "2006-01-02"`, `"layout": "2006-01"`), "date needs a layout of a whole day"},
		{"partition name", rep(`"name": "dt"`, `"name": "Dt"`), "not a partition column name"},
		{"schema not array", rep(`"schema": [`, `"schema": {"a": [`) + "}", "schema: must be an array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.doc))
			if err == nil {
				t.Fatalf("accepted:\n%s", c.doc)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%v does not match ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "table.json: ") {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
	if _, err := Decode([]byte(rep(`"1.2"`, `"3.0"`))); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("major: %v", err)
	}
}

func TestNewFromArrow(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "n8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{Name: "ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "pt", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32}, arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float32, Nullable: true}), Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	}, nil)
	cols, err := InferPartitionColumns("dt=2026-11-29/hr=13", nil)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := New(cols, s)
	if err != nil {
		t.Fatal(err)
	}
	want := `1 id long not null
2 n8 int
3 u32 long
4 amount double
5 at timestamptz not null
6 ns timestamp
7 d date
8 price decimal(9,2)
9 tags list<string>
10 attrs map<string, long>
11 pt struct<x: float not null, y: float>
12 name string`
	if got := tb.Schema.String(); got != want {
		t.Fatalf("schema:\n%s\nwant\n%s", got, want)
	}
	// Nested ids follow the top-level ones: tags.element 13, attrs key 14
	// value 15, pt.x 16, pt.y 17; then the partition columns 18, 19.
	tags, _ := tb.Schema.Field("tags")
	attrs, _ := tb.Schema.Field("attrs")
	pt, _ := tb.Schema.Field("pt")
	if tags.Type.Element.ID != 13 || attrs.Type.Key.ID != 14 || attrs.Type.Value.ID != 15 || pt.Type.Fields[0].ID != 16 || pt.Type.Fields[1].ID != 17 {
		t.Fatalf("nested ids: %d %d %d %d %d", tags.Type.Element.ID, attrs.Type.Key.ID, attrs.Type.Value.ID, pt.Type.Fields[0].ID, pt.Type.Fields[1].ID)
	}
	if tb.PartitionColumns[0].ID != 18 || tb.PartitionColumns[1].ID != 19 || tb.LastColumnID != 19 {
		t.Fatalf("partition ids: %+v last %d", tb.PartitionColumns, tb.LastColumnID)
	}
	enc, err := Encode(tb)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(enc)
	if err != nil {
		t.Fatalf("%v\n%s", err, enc)
	}
	if !back.Schema.Equal(tb.Schema) {
		t.Fatalf("round trip differs:\n%s", enc)
	}
	// The canonical Arrow schema: int for n8 is int32, timestamptz us UTC.
	as := tb.Schema.Arrow()
	for name, want := range map[string]arrow.DataType{
		"n8":    arrow.PrimitiveTypes.Int32,
		"u32":   arrow.PrimitiveTypes.Int64,
		"at":    &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		"ns":    &arrow.TimestampType{Unit: arrow.Microsecond}, // Iceberg v2's unit
		"name":  arrow.BinaryTypes.String,
		"price": &arrow.Decimal128Type{Precision: 9, Scale: 2},
	} {
		f, _ := as.FieldsByName(name)
		if len(f) != 1 || !arrow.TypeEqual(f[0].Type, want) {
			t.Errorf("%s: arrow %v, want %v", name, f, want)
		}
	}
	// Mapping the canonical Arrow schema back gives the same table types.
	again, err := SchemaFromArrow(as)
	if err != nil || !again.Equal(tb.Schema) {
		t.Fatalf("canonical arrow does not map back: %v\n%s", err, again)
	}
}

// Nanosecond timestamps (pandas', pyarrow's and Go's default) make
// microsecond columns, nested ones too: Iceberg v2, as engines read the
// table, has no other unit. Nanosecond data is planned into them
// (converted by staging), and a table that recorded timestamp_ns before
// keeps storing nanoseconds.
func TestNewNanosecondTimestampsAreMicroseconds(t *testing.T) {
	cols, _ := InferPartitionColumns("dt=2026-11-29", nil)
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
	nsz := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	data := arrow.NewSchema([]arrow.Field{
		{Name: "t", Type: ns, Nullable: true},
		{Name: "tz", Type: nsz},
		{Name: "ts", Type: arrow.ListOf(nsz), Nullable: true},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "at", Type: ns, Nullable: true}), Nullable: true},
	}, nil)
	tb, err := New(cols, data)
	if err != nil {
		t.Fatal(err)
	}
	want := "1 t timestamp\n2 tz timestamptz not null\n3 ts list<timestamptz>\n4 s struct<at: timestamp>"
	if got := tb.Schema.String(); got != want {
		t.Fatalf("schema:\n%s\nwant\n%s", got, want)
	}
	plan, err := tb.Plan(data, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Equal(tb.Schema.Arrow()) {
		t.Fatalf("plan %v, want the table's microsecond types %v", plan, tb.Schema.Arrow())
	}
	// Evolving adds a nanosecond column as microseconds too.
	more := arrow.NewSchema(append(data.Fields(), arrow.Field{Name: "late", Type: ns, Nullable: true}), nil)
	ev, added, err := tb.Evolve(more, PlanOptions{})
	if err != nil || len(added) != 1 {
		t.Fatalf("evolve: %v %v", added, err)
	}
	if f, _ := ev.Schema.Field("late"); f.Type.Kind != Timestamp {
		t.Fatalf("evolved column late is %s", f.Type)
	}
	// A table that recorded timestamp_ns keeps it: nanoseconds fit as they are.
	old := tb.Clone()
	old.Schema.Fields[0].Type = TimestampNsType
	plan, err = old.Plan(data, PlanOptions{})
	if err != nil || !arrow.TypeEqual(plan.Field(0).Type, ns) {
		t.Fatalf("plan onto a timestamp_ns column: %v %v", plan, err)
	}
}

func TestNewFloat16IsFloat(t *testing.T) {
	cols, _ := InferPartitionColumns("dt=2026-11-29", nil)
	tb, err := New(cols, arrow.NewSchema([]arrow.Field{{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true}}, nil))
	if err != nil || tb.Schema.Fields[0].Type.Kind != Float {
		t.Fatalf("float16 column: %v %+v", err, tb)
	}
	// Its data is stored as float32 (converted: the plan differs from the data).
	plan, err := tb.Plan(arrow.NewSchema([]arrow.Field{{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true}}, nil), PlanOptions{})
	if err != nil || !arrow.TypeEqual(plan.Field(0).Type, arrow.PrimitiveTypes.Float32) {
		t.Fatalf("plan: %v %v", plan, err)
	}
	// A float16 column also goes into a double column (float into double).
	dbl, err := New(cols, arrow.NewSchema([]arrow.Field{{Name: "h", Type: arrow.PrimitiveTypes.Float64}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dbl.Plan(arrow.NewSchema([]arrow.Field{{Name: "h", Type: arrow.FixedWidthTypes.Float16}}, nil), PlanOptions{}); err != nil {
		t.Fatalf("float16 into double: %v", err)
	}
}

func TestNewRejectsUnsupported(t *testing.T) {
	cols, _ := InferPartitionColumns("dt=2026-11-29", nil)
	for _, f := range []arrow.Field{
		{Name: "n", Type: arrow.Null, Nullable: true},
		{Name: "dur", Type: arrow.FixedWidthTypes.Duration_s},
		{Name: "deep", Type: arrow.ListOf(arrow.Null)},
	} {
		_, err := New(cols, arrow.NewSchema([]arrow.Field{f}, nil))
		if !errors.Is(err, ErrUnsupportedType) || !strings.Contains(err.Error(), "column "+f.Name) {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

// uint64 (Polars', arrow-rs') makes a long column (staging checks each
// value: one above 2^63-1 is refused), and goes into one.
func TestUint64IsLong(t *testing.T) {
	cols, _ := InferPartitionColumns("dt=2026-11-29", nil)
	data := arrow.NewSchema([]arrow.Field{
		{Name: "u", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "us", Type: arrow.ListOf(arrow.PrimitiveTypes.Uint64), Nullable: true},
	}, nil)
	tb, err := New(cols, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.Schema.String(); got != "1 u long not null\n2 us list<long>" {
		t.Fatalf("schema:\n%s", got)
	}
	plan, err := tb.Plan(data, PlanOptions{})
	if err != nil || !plan.Equal(tb.Schema.Arrow()) {
		t.Fatalf("plan %v %v", plan, err)
	}
}

// An all-null list column, whose element type is unknown (null: pyarrow's
// list<null>, parquet-testing's null_list.parquet), goes into a table's
// list column of any element type; it cannot make a new column.
func TestAllNullListFitsKnownList(t *testing.T) {
	cols, _ := InferPartitionColumns("dt=2026-11-29", nil)
	tb, err := New(cols, arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	nulls := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.Null), Nullable: true}}, nil)
	plan, err := tb.Plan(nulls, PlanOptions{})
	if err != nil || !plan.Equal(tb.Schema.Arrow()) {
		t.Fatalf("plan %v %v", plan, err)
	}
	if _, err := New(cols, nulls); !errors.Is(err, ErrUnsupportedType) || !strings.Contains(err.Error(), "every value is null") {
		t.Fatalf("a new list<null> column: %v", err)
	}
	// Not a list at all is still another type.
	if _, err := tb.Plan(arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil), PlanOptions{}); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("long into list<long>: %v", err)
	}
	if _, err := tb.Plan(arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}}, nil), PlanOptions{}); !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "l.element") {
		t.Fatalf("list<string> into list<long>: %v", err)
	}
}
