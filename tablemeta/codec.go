package tablemeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Encode validates t and returns its canonical encoding: indented JSON
// with a fixed field order and a trailing newline. Equal tables encode to
// equal bytes. It writes Format and Version whatever t holds. Errors match
// ErrInvalid.
func Encode(t *Table) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	w := wireTable{Format: Format, Version: Version, SchemaID: t.SchemaID, LastColumnID: t.LastColumnID}
	for _, c := range t.PartitionColumns {
		w.PartitionColumns = append(w.PartitionColumns, wirePartCol(c))
	}
	w.Schema = wireFields(t.Schema.Fields)
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
	SchemaID         int           `json:"schema_id"`
	LastColumnID     int           `json:"last_column_id"`
	Schema           []wireField   `json:"schema"`
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
	if len(data) > MaxDocumentBytes {
		return nil, invalid("document", "%d bytes, more than the limit of %d", len(data), MaxDocumentBytes)
	}
	if !utf8.Valid(data) {
		return nil, invalid("document", "not valid UTF-8")
	}
	if err := checkSyntax(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, invalid("document", "%v", err)
	}
	r := &reader{}
	format := r.str(top, "", "format")
	version := r.str(top, "", "version")
	if r.err != nil {
		return nil, r.err
	}
	if format != Format {
		return nil, invalid("format", "%q, want %q", format, Format)
	}
	newer, verr := checkVersion(version)
	if verr != nil {
		return nil, verr.(*Error)
	}
	r.lenient = newer
	r.known(top, "", "format", "version", "partition_columns", "schema_id", "last_column_id", "schema")
	t := &Table{Format: Format, Version: version}
	for i, o := range r.objects(top, "", "partition_columns") {
		p := fmt.Sprintf("partition_columns[%d]", i)
		r.known(o, p, "id", "name", "type", "layout")
		c := PartitionColumn{ID: r.int(o, p, "id"), Name: r.str(o, p, "name"), Layout: r.optStr(o, p, "layout")}
		c.Type = r.typ(o, p, "type", 0)
		t.PartitionColumns = append(t.PartitionColumns, c)
	}
	t.SchemaID = r.int(top, "", "schema_id")
	t.LastColumnID = r.int(top, "", "last_column_id")
	t.Schema.Fields = r.fields(top, "", "schema", 0)
	if r.err != nil {
		return nil, r.err
	}
	if err := t.Validate(); err != nil {
		return nil, err.(*Error)
	}
	return t, nil
}

// reader extracts typed fields from decoded JSON, keeping the first error.
type reader struct {
	lenient bool
	err     *Error
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (r *reader) fail(path, problem string, args ...any) {
	if r.err == nil {
		r.err = invalid(path, problem, args...)
	}
}

func (r *reader) known(o map[string]any, path string, names ...string) {
	if r.err != nil || r.lenient {
		return
	}
	var unknown []string
	for k := range o {
		if !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		r.fail(join(path, unknown[0]), "unknown field (version %s has no such field)", Version)
	}
}

func (r *reader) get(o map[string]any, path, name string, required bool) (any, bool) {
	if r.err != nil {
		return nil, false
	}
	v, ok := o[name]
	if !ok {
		if required {
			r.fail(join(path, name), "missing")
		}
		return nil, false
	}
	if v == nil {
		r.fail(join(path, name), "null is not allowed")
		return nil, false
	}
	return v, true
}

func (r *reader) str(o map[string]any, path, name string) string {
	v, ok := r.get(o, path, name, true)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail(join(path, name), "must be a string")
	}
	return s
}

func (r *reader) optStr(o map[string]any, path, name string) string {
	if _, ok := o[name]; !ok {
		return ""
	}
	return r.str(o, path, name)
}

func (r *reader) int(o map[string]any, path, name string) int {
	v, ok := r.get(o, path, name, true)
	if !ok {
		return 0
	}
	n, isNum := v.(json.Number)
	if !isNum {
		r.fail(join(path, name), "must be an integer")
		return 0
	}
	i, err := strconv.ParseInt(string(n), 10, 32)
	if err != nil {
		r.fail(join(path, name), "%s: must be an integer in the 32-bit range", n)
		return 0
	}
	return int(i)
}

func (r *reader) bool(o map[string]any, path, name string) bool {
	v, ok := r.get(o, path, name, true)
	if !ok {
		return false
	}
	b, isBool := v.(bool)
	if !isBool {
		r.fail(join(path, name), "must be true or false")
	}
	return b
}

func (r *reader) objects(o map[string]any, path, name string) []map[string]any {
	v, ok := r.get(o, path, name, true)
	if !ok {
		return nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		r.fail(join(path, name), "must be an array")
		return nil
	}
	if len(arr) > MaxFields {
		r.fail(join(path, name), "%d entries, at most %d", len(arr), MaxFields)
		return nil
	}
	out := make([]map[string]any, len(arr))
	for i, e := range arr {
		m, isObj := e.(map[string]any)
		if !isObj {
			r.fail(fmt.Sprintf("%s[%d]", join(path, name), i), "must be an object")
			return nil
		}
		out[i] = m
	}
	return out
}

func (r *reader) fields(o map[string]any, path, name string, depth int) []Field {
	objs := r.objects(o, path, name)
	if r.err != nil {
		return nil
	}
	out := make([]Field, 0, len(objs))
	for i, fo := range objs {
		p := fmt.Sprintf("%s[%d]", join(path, name), i)
		r.known(fo, p, "id", "name", "type", "nullable", "doc")
		f := Field{ID: r.int(fo, p, "id"), Name: r.str(fo, p, "name"), Nullable: r.bool(fo, p, "nullable"), Doc: r.optStr(fo, p, "doc")}
		f.Type = r.typ(fo, p, "type", depth)
		if r.err != nil {
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

func (r *reader) typ(o map[string]any, path, name string, depth int) Type {
	v, ok := r.get(o, path, name, true)
	if !ok {
		return Type{}
	}
	p := join(path, name)
	if depth > MaxNesting {
		r.fail(p, "nested more than %d levels deep", MaxNesting)
		return Type{}
	}
	switch v := v.(type) {
	case string:
		t, problem := parsePrimitive(v)
		if problem != "" {
			r.fail(p, "%q: %s", v, problem)
		}
		return t
	case map[string]any:
		kind := r.str(v, p, "type")
		if r.err != nil {
			return Type{}
		}
		switch kind {
		case "struct":
			r.known(v, p, "type", "fields")
			return Type{Kind: Struct, Fields: r.fields(v, p, "fields", depth+1)}
		case "list":
			r.known(v, p, "type", "element_id", "element", "element_nullable")
			e := &Field{Name: "element", ID: r.int(v, p, "element_id"), Nullable: r.bool(v, p, "element_nullable")}
			e.Type = r.typ(v, p, "element", depth+1)
			return Type{Kind: List, Element: e}
		case "map":
			r.known(v, p, "type", "key_id", "key", "value_id", "value", "value_nullable")
			k := &Field{Name: "key", ID: r.int(v, p, "key_id")}
			k.Type = r.typ(v, p, "key", depth+1)
			val := &Field{Name: "value", ID: r.int(v, p, "value_id"), Nullable: r.bool(v, p, "value_nullable")}
			val.Type = r.typ(v, p, "value", depth+1)
			return Type{Kind: Map, Key: k, Value: val}
		}
		r.fail(join(p, "type"), "%q: want struct, list or map", kind)
	default:
		r.fail(p, "must be a type name or a struct, list or map object")
	}
	return Type{}
}

// checkSyntax rejects what json.Unmarshal would accept silently or
// explain poorly: truncation, trailing data, duplicate keys, too deep a
// nesting, a top level that is not an object.
func checkSyntax(data []byte) *Error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(dec, err)
	}
	if tok != json.Delim('{') {
		return invalid("document", "not a JSON object")
	}
	if err := walk(dec, tok, "", 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("document", "trailing data after the JSON object at byte %d", dec.InputOffset())
	}
	return nil
}

func walk(dec *json.Decoder, tok json.Token, path string, depth int) *Error {
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth > 4*MaxNesting+8 {
		return invalid("document", "nested too deeply")
	}
	switch delim {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return syntaxError(dec, err)
			}
			key, _ := kt.(string)
			if seen[key] {
				return invalid(join(path, key), "duplicate key")
			}
			seen[key] = true
			vt, err := dec.Token()
			if err != nil {
				return syntaxError(dec, err)
			}
			if err := walk(dec, vt, join(path, key), depth+1); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			vt, err := dec.Token()
			if err != nil {
				return syntaxError(dec, err)
			}
			if err := walk(dec, vt, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntaxError(dec, err)
	}
	return nil
}

func syntaxError(dec *json.Decoder, err error) *Error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return invalid("document", "truncated JSON")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return invalid("document", "invalid JSON at byte %d: %v", se.Offset, se)
	}
	return invalid("document", "invalid JSON at byte %d: %v", dec.InputOffset(), err)
}
