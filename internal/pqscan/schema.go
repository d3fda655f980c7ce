package pqscan

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
)

// Schema is a canonical schema, the schema of a generation: the Arrow
// schema that Arrow's Parquet reader derives from a file's Parquet schema,
// without metadata. Equivalent inputs (a Go struct, an Arrow schema, an
// existing file) that produce the same Parquet logical schema have equal
// canonical schemas.
type Schema struct {
	Arrow *arrow.Schema
	Text  string   // Arrow's text: what Content.Schema records
	IDs   FieldIDs // the Parquet field ids the input carries (not part of Text)
}

// FieldIDs are the Parquet field ids of an input's columns: Iceberg
// engines read a file that has them by them, not by name.
type FieldIDs struct {
	Top    map[string]int // top-level columns with an id
	Nested bool           // a nested field carries an id
	Any    bool
}

// Key is the ids' part of a cache key of schemas.
func (f FieldIDs) Key() string {
	if !f.Any {
		return ""
	}
	return fmt.Sprintf("\x00ids %v %v", f.Top, f.Nested)
}

// parquetFieldIDs reads the field ids Arrow's Parquet reader attached.
func parquetFieldIDs(as *arrow.Schema) FieldIDs {
	var out FieldIDs
	id := func(f arrow.Field) (int, bool) {
		v, ok := f.Metadata.GetValue("PARQUET:field_id")
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= 0
	}
	var nested func(t arrow.DataType)
	nested = func(t arrow.DataType) {
		n, ok := t.(arrow.NestedType)
		if !ok {
			return
		}
		for _, c := range n.Fields() {
			if _, ok := id(c); ok {
				out.Nested, out.Any = true, true
			}
			nested(c.Type)
		}
	}
	for _, f := range as.Fields() {
		if n, ok := id(f); ok {
			if out.Top == nil {
				out.Top = map[string]int{}
			}
			out.Top[f.Name], out.Any = n, true
		}
		nested(f.Type)
	}
	return out
}

// Equal reports whether c and o are the same canonical schema.
func (c *Schema) Equal(o *Schema) bool { return c.Text == o.Text }

// Mismatch is the error for an input whose schema got differs from the
// generation's, want.
func Mismatch(input string, got, want *Schema) error {
	return fmt.Errorf("%w: %s has\n%s\nbut the generation has\n%s", ErrSchemaMismatch, input, got.Text, want.Text)
}

// SchemaOf derives the canonical schema of a Parquet schema and checks
// that the content checksum can hash every column.
func SchemaOf(ps *pqschema.Schema) (*Schema, error) {
	return schemaOf(ps, false)
}

// schemaOf is SchemaOf; with int96Nanos, flat INT96 columns are Arrow's
// timestamp[ns, tz=UTC], as staging read them before it read them in
// microseconds (for the content checksums of generations staged then).
func schemaOf(ps *pqschema.Schema, int96Nanos bool) (*Schema, error) {
	as, err := pqarrow.FromParquet(ps, &pqarrow.ArrowReadProperties{}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	fields := make([]arrow.Field, as.NumFields())
	for i, f := range as.Fields() {
		t, err := canonType(f.Name, f.Type)
		if err != nil {
			return nil, err
		}
		fields[i] = arrow.Field{Name: f.Name, Type: t, Nullable: f.Nullable}
	}
	// A flat INT96 column (Spark's default timestamp, and Hive's and
	// Impala's) is a timestamp in microseconds, as Spark reads it: Arrow
	// reads nanoseconds, which cannot hold the dates Spark writes beyond
	// 1677..2262, and Iceberg v2 holds microseconds.
	for c := 0; c < ps.NumColumns() && !int96Nanos; c++ {
		col := ps.Column(c)
		if col.PhysicalType() != parquet.Types.Int96 || len(col.ColumnPath()) != 1 {
			continue
		}
		for i := range fields {
			if fields[i].Name == col.Name() && fields[i].Type.ID() == arrow.TIMESTAMP {
				fields[i].Type = int96Type
			}
		}
	}
	s := arrow.NewSchema(fields, nil)
	return &Schema{Arrow: s, Text: s.String(), IDs: parquetFieldIDs(as)}, nil
}

// canonType checks that the canonical row encoding covers dt and returns
// it in canonical form: nested types without field metadata, list
// elements named "element" and map entries "key" and "value" (the names
// differ between writers: "item", "array", "element", ...; they are not
// part of the content).
func canonType(name string, dt arrow.DataType) (arrow.DataType, error) {
	switch dt.ID() {
	case arrow.NULL, arrow.BOOL,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY,
		arrow.DATE32, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP,
		arrow.DECIMAL128, arrow.DECIMAL256:
		return dt, nil
	case arrow.MAP:
		t := dt.(*arrow.MapType)
		k, err := canonType(name, t.KeyType())
		if err != nil {
			return nil, err
		}
		v, err := canonType(name, t.ItemType())
		if err != nil {
			return nil, err
		}
		m := arrow.MapOfWithMetadata(k, arrow.Metadata{}, v, arrow.Metadata{})
		m.SetItemNullable(t.ItemField().Nullable)
		return m, nil
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		elem := dt.(arrow.ListLikeType).ElemField()
		t, err := canonType(name, elem.Type)
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: t, Nullable: elem.Nullable}), nil
	case arrow.STRUCT:
		st := dt.(*arrow.StructType)
		fields := make([]arrow.Field, st.NumFields())
		for i, f := range st.Fields() {
			t, err := canonType(name+"."+f.Name, f.Type)
			if err != nil {
				return nil, err
			}
			fields[i] = arrow.Field{Name: f.Name, Type: t, Nullable: f.Nullable}
		}
		return arrow.StructOf(fields...), nil
	}
	return nil, fmt.Errorf("%w: column %q has type %s", ErrUnsupported, name, dt)
}

// SchemaOfArrow derives the canonical schema of an Arrow schema as written
// by pqarrow with props.
func SchemaOfArrow(s *arrow.Schema, props *parquet.WriterProperties) (*Schema, error) {
	for _, f := range s.Fields() {
		t := f.Type
		if d, ok := t.(*arrow.DictionaryType); ok {
			t = d.ValueType
		}
		if _, err := canonType(f.Name, t); err != nil {
			return nil, err
		}
	}
	ps, err := pqarrow.ToParquet(s, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return SchemaOf(ps)
}
