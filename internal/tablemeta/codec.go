package tablemeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/pswap/pswap/internal/strictjson"
)

// Encode validates t and returns its canonical encoding: indented JSON
// with a fixed field order and a trailing newline. Equal tables encode to
// equal bytes. It writes Format and Version whatever t holds. Errors match
// ErrInvalid.
func Encode(t *Table) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	w := wireTable{Format: Format, Version: Version, TimeZone: t.TimeZone, SchemaID: t.SchemaID, LastColumnID: t.LastColumnID}
	for _, c := range t.PartitionColumns {
		w.PartitionColumns = append(w.PartitionColumns, wirePartCol(c))
	}
	w.Schema = wireFields(t.Schema.Fields)
	if v := t.Views; v != nil {
		w.Views = &wireViews{Iceberg: v.Iceberg, Delta: v.Delta, Catalogs: v.Catalogs}
	}
	w.PublishedIDs = t.PublishedIDs
	w.Layout = t.Layout
	if t.Layout == LayoutTable {
		w.Version = VersionLayout
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(w); err != nil {
		return nil, invalid("document", "%v", err)
	}
	if buf.Len() > MaxDocumentBytes {
		return nil, invalid("document", "encodes to %d bytes, more than the %d a reader accepts", buf.Len(), MaxDocumentBytes)
	}
	return buf.Bytes(), nil
}

type wireTable struct {
	Format           string        `json:"format"`
	Version          string        `json:"version"`
	PartitionColumns []wirePartCol `json:"partition_columns"`
	TimeZone         string        `json:"time_zone,omitempty"`
	SchemaID         int           `json:"schema_id"`
	LastColumnID     int           `json:"last_column_id"`
	Schema           []wireField   `json:"schema"`
	Views            *wireViews    `json:"views,omitempty"`
	PublishedIDs     bool          `json:"published_ids,omitempty"`
	Layout           int           `json:"layout,omitempty"`
}

type wireViews struct {
	Iceberg  bool     `json:"iceberg"`
	Delta    bool     `json:"delta"`
	Catalogs []string `json:"catalogs,omitempty"`
}

type wirePartCol struct {
	ID     int    `json:"id"`
	Name   string `json:"name"`
	Type   Type   `json:"type"`
	Layout string `json:"layout,omitempty"`
}

type wireField struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     Type   `json:"type"`
	Nullable bool   `json:"nullable"`
	Doc      string `json:"doc,omitempty"`
}

func wireFields(fs []Field) []wireField {
	out := make([]wireField, len(fs))
	for i, f := range fs {
		out[i] = wireField(f)
	}
	return out
}

type wireStruct struct {
	Type   string      `json:"type"`
	Fields []wireField `json:"fields"`
}

type wireList struct {
	Type            string `json:"type"`
	ElementID       int    `json:"element_id"`
	Element         Type   `json:"element"`
	ElementNullable bool   `json:"element_nullable"`
}

type wireMap struct {
	Type          string `json:"type"`
	KeyID         int    `json:"key_id"`
	Key           Type   `json:"key"`
	ValueID       int    `json:"value_id"`
	Value         Type   `json:"value"`
	ValueNullable bool   `json:"value_nullable"`
}

// MarshalJSON writes a primitive type as a string ("long",
// "decimal(9,2)", "fixed[16]") and a nested type as an object:
//
//	{"type": "struct", "fields": [...]}
//	{"type": "list", "element_id": 7, "element": "string", "element_nullable": true}
//	{"type": "map", "key_id": 8, "key": "string", "value_id": 9, "value": "long", "value_nullable": true}
func (t Type) MarshalJSON() ([]byte, error) {
	var v any
	switch t.Kind {
	case Struct:
		v = wireStruct{Type: "struct", Fields: wireFields(t.Fields)}
	case List:
		if t.Element == nil {
			return nil, errors.New("list without element")
		}
		v = wireList{Type: "list", ElementID: t.Element.ID, Element: t.Element.Type, ElementNullable: t.Element.Nullable}
	case Map:
		if t.Key == nil || t.Value == nil {
			return nil, errors.New("map without key or value")
		}
		v = wireMap{Type: "map", KeyID: t.Key.ID, Key: t.Key.Type, ValueID: t.Value.ID, Value: t.Value.Type, ValueNullable: t.Value.Nullable}
	default:
		if _, ok := kindNames[t.Kind]; !ok || t.Kind == Invalid {
			return nil, fmt.Errorf("unknown type %v", t.Kind)
		}
		v = t.String()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Decode parses and validates a table document. It is strict: at most
// MaxDocumentBytes of valid UTF-8 holding one JSON object, no duplicate
// keys, nothing after it, format "pswap-table" and a version of major 1;
// field names match exactly, null is never a value, and unknown fields
// are an error unless the document declares a newer minor version (whose
// additions are then ignored). The result passes Validate. Errors match
// ErrInvalid (and ErrUnsupportedVersion for another major version).
func Decode(data []byte) (*Table, error) {
	t, err := decode(data)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func decode(data []byte) (*Table, *Error) {
	top, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: MaxDocumentBytes, MaxDepth: maxDocumentDepth})
	if p != nil {
		return nil, fromProblem(p)
	}
	r := strictjson.NewReader(top, Version)
	format := r.Str("format", true)
	version := r.Str("version", true)
	if p := r.Err(); p != nil {
		return nil, fromProblem(p)
	}
	if format != Format {
		return nil, invalid("format", "%q, want %q", format, Format)
	}
	major, minor, newer, verr := checkVersion(version)
	if verr != nil {
		return nil, verr.(*Error)
	}
	r.SetLenient(newer)
	r.Known("format", "version", "partition_columns", "time_zone", "schema_id", "last_column_id", "schema", "views", "published_ids", "layout")
	t := &Table{Format: Format, Version: version}
	for _, o := range r.Objects("partition_columns", MaxFields, "entries") {
		o.Known("id", "name", "type", "layout")
		c := PartitionColumn{ID: int(o.Int("id", 32)), Name: o.Str("name", true), Layout: o.Str("layout", false)}
		c.Type = readType(o, "type", 0)
		t.PartitionColumns = append(t.PartitionColumns, c)
	}
	t.TimeZone = r.Str("time_zone", false)
	t.SchemaID = int(r.Int("schema_id", 32))
	t.LastColumnID = int(r.Int("last_column_id", 32))
	t.Schema.Fields = readFields(r, "schema", 0)
	if r.Has("layout") {
		t.Layout = int(r.Int("layout", 8))
	}
	if major == 2 {
		t.Layout = LayoutTable // what version 2 means, written or not
	}
	if r.Has("views") {
		if o := r.Object("views", true); o != nil {
			o.Known("iceberg", "delta", "catalogs")
			t.Views = &Views{Iceberg: o.Bool("iceberg", true), Delta: o.Bool("delta", true), Catalogs: o.Strings("catalogs", MaxCatalogs)}
		}
	}
	if r.Has("published_ids") {
		if major == 1 && minor < 2 {
			// Not a field of 1.0 or 1.1: a typo or tampering, and a
			// mark no publish wrote must not be trusted.
			return nil, invalid("published_ids", "not a field of version %s (added in 1.2)", version)
		}
		t.PublishedIDs = r.Bool("published_ids", true)
	}
	if p := r.Err(); p != nil {
		return nil, fromProblem(p)
	}
	if err := t.Validate(); err != nil {
		return nil, err.(*Error)
	}
	return t, nil
}

// maxDocumentDepth bounds the JSON nesting of a document: a type nests
// three levels of JSON per level of MaxNesting at most, plus the document's
// own.
const maxDocumentDepth = 4*MaxNesting + 8

// fromProblem turns the strict reader's problem into this package's error.
func fromProblem(p *strictjson.Problem) *Error {
	return invalid(p.Field, "%s", p.Msg)
}

// readFields reads an array of fields (a schema, a struct's fields).
func readFields(r *strictjson.Reader, name string, depth int) []Field {
	objs := r.Objects(name, MaxFields, "entries")
	out := make([]Field, 0, len(objs))
	for _, o := range objs {
		o.Known("id", "name", "type", "nullable", "doc")
		f := Field{ID: int(o.Int("id", 32)), Name: o.Str("name", true), Nullable: o.Bool("nullable", true), Doc: o.Str("doc", false)}
		f.Type = readType(o, "type", depth)
		if r.Err() != nil {
			return nil
		}
		out = append(out, f)
	}
	return out
}

var (
	decimalRe = regexp.MustCompile(`^decimal\(([0-9]{1,3}),([0-9]{1,3})\)$`)
	fixedRe   = regexp.MustCompile(`^fixed\[([0-9]{1,10})\]$`)
)

// ParseType parses a primitive type as the document spells it: "long",
// "decimal(9,2)", "fixed[16]". Errors match ErrInvalid.
func ParseType(s string) (Type, error) {
	t, problem := parsePrimitive(s)
	if problem != "" {
		return Type{}, invalid("type", "%q: %s", s, problem)
	}
	return t, nil
}

func parsePrimitive(s string) (Type, string) {
	if m := decimalRe.FindStringSubmatch(s); m != nil {
		p, _ := strconv.Atoi(m[1])
		sc, _ := strconv.Atoi(m[2])
		return DecimalType(p, sc), ""
	}
	if m := fixedRe.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return FixedType(n), ""
	}
	for k, n := range kindNames {
		if n == s && !k.Nested() && k != Decimal && k != Fixed {
			return Type{Kind: k}, ""
		}
	}
	return Type{}, "unknown type (want boolean, int, long, float, double, decimal(P,S), date, time, timestamp, timestamptz, timestamp_ns, timestamptz_ns, string, binary, fixed[L], or a struct, list or map object)"
}

// readType reads a type: a primitive's name or a struct, list or map
// object.
func readType(r *strictjson.Reader, name string, depth int) Type {
	v := r.Raw(name, true)
	if v == nil {
		return Type{}
	}
	if depth > MaxNesting {
		r.Fail(name, "nested more than %d levels deep", MaxNesting)
		return Type{}
	}
	switch v[0] {
	case '"':
		s := r.Str(name, true)
		t, problem := parsePrimitive(s)
		if problem != "" {
			r.Fail(name, "%q: %s", s, problem)
		}
		return t
	case '{':
		return readNested(r.Object(name, true), depth)
	}
	r.Fail(name, "must be a type name or a struct, list or map object")
	return Type{}
}

// readNested reads a struct, list or map type object.
func readNested(o *strictjson.Reader, depth int) Type {
	if o == nil {
		return Type{}
	}
	switch kind := o.Str("type", true); kind {
	case "struct":
		o.Known("type", "fields")
		return Type{Kind: Struct, Fields: readFields(o, "fields", depth+1)}
	case "list":
		o.Known("type", "element_id", "element", "element_nullable")
		e := &Field{Name: "element", ID: int(o.Int("element_id", 32)), Nullable: o.Bool("element_nullable", true)}
		e.Type = readType(o, "element", depth+1)
		return Type{Kind: List, Element: e}
	case "map":
		o.Known("type", "key_id", "key", "value_id", "value", "value_nullable")
		k := &Field{Name: "key", ID: int(o.Int("key_id", 32))}
		k.Type = readType(o, "key", depth+1)
		val := &Field{Name: "value", ID: int(o.Int("value_id", 32)), Nullable: o.Bool("value_nullable", true)}
		val.Type = readType(o, "value", depth+1)
		return Type{Kind: Map, Key: k, Value: val}
	default:
		if o.Err() == nil {
			o.Fail("type", "%q: want struct, list or map", kind)
		}
	}
	return Type{}
}
