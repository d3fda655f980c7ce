package staging

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	pq "github.com/parquet-go/parquet-go"
)

// canonSchema is the schema of a generation: the Arrow schema that Arrow's
// Parquet reader derives from a file's Parquet schema, without metadata.
// Equivalent inputs (a Go struct, an Arrow schema, an existing file) that
// produce the same Parquet logical schema have equal canonical schemas.
type canonSchema struct {
	arrow *arrow.Schema
	text  string
	ids   fieldIDs // the Parquet field ids the input carries (not part of text)
}

// fieldIDs are the Parquet field ids of an input's columns: Iceberg
// engines read a file that has them by them, not by name.
type fieldIDs struct {
	top    map[string]int // top-level columns with an id
	nested bool           // a nested field carries an id
	any    bool
}

// key is the ids' part of a conform cache key.
func (f fieldIDs) key() string {
	if !f.any {
		return ""
	}
	return fmt.Sprintf("\x00ids %v %v", f.top, f.nested)
}

// parquetFieldIDs reads the field ids Arrow's Parquet reader attached.
func parquetFieldIDs(as *arrow.Schema) fieldIDs {
	var out fieldIDs
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
				out.nested, out.any = true, true
			}
			nested(c.Type)
		}
	}
	for _, f := range as.Fields() {
		if n, ok := id(f); ok {
			if out.top == nil {
				out.top = map[string]int{}
			}
			out.top[f.Name], out.any = n, true
		}
		nested(f.Type)
	}
	return out
}

func (c *canonSchema) equal(o *canonSchema) bool { return c.text == o.text }

// mismatch builds the error for an input whose schema differs.
func mismatch(input string, got, want *canonSchema) error {
	return fmt.Errorf("%w: %s has\n%s\nbut the generation has\n%s", ErrSchemaMismatch, input, got.text, want.text)
}

// fromParquetSchema derives the canonical schema of a Parquet schema and
// checks that staging can hash every column.
func fromParquetSchema(ps *pqschema.Schema) (*canonSchema, error) {
	return canonOf(ps, false)
}

// canonOf is fromParquetSchema; with int96Nanos, flat INT96 columns are
// Arrow's timestamp[ns, tz=UTC], as staging read them before it read them
// in microseconds (for the content checksums of generations staged then).
func canonOf(ps *pqschema.Schema, int96Nanos bool) (*canonSchema, error) {
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
	return &canonSchema{arrow: s, text: s.String(), ids: parquetFieldIDs(as)}, nil
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

// canonOfArrow derives the canonical schema of an Arrow schema as written
// by pqarrow with props.
func canonOfArrow(s *arrow.Schema, props *parquet.WriterProperties) (*canonSchema, error) {
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
	return fromParquetSchema(ps)
}

// canonOfParquetGo derives the canonical schema of a parquet-go schema by
// writing an empty file with it and reading that file's footer with
// Arrow's reader: the same path a file that parquet-go writes takes when
// it is read back.
func canonOfParquetGo(t reflect.Type, ps *pq.Schema, opts []pq.WriterOption) (*canonSchema, error) {
	var buf bytes.Buffer
	w := pq.NewWriter(&buf, append([]pq.WriterOption{ps}, opts...)...)
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("staging: schema of %s: %w", t, err)
	}
	r, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("staging: schema of %s: %w", t, err)
	}
	defer r.Close()
	return fromParquetSchema(r.MetaData().Schema)
}

// readerAtSize is what the Arrow Parquet reader needs.
type readerAtSize interface {
	io.ReaderAt
	io.Seeker
}

// int96Type is the canonical type of a flat INT96 timestamp column: Spark
// writes instants (UTC), and reads them in microseconds.
var int96Type = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// julianUnixEpoch is the Julian day of 1970-01-01.
const julianUnixEpoch = 2440588

// int96Micros converts an INT96 timestamp (nanoseconds of the day, then
// the Julian day, little-endian) to microseconds since the epoch exactly
// as Spark reads it (ParquetRowConverter, DateTimeUtils.fromJulianDay):
// both fields signed, (day - 2440588) * 86400000000 + nanos / 1000, in
// wrapping 64-bit arithmetic, the nanoseconds below the microsecond
// dropped. Spark's writer computes the fields in the same arithmetic, so
// every timestamp Spark writes (about 290,000 years either way, where
// Arrow's nanoseconds stop at 1677 and 2262) reads back as it wrote it.
func int96Micros(b []byte) int64 {
	nanos := int64(binary.LittleEndian.Uint64(b[:8]))
	days := int64(int32(binary.LittleEndian.Uint32(b[8:12])))
	const microsPerDay = 86_400_000_000
	return (days-julianUnixEpoch)*microsPerDay + nanos/1000
}
