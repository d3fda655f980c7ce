package strictjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Reader takes typed fields out of one JSON object of a document that Parse
// accepted. It keeps the first problem, shared with the Readers of the
// objects nested in it: after a problem every method returns a zero value,
// and Err reports the problem.
type Reader struct {
	fields map[string]json.RawMessage
	path   string // of this object: "" for the top level, "files[3]" below
	s      *readerState
}

type readerState struct {
	version string // the version the document's reader knows, named for an unknown field
	lenient bool   // ignore unknown fields (the document is of a newer minor version)
	err     *Problem
}

// NewReader returns a Reader of a document's top-level fields (from Parse).
// version is the version of the format this program knows; an unknown
// field's message names it.
func NewReader(fields map[string]json.RawMessage, version string) *Reader {
	return &Reader{fields: fields, s: &readerState{version: version}}
}

// SetLenient makes Known accept fields it does not know, in this object and
// every one nested in it: those of a document of a newer minor version.
func (r *Reader) SetLenient(lenient bool) { r.s.lenient = lenient }

// Err returns the first problem, or nil.
func (r *Reader) Err() *Problem { return r.s.err }

// Path returns the JSON path of the object (empty for the top level).
func (r *Reader) Path() string { return r.path }

// Fail records a problem with field name of this object (unless one was
// recorded before).
func (r *Reader) Fail(name, msg string, args ...any) {
	if r.s.err == nil {
		r.s.err = problem(Join(r.path, name), msg, args...)
	}
}

// Known fails on the first (in sorted order) field not in names, unless the
// Reader is lenient.
func (r *Reader) Known(names ...string) {
	if r.s.err != nil || r.s.lenient {
		return
	}
	var unknown []string
	for k := range r.fields {
		if !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		r.Fail(unknown[0], "unknown field (version %s has no such field)", r.s.version)
	}
}

// Has reports whether the object has field name (whatever its value).
func (r *Reader) Has(name string) bool {
	_, ok := r.fields[name]
	return ok
}

// Null reports whether field name is present and null (which Raw and the
// typed readers refuse): for the rare field an earlier encoder wrote as
// null.
func (r *Reader) Null(name string) bool {
	return string(r.fields[name]) == "null"
}

// Raw returns a field's JSON text, or nil if the field is absent (a problem
// when it is required). null is always a problem.
func (r *Reader) Raw(name string, required bool) json.RawMessage {
	if r.s.err != nil {
		return nil
	}
	v, ok := r.fields[name]
	if !ok {
		if required {
			r.Fail(name, "missing")
		}
		return nil
	}
	if string(v) == "null" {
		r.Fail(name, "null is not allowed")
		return nil
	}
	return v
}

// The values handed to the typed readers below are single valid JSON values
// (the whole document passed Parse), which allows fast paths.

// Str reads a string.
func (r *Reader) Str(name string, required bool) string {
	v := r.Raw(name, required)
	if v == nil {
		return ""
	}
	if v[0] != '"' {
		r.Fail(name, "must be a string")
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]) // no escapes: the text is the value
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		r.Fail(name, "must be a string")
		return ""
	}
	return s
}

// Int reads a required integer of at most bits bits (32 or 64). A fraction
// or an exponent is a problem, even when its value is whole.
func (r *Reader) Int(name string, bits int) int64 {
	v := r.Raw(name, true)
	if v == nil {
		return 0
	}
	n, err := strconv.ParseInt(string(v), 10, bits)
	if err != nil {
		if v[0] == '-' || ('0' <= v[0] && v[0] <= '9') {
			r.Fail(name, "must be an integer in the %d-bit range", bits)
		} else {
			r.Fail(name, "must be an integer")
		}
		return 0
	}
	return n
}

// Bool reads a boolean; an absent optional one is false.
func (r *Reader) Bool(name string, required bool) bool {
	switch v := r.Raw(name, required); string(v) {
	case "true":
		return true
	case "", "false":
		return false
	}
	r.Fail(name, "must be true or false")
	return false
}

// Time reads a required RFC 3339 time string, in UTC.
func (r *Reader) Time(name string) time.Time {
	v := r.Raw(name, true)
	if v == nil {
		return time.Time{}
	}
	var t time.Time
	if v[0] != '"' || t.UnmarshalJSON(v) != nil {
		r.Fail(name, "must be an RFC 3339 time string")
		return time.Time{}
	}
	return t.UTC()
}

// Strings reads an optional array of at most max strings.
func (r *Reader) Strings(name string, max int) []string {
	v := r.Raw(name, false)
	if v == nil {
		return nil
	}
	if !r.isArray(name, v, max, "strings") {
		return nil
	}
	var raws []json.RawMessage
	_ = json.Unmarshal(v, &raws) // an array (Parse checked the syntax)
	out := make([]string, len(raws))
	for i, e := range raws {
		if e[0] != '"' || json.Unmarshal(e, &out[i]) != nil {
			r.Fail(Index(name, i), "must be a string")
			return nil
		}
	}
	return out
}

// Object reads a nested object, returning its Reader (nil if it is absent
// or a problem).
func (r *Reader) Object(name string, required bool) *Reader {
	v := r.Raw(name, required)
	if v == nil {
		return nil
	}
	var fields map[string]json.RawMessage
	if v[0] != '{' || json.Unmarshal(v, &fields) != nil {
		r.Fail(name, "must be an object")
		return nil
	}
	return &Reader{fields: fields, path: Join(r.path, name), s: r.s}
}

// Objects reads a required array of at most max objects ("N <noun>, at most
// max allowed" otherwise), returning one Reader per element.
func (r *Reader) Objects(name string, max int, noun string) []*Reader {
	v := r.Raw(name, true)
	if v == nil || !r.isArray(name, v, max, noun) {
		return nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		// Some element is not an object: find it.
		var raws []json.RawMessage
		_ = json.Unmarshal(v, &raws)
		for i, item := range raws {
			if item[0] != '{' {
				r.Fail(Index(name, i), "must be an object")
				return nil
			}
		}
		r.Fail(name, "must be an array of objects")
		return nil
	}
	out := make([]*Reader, len(items))
	for i, obj := range items {
		if obj == nil { // null
			r.Fail(Index(name, i), "must be an object")
			return nil
		}
		out[i] = &Reader{fields: obj, path: Index(Join(r.path, name), i), s: r.s}
	}
	return out
}

// isArray checks that v is an array of at most max elements.
func (r *Reader) isArray(name string, v json.RawMessage, max int, noun string) bool {
	if v[0] != '[' {
		r.Fail(name, "must be an array")
		return false
	}
	if n := countElements(v); n > max {
		r.Fail(name, "%d %s, at most %d allowed", n, noun, max)
		return false
	}
	return true
}
