package tablemeta

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the kind of a column type. The kinds are Iceberg's, so that a
// table schema maps one to one onto an Iceberg schema.
type Kind int

// The kinds. Primitive kinds first, then the nested ones.
const (
	Invalid Kind = iota
	Boolean
	Int         // 32-bit signed integer
	Long        // 64-bit signed integer
	Float       // 32-bit IEEE 754
	Double      // 64-bit IEEE 754
	Decimal     // fixed-point decimal(P,S), P 1..38
	Date        // days since 1970-01-01
	Time        // time of day, microseconds
	Timestamp   // timestamp without zone, microseconds
	TimestampTZ // timestamp with zone (UTC-adjusted), microseconds
	TimestampNs // timestamp without zone, nanoseconds (Iceberg v3 timestamp_ns)
	TimestampTZNs
	String // UTF-8 text
	Binary // arbitrary bytes
	Fixed  // fixed-length bytes, fixed[L]
	Struct
	List
	Map
)

// kindNames are the names of the primitive kinds in the document, Iceberg's
// spelling (decimal and fixed carry parameters: "decimal(9,2)", "fixed[16]").
var kindNames = map[Kind]string{
	Boolean: "boolean", Int: "int", Long: "long", Float: "float", Double: "double",
	Decimal: "decimal", Date: "date", Time: "time", Timestamp: "timestamp",
	TimestampTZ: "timestamptz", TimestampNs: "timestamp_ns", TimestampTZNs: "timestamptz_ns",
	String: "string", Binary: "binary", Fixed: "fixed",
	Struct: "struct", List: "list", Map: "map",
}

// String returns the kind's name as written in the document.
func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Nested reports whether k is struct, list or map.
func (k Kind) Nested() bool { return k == Struct || k == List || k == Map }

// MaxDecimalPrecision is the largest decimal precision (Iceberg's limit).
const MaxDecimalPrecision = 38

// Type is a column type. Primitive types use Kind (and Precision and Scale
// for Decimal, Length for Fixed); nested types use Fields (Struct),
// Element (List) or Key and Value (Map). Elements, keys and values are
// Fields so that they carry an id and nullability like columns do; their
// names are "element", "key" and "value". A map key is never nullable.
type Type struct {
	Kind      Kind
	Precision int // Decimal
	Scale     int // Decimal
	Length    int // Fixed
	Fields    []Field
	Element   *Field
	Key       *Field
	Value     *Field
}

// Field is a named column (or a struct's field, a list's element, a map's
// key or value) with a stable id.
//
// Ids are unique across the whole schema, nested fields included, and
// never reused: they are Iceberg's field ids, by which an engine tells a
// renamed column from a new one. Nullable is the inverse of Iceberg's
// "required".
type Field struct {
	ID       int
	Name     string
	Type     Type
	Nullable bool
	Doc      string // optional description
}

// Schema is the ordered list of a table's data columns (partition columns
// are not among them: see PartitionColumn).
type Schema struct {
	Fields []Field
}

// Primitive types, for convenience.
var (
	BooleanType       = Type{Kind: Boolean}
	IntType           = Type{Kind: Int}
	LongType          = Type{Kind: Long}
	FloatType         = Type{Kind: Float}
	DoubleType        = Type{Kind: Double}
	DateType          = Type{Kind: Date}
	TimeType          = Type{Kind: Time}
	TimestampType     = Type{Kind: Timestamp}
	TimestampTZType   = Type{Kind: TimestampTZ}
	TimestampNsType   = Type{Kind: TimestampNs}
	TimestampTZNsType = Type{Kind: TimestampTZNs}
	StringType        = Type{Kind: String}
	BinaryType        = Type{Kind: Binary}
)

// DecimalType returns decimal(p,s).
func DecimalType(p, s int) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }

// FixedType returns fixed[n].
func FixedType(n int) Type { return Type{Kind: Fixed, Length: n} }

// String returns the type in the document's spelling for primitives
// ("long", "decimal(9,2)", "fixed[16]") and a compact form for nested
// types: struct<a: int, b: string>, list<long>, map<string, double>.
// Nullability and ids are not shown.
func (t Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t Type) write(b *strings.Builder) {
	switch t.Kind {
	case Decimal:
		b.WriteString("decimal(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")")
	case Fixed:
		b.WriteString("fixed[" + strconv.Itoa(t.Length) + "]")
	case Struct:
		b.WriteString("struct<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name + ": ")
			f.Type.write(b)
			if !f.Nullable {
				b.WriteString(" not null")
			}
		}
		b.WriteString(">")
	case List:
		b.WriteString("list<")
		if t.Element != nil {
			t.Element.Type.write(b)
			if !t.Element.Nullable {
				b.WriteString(" not null")
			}
		}
		b.WriteString(">")
	case Map:
		b.WriteString("map<")
		if t.Key != nil {
			t.Key.Type.write(b)
		}
		b.WriteString(", ")
		if t.Value != nil {
			t.Value.Type.write(b)
			if !t.Value.Nullable {
				b.WriteString(" not null")
			}
		}
		b.WriteString(">")
	default:
		b.WriteString(t.Kind.String())
	}
}

// Equal reports whether two types are the same, nested names, nullability
// and ids included.
func (t Type) Equal(o Type) bool {
	if t.Kind != o.Kind || t.Precision != o.Precision || t.Scale != o.Scale || t.Length != o.Length {
		return false
	}
	if len(t.Fields) != len(o.Fields) {
		return false
	}
	for i := range t.Fields {
		if !t.Fields[i].Equal(o.Fields[i]) {
			return false
		}
	}
	return fieldPtrEqual(t.Element, o.Element) && fieldPtrEqual(t.Key, o.Key) && fieldPtrEqual(t.Value, o.Value)
}

func fieldPtrEqual(a, b *Field) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// Equal reports whether two fields are the same, id and doc included.
func (f Field) Equal(o Field) bool {
	return f.ID == o.ID && f.Name == o.Name && f.Nullable == o.Nullable && f.Doc == o.Doc && f.Type.Equal(o.Type)
}

// Field returns the top-level column named name.
func (s Schema) Field(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Equal reports whether two schemas are the same, ids included.
func (s Schema) Equal(o Schema) bool {
	if len(s.Fields) != len(o.Fields) {
		return false
	}
	for i := range s.Fields {
		if !s.Fields[i].Equal(o.Fields[i]) {
			return false
		}
	}
	return true
}

// String shows the schema one column per line: "id name type [not null]".
func (s Schema) String() string {
	var b strings.Builder
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d %s %s", f.ID, f.Name, f.Type)
		if !f.Nullable {
			b.WriteString(" not null")
		}
	}
	return b.String()
}

// MaxID returns the largest field id in the schema, nested ones included
// (0 for an empty schema).
func (s Schema) MaxID() int {
	m := 0
	walkFields(s.Fields, func(_ string, f *Field) {
		m = max(m, f.ID)
	})
	return m
}

// walkFields calls fn for every field, nested ones included, in pre-order,
// with the field's path ("a", "a.b", "tags.element", "attrs.value").
func walkFields(fields []Field, fn func(path string, f *Field)) {
	for i := range fields {
		walkField(fields[i].Name, &fields[i], fn)
	}
}

func walkField(path string, f *Field, fn func(string, *Field)) {
	fn(path, f)
	t := &f.Type
	for i := range t.Fields {
		walkField(path+"."+t.Fields[i].Name, &t.Fields[i], fn)
	}
	for _, sub := range []*Field{t.Element, t.Key, t.Value} {
		if sub != nil {
			walkField(path+"."+sub.Name, sub, fn)
		}
	}
}

// clone returns a deep copy of fields.
func cloneFields(fields []Field) []Field {
	if fields == nil {
		return nil
	}
	out := make([]Field, len(fields))
	for i, f := range fields {
		out[i] = f.clone()
	}
	return out
}

func (f Field) clone() Field {
	f.Type = f.Type.clone()
	return f
}

func (t Type) clone() Type {
	t.Fields = cloneFields(t.Fields)
	for _, p := range []**Field{&t.Element, &t.Key, &t.Value} {
		if *p != nil {
			c := (*p).clone()
			*p = &c
		}
	}
	return t
}

// Clone returns a deep copy of the schema.
func (s Schema) Clone() Schema { return Schema{Fields: cloneFields(s.Fields)} }
