package tablemeta

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// New builds the document of a new table: its partition columns (as
// InferPartitionColumns returns them) and the schema of its first data.
// Ids are assigned fresh, Iceberg's way: the fields of a struct (the
// top-level columns first) get consecutive ids, then each field's nested
// fields, then the partition columns. A column of nanosecond timestamps
// becomes a timestamp (timestamptz) column, in microseconds as Iceberg v2
// holds them (see microTimestamps). Errors match ErrUnsupportedType for a
// column type a table cannot hold, ErrInvalid otherwise.
func New(partitionColumns []PartitionColumn, data *arrow.Schema) (*Table, error) {
	s, err := SchemaFromArrow(data)
	if err != nil {
		return nil, err
	}
	microTimestamps(s.Fields)
	t := &Table{Format: Format, Version: Version, Schema: s, LastColumnID: s.MaxID()}
	for _, c := range partitionColumns {
		t.LastColumnID++
		c.ID = t.LastColumnID
		t.PartitionColumns = append(t.PartitionColumns, c)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// SchemaFromArrow converts an Arrow schema (as staging derives it from the
// Parquet a generation holds) to a table schema with fresh ids starting at
// 1. Arrow types map to the table types that hold them without loss: int8,
// int16, int32, uint8 and uint16 are int; int64 and uint32 long, and
// uint64 long too (Iceberg has no unsigned types: its values are checked
// when stored, and one above 2^63-1 is refused); float16
// and float32 float (a float16 column is stored as float32, which holds
// its values exactly), float64 double; date32 and date64 date; time32 and time64 time;
// timestamps of seconds, milliseconds and microseconds timestamp (with a
// zone: timestamptz), of nanoseconds timestamp_ns (timestamptz_ns);
// string, large_string and string_view string; the binaries binary;
// fixed_size_binary(n) fixed[n]; decimal(p,s) up to precision 38 decimal;
// dictionaries their value type; struct, list, large_list and map nest.
// Anything else (null, unions, intervals, durations) is
// ErrUnsupportedType naming the column.
func SchemaFromArrow(s *arrow.Schema) (Schema, error) {
	if s == nil || s.NumFields() == 0 {
		return Schema{}, fmt.Errorf("%w: no columns", ErrInvalid)
	}
	var out Schema
	for _, f := range s.Fields() {
		tf, err := fieldFromArrow(f.Name, f)
		if err != nil {
			return Schema{}, err
		}
		out.Fields = append(out.Fields, tf)
	}
	next := 1
	assignIDs(out.Fields, &next)
	return out, nil
}

// microTimestamps makes the nanosecond timestamp types of fields (nested
// ones included) their microsecond counterparts: the types of new
// columns. Iceberg v2, which engines read a pswap table as, has only
// microsecond timestamps (timestamp_ns is v3): a column recorded in
// nanoseconds would be published as microseconds and read 1000x too large.
// Data in nanoseconds is converted when it is stored (Plan), values that
// are not whole microseconds refused. Tables that recorded timestamp_ns
// before keep it.
func microTimestamps(fields []Field) {
	walkFields(fields, func(_ string, f *Field) {
		switch f.Type.Kind {
		case TimestampNs:
			f.Type.Kind = Timestamp
		case TimestampTZNs:
			f.Type.Kind = TimestampTZ
		}
	})
}

// assignIDs gives every field a fresh id: siblings first, then nested.
func assignIDs(fields []Field, next *int) {
	for i := range fields {
		fields[i].ID = *next
		*next++
	}
	for i := range fields {
		assignTypeIDs(&fields[i].Type, next)
	}
}

func assignTypeIDs(t *Type, next *int) {
	switch t.Kind {
	case Struct:
		assignIDs(t.Fields, next)
	case List:
		t.Element.ID = *next
		*next++
		assignTypeIDs(&t.Element.Type, next)
	case Map:
		t.Key.ID = *next
		t.Value.ID = *next + 1
		*next += 2
		assignTypeIDs(&t.Key.Type, next)
		assignTypeIDs(&t.Value.Type, next)
	}
}

func fieldFromArrow(path string, f arrow.Field) (Field, error) {
	t, err := TypeFromArrow(path, f.Type)
	if err != nil {
		return Field{}, err
	}
	return Field{Name: f.Name, Type: t, Nullable: f.Nullable}, nil
}

// TypeFromArrow maps one Arrow type to the table type that holds it (see
// SchemaFromArrow); path names the column in errors. Nested fields get id 0.
func TypeFromArrow(path string, dt arrow.DataType) (Type, error) {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return TypeFromArrow(path, t.ValueType)
	case *arrow.TimestampType:
		k := Timestamp
		if t.Unit == arrow.Nanosecond {
			k = TimestampNs
		}
		if t.TimeZone != "" {
			k++ // TimestampTZ, TimestampTZNs
		}
		return Type{Kind: k}, nil
	case arrow.DecimalType:
		p, s := int(t.GetPrecision()), int(t.GetScale())
		if p < 1 || p > MaxDecimalPrecision || s < 0 || s > p {
			return Type{}, fmt.Errorf("%w: column %s has type %s (decimals hold precision 1..%d, scale 0..precision)", ErrUnsupportedType, path, dt, MaxDecimalPrecision)
		}
		return DecimalType(p, s), nil
	case *arrow.FixedSizeBinaryType:
		return FixedType(t.ByteWidth), nil
	case *arrow.StructType:
		if t.NumFields() == 0 {
			return Type{}, fmt.Errorf("%w: column %s is a struct without fields", ErrUnsupportedType, path)
		}
		out := Type{Kind: Struct}
		for _, f := range t.Fields() {
			tf, err := fieldFromArrow(path+"."+f.Name, f)
			if err != nil {
				return Type{}, err
			}
			out.Fields = append(out.Fields, tf)
		}
		return out, nil
	case *arrow.MapType:
		k, err := TypeFromArrow(path+".key", t.KeyType())
		if err != nil {
			return Type{}, err
		}
		v, err := TypeFromArrow(path+".value", t.ItemType())
		if err != nil {
			return Type{}, err
		}
		return Type{Kind: Map, Key: &Field{Name: "key", Type: k},
			Value: &Field{Name: "value", Type: v, Nullable: t.ItemField().Nullable}}, nil
	case arrow.ListLikeType:
		switch dt.ID() {
		case arrow.LIST, arrow.LARGE_LIST:
		default:
			return Type{}, fmt.Errorf("%w: column %s has type %s", ErrUnsupportedType, path, dt)
		}
		ef := t.ElemField()
		e, err := TypeFromArrow(path+".element", ef.Type)
		if err != nil {
			return Type{}, err
		}
		return Type{Kind: List, Element: &Field{Name: "element", Type: e, Nullable: ef.Nullable}}, nil
	}
	switch dt.ID() {
	case arrow.BOOL:
		return BooleanType, nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16:
		return IntType, nil
	case arrow.INT64, arrow.UINT32, arrow.UINT64:
		// uint64 (Polars', arrow-rs') as long: the values are checked
		// when they are stored, and one above 2^63-1 is refused.
		return LongType, nil
	case arrow.FLOAT16, arrow.FLOAT32: // float holds every float16 exactly
		return FloatType, nil
	case arrow.FLOAT64:
		return DoubleType, nil
	case arrow.DATE32, arrow.DATE64:
		return DateType, nil
	case arrow.TIME32, arrow.TIME64:
		return TimeType, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return StringType, nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return BinaryType, nil
	}
	hint := ""
	switch dt.ID() {
	case arrow.NULL:
		hint = " (every value is null, so its type is unknown: give the column a type)"
	}
	return Type{}, fmt.Errorf("%w: column %s has type %s%s", ErrUnsupportedType, path, dt, hint)
}

// Arrow returns the Arrow type that holds t canonically, the type a
// generation's files store a column of type t in: int int32, long int64,
// float float32, double float64, decimal(p,s) decimal128(p,s), date
// date32, time time64[us], timestamp timestamp[us], timestamptz
// timestamp[us, tz=UTC], timestamp_ns and timestamptz_ns the same in
// nanoseconds, string utf8, binary binary, fixed[n] fixed_size_binary(n),
// and nested types their Arrow counterparts (list elements named
// "element", map entries "key" and "value").
func (t Type) Arrow() arrow.DataType {
	switch t.Kind {
	case Boolean:
		return arrow.FixedWidthTypes.Boolean
	case Int:
		return arrow.PrimitiveTypes.Int32
	case Long:
		return arrow.PrimitiveTypes.Int64
	case Float:
		return arrow.PrimitiveTypes.Float32
	case Double:
		return arrow.PrimitiveTypes.Float64
	case Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Time:
		return arrow.FixedWidthTypes.Time64us
	case Timestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case TimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case TimestampNs:
		return &arrow.TimestampType{Unit: arrow.Nanosecond}
	case TimestampTZNs:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	case String:
		return arrow.BinaryTypes.String
	case Binary:
		return arrow.BinaryTypes.Binary
	case Fixed:
		return &arrow.FixedSizeBinaryType{ByteWidth: t.Length}
	case Struct:
		fs := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			fs[i] = f.Arrow()
		}
		return arrow.StructOf(fs...)
	case List:
		return arrow.ListOfField(t.Element.Arrow())
	case Map:
		m := arrow.MapOf(t.Key.Type.Arrow(), t.Value.Type.Arrow())
		if !t.Value.Nullable {
			m = arrow.MapOfWithMetadata(t.Key.Type.Arrow(), arrow.Metadata{}, t.Value.Type.Arrow(), arrow.Metadata{})
			m.SetItemNullable(false)
		}
		return m
	}
	return arrow.Null
}

// Arrow returns the field as an Arrow field of its canonical type.
func (f Field) Arrow() arrow.Field {
	return arrow.Field{Name: f.Name, Type: f.Type.Arrow(), Nullable: f.Nullable}
}

// Arrow returns the schema as an Arrow schema of canonical types, without
// metadata: the schema of every generation's files.
func (s Schema) Arrow() *arrow.Schema {
	fs := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		fs[i] = f.Arrow()
	}
	return arrow.NewSchema(fs, nil)
}
