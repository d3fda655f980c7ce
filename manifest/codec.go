package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// maxDepth bounds the nesting of a document (ours nest three deep; fields of
// newer minor versions get some room).
const maxDepth = 32

// Encode validates m and returns its canonical encoding: an indented JSON
// object with a fixed field order (headline fields first, then one line per
// file), a trailing newline, no HTML escaping. Equal manifests encode to
// equal bytes. Encode succeeds exactly when m.Validate does; it then writes
// FormatManifest and Version (whatever valid values m.Format and m.Version
// hold: re-encoding a document of a newer minor version writes ours), and
// times in UTC. Validation errors match ErrInvalid.
func Encode(m *Manifest) ([]byte, error) {
	if m == nil {
		return nil, invalid("manifest", "document", nil, "nil manifest")
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	c := *m
	c.Format, c.Version = FormatManifest, Version
	c.CreatedAt, c.CommittedAt = c.CreatedAt.UTC(), c.CommittedAt.UTC()
	w := newObjWriter()
	w.str("format", c.Format)
	w.str("version", c.Version)
	w.str("partition", c.Partition)
	w.str("generation", c.Generation)
	w.optStr("data_generation", c.DataGeneration)
	w.optStr("parent", c.Parent)
	w.optStr("run_id", c.RunID)
	w.optStr("rollback_of", c.RollbackOf)
	w.time("created_at", c.CreatedAt)
	w.time("committed_at", c.CommittedAt)
	w.str("writer", c.Writer)
	w.int("rows", c.Rows)
	w.int("bytes", c.Bytes)
	w.str("content_checksum", c.ContentChecksum)
	w.optStr("schema", c.Schema)
	w.key("files")
	if len(c.Files) == 0 {
		w.buf.WriteString("[]")
	} else {
		w.buf.WriteString("[")
		for i, f := range c.Files {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.buf.WriteString("\n    {\"path\": ")
			w.quote(f.Path)
			w.buf.WriteString(", \"size\": ")
			w.buf.WriteString(strconv.FormatInt(f.Size, 10))
			w.buf.WriteString(", \"rows\": ")
			w.buf.WriteString(strconv.FormatInt(f.Rows, 10))
			w.buf.WriteString(", \"checksum\": ")
			w.quote(f.Checksum)
			w.buf.WriteString("}")
		}
		w.buf.WriteString("\n  ]")
	}
	return w.finish("manifest")
}

// EncodePointer validates p and returns its canonical encoding (indented
// JSON, fixed field order, trailing newline). It succeeds exactly when
// p.Validate does, and then writes FormatPointer, Version, and the time in
// UTC. Validation errors match ErrInvalid.
func EncodePointer(p *Pointer) ([]byte, error) {
	if p == nil {
		return nil, invalid("pointer", "document", nil, "nil pointer")
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	c := *p
	c.Format, c.Version = FormatPointer, PointerVersion
	if !c.HasHistory() {
		c.Version = Version // nothing of 1.1 to say: a 1.0 document
	}
	c.CommittedAt = c.CommittedAt.UTC()
	w := newObjWriter()
	w.str("format", c.Format)
	w.str("version", c.Version)
	w.str("partition", c.Partition)
	w.str("generation", c.Generation)
	w.int("seq", c.Seq)
	w.optStr("parent", c.Parent)
	w.optStr("run_id", c.RunID)
	w.int("rows", c.Rows)
	w.int("bytes", c.Bytes)
	if c.HasHistory() {
		w.int("files", int64(c.Files))
	}
	w.str("content_checksum", c.ContentChecksum)
	w.time("committed_at", c.CommittedAt)
	if c.HasHistory() {
		if c.HistoryTruncated {
			w.key("history_truncated")
			w.buf.WriteString("true")
		}
		w.key("history")
		w.buf.WriteString("[")
		for i, e := range c.History {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.buf.WriteString("\n    {\"generation\": ")
			w.quote(e.Generation)
			if e.DataGeneration != "" {
				w.buf.WriteString(", \"data_generation\": ")
				w.quote(e.DataGeneration)
			}
			if e.RunID != "" {
				w.buf.WriteString(", \"run_id\": ")
				w.quote(e.RunID)
			}
			w.buf.WriteString(", \"committed_at\": ")
			w.quote(e.CommittedAt.UTC().Format(time.RFC3339Nano))
			w.buf.WriteString(", \"rows\": ")
			w.buf.WriteString(strconv.FormatInt(e.Rows, 10))
			w.buf.WriteString("}")
		}
		w.buf.WriteString("\n  ]")
	}
	return w.finish("pointer")
}

// objWriter writes one indented JSON object, field by field.
type objWriter struct {
	buf     bytes.Buffer
	scratch bytes.Buffer
	enc     *json.Encoder
	n       int
}

func newObjWriter() *objWriter {
	w := &objWriter{}
	w.enc = json.NewEncoder(&w.scratch)
	w.enc.SetEscapeHTML(false)
	w.buf.WriteByte('{')
	return w
}

func (w *objWriter) key(name string) {
	if w.n > 0 {
		w.buf.WriteByte(',')
	}
	w.n++
	w.buf.WriteString("\n  ")
	w.quote(name)
	w.buf.WriteString(": ")
}

// quote writes s as a JSON string. s is valid UTF-8 (validated before), so
// the encoder cannot fail.
func (w *objWriter) quote(s string) {
	w.scratch.Reset()
	_ = w.enc.Encode(s)
	w.buf.Write(bytes.TrimSuffix(w.scratch.Bytes(), []byte("\n")))
}

func (w *objWriter) str(name, v string) { w.key(name); w.quote(v) }

func (w *objWriter) optStr(name, v string) {
	if v != "" {
		w.str(name, v)
	}
}

func (w *objWriter) int(name string, v int64) {
	w.key(name)
	w.buf.WriteString(strconv.FormatInt(v, 10))
}

// time writes t in RFC 3339 with as many fractional digits as it needs.
func (w *objWriter) time(name string, t time.Time) {
	w.str(name, t.UTC().Format(time.RFC3339Nano))
}

func (w *objWriter) finish(doc string) ([]byte, error) {
	w.buf.WriteString("\n}\n")
	if w.buf.Len() > MaxDocumentBytes {
		return nil, invalid(doc, "document", nil, "encodes to %d bytes, more than the %d bytes a reader accepts", w.buf.Len(), MaxDocumentBytes)
	}
	return w.buf.Bytes(), nil
}

// Decode parses and validates a manifest document. It is strict: the input
// must be at most MaxDocumentBytes of valid UTF-8 holding exactly one JSON
// object, without duplicate keys, with the format "pswap-manifest" and a
// version of the same major as Version. Field names match exactly (not
// case-insensitively), null is never accepted for a known field, and fields
// this package does not know are an error, unless the document declares a
// higher minor version, whose additions are then ignored. The result then
// passes Validate. Every error matches ErrInvalid; a different major version
// also matches ErrUnsupportedVersion.
func Decode(data []byte) (*Manifest, error) {
	m, err := decodeManifest(data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func decodeManifest(data []byte) (*Manifest, *Error) {
	const doc = "manifest"
	top, newer, err := parseDocument(doc, FormatManifest, data)
	if err != nil {
		return nil, err
	}
	r := &fieldReader{doc: doc, fields: top, lenient: newer}
	r.noUnknown("format", "version", "partition", "generation", "data_generation", "parent",
		"run_id", "rollback_of", "created_at", "committed_at", "writer", "rows", "bytes",
		"content_checksum", "schema", "files")
	m := &Manifest{Format: FormatManifest}
	m.Version = r.str("version", true)
	m.Partition = r.str("partition", true)
	m.Generation = r.str("generation", true)
	m.DataGeneration = r.str("data_generation", false)
	m.Parent = r.str("parent", false)
	m.RunID = r.str("run_id", false)
	m.RollbackOf = r.str("rollback_of", false)
	m.CreatedAt = r.time("created_at")
	m.CommittedAt = r.time("committed_at")
	m.Writer = r.str("writer", true)
	m.Rows = r.int("rows")
	m.Bytes = r.int("bytes")
	m.ContentChecksum = r.str("content_checksum", true)
	m.Schema = r.str("schema", false)
	m.Files = r.files("files")
	if r.err != nil {
		return nil, r.err
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// DecodePointer parses and validates a pointer document, as strictly as
// Decode parses a manifest. Every error matches ErrInvalid; a different
// major version also matches ErrUnsupportedVersion.
func DecodePointer(data []byte) (*Pointer, error) {
	p, err := decodePointer(data)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func decodePointer(data []byte) (*Pointer, *Error) {
	const doc = "pointer"
	top, newer, err := parseDocument(doc, FormatPointer, data)
	if err != nil {
		return nil, err
	}
	r := &fieldReader{doc: doc, fields: top, lenient: newer}
	p := &Pointer{Format: FormatPointer}
	p.Version = r.str("version", true)
	// Version 1.1 added files, history and history_truncated; in a 1.0
	// document they are unknown fields.
	_, minor, _ := versionNumbers(p.Version)
	v11 := minor >= 1
	known := []string{"format", "version", "partition", "generation", "seq", "parent", "run_id",
		"rows", "bytes", "content_checksum", "committed_at"}
	if v11 {
		known = append(known, "files", "history", "history_truncated")
	}
	r.noUnknown(known...)
	p.Partition = r.str("partition", true)
	p.Generation = r.str("generation", true)
	p.Seq = r.int("seq")
	p.Parent = r.str("parent", false)
	p.RunID = r.str("run_id", false)
	p.Rows = r.int("rows")
	p.Bytes = r.int("bytes")
	p.ContentChecksum = r.str("content_checksum", true)
	p.CommittedAt = r.time("committed_at")
	if v11 {
		files := r.int("files")
		if r.err == nil && (files < 0 || files > MaxFiles) {
			r.fail("files", "must be between 0 and %d", MaxFiles)
		}
		p.Files = int(files)
		p.HistoryTruncated = r.bool("history_truncated")
		p.History = r.history("history")
		if r.err == nil && len(p.History) == 0 {
			r.fail("history", "empty: lists at least the current generation")
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// parseDocument checks the size, encoding and syntax of a document, its
// format and its version. It returns the top-level fields and whether the
// document is of a newer minor version.
func parseDocument(doc, wantFormat string, data []byte) (map[string]json.RawMessage, bool, *Error) {
	if len(data) > MaxDocumentBytes {
		return nil, false, invalid(doc, "document", nil, "%d bytes, more than the limit of %d", len(data), MaxDocumentBytes)
	}
	if !utf8.Valid(data) {
		return nil, false, invalid(doc, "document", nil, "not valid UTF-8")
	}
	if !json.Valid(data) {
		// Slow path, only to say what is wrong and where.
		if err := checkSyntax(doc, data); err != nil {
			return nil, false, err
		}
		return nil, false, invalid(doc, "document", nil, "invalid JSON")
	}
	if err := checkStructure(doc, data); err != nil {
		return nil, false, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		// checkSyntax accepted it, so this cannot happen; report it anyway.
		return nil, false, invalid(doc, "document", nil, "%v", err)
	}
	r := &fieldReader{doc: doc, fields: top}
	format := r.str("format", true)
	if r.err != nil {
		return nil, false, r.err
	}
	if format != wantFormat {
		switch {
		case wantFormat == FormatManifest && format == FormatPointer:
			return nil, false, invalid(doc, "format", format, "this is a pointer, not a manifest")
		case wantFormat == FormatPointer && format == FormatManifest:
			return nil, false, invalid(doc, "format", format, "this is a manifest, not a pointer")
		}
		return nil, false, invalid(doc, "format", format, "want %q", wantFormat)
	}
	version := r.str("version", true)
	if r.err != nil {
		return nil, false, r.err
	}
	newer, err := checkVersion(doc, version)
	if err != nil {
		return nil, false, err
	}
	return top, newer, nil
}

// checkSyntax explains why a document that is not valid JSON is invalid: it
// walks it with the standard decoder until it finds a syntax error, a
// truncation, trailing data, too deep a nesting or a duplicate key.
func checkSyntax(doc string, data []byte) *Error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(doc, dec, err)
	}
	if tok != json.Delim('{') {
		return invalid(doc, "document", nil, "not a JSON object")
	}
	if err := walkJSON(doc, dec, tok, "", 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid(doc, "document", nil, "trailing data after the JSON object at byte %d", dec.InputOffset())
	}
	return nil
}

func walkJSON(doc string, dec *json.Decoder, tok json.Token, path string, depth int) *Error {
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	if depth > maxDepth {
		return invalid(doc, "document", nil, "nested more than %d levels deep", maxDepth)
	}
	switch delim {
	case '{':
		seen := make(map[string]bool)
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return syntaxError(doc, dec, err)
			}
			key, _ := kt.(string) // the decoder only yields strings in key position
			if seen[key] {
				field := key
				if path != "" {
					field = path + "." + key
				}
				return invalid(doc, field, nil, "duplicate key")
			}
			seen[key] = true
			vt, err := dec.Token()
			if err != nil {
				return syntaxError(doc, dec, err)
			}
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if err := walkJSON(doc, dec, vt, sub, depth+1); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			vt, err := dec.Token()
			if err != nil {
				return syntaxError(doc, dec, err)
			}
			if err := walkJSON(doc, dec, vt, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	}
	// The closing delimiter (or the error that stopped dec.More).
	if _, err := dec.Token(); err != nil {
		return syntaxError(doc, dec, err)
	}
	return nil
}

func syntaxError(doc string, dec *json.Decoder, err error) *Error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return invalid(doc, "document", nil, "truncated JSON")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return invalid(doc, "document", nil, "invalid JSON at byte %d: %v", se.Offset, se)
	}
	return invalid(doc, "document", nil, "invalid JSON at byte %d: %v", dec.InputOffset(), err)
}

// fieldReader extracts typed fields from a JSON object, keeping the first
// error. Names match exactly.
type fieldReader struct {
	doc     string
	prefix  string // e.g. "files[3]."
	fields  map[string]json.RawMessage
	lenient bool // ignore unknown fields (newer minor version)
	err     *Error
}

func (r *fieldReader) fail(name, problem string, args ...any) {
	if r.err == nil {
		r.err = invalid(r.doc, r.prefix+name, nil, problem, args...)
	}
}

// raw returns a field's JSON text, or nil if the field is absent (which is
// an error when required). null is always an error.
func (r *fieldReader) raw(name string, required bool) json.RawMessage {
	if r.err != nil {
		return nil
	}
	v, ok := r.fields[name]
	if !ok {
		if required {
			r.fail(name, "missing")
		}
		return nil
	}
	if string(v) == "null" {
		r.fail(name, "null is not allowed")
		return nil
	}
	return v
}

// The values handed to str and int are single valid JSON values (the whole
// document passed json.Valid), which allows a fast path for the common case.

func (r *fieldReader) str(name string, required bool) string {
	v := r.raw(name, required)
	if v == nil {
		return ""
	}
	if v[0] != '"' {
		r.fail(name, "must be a string")
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]) // no escapes: the text is the value
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		r.fail(name, "must be a string")
		return ""
	}
	return s
}

func (r *fieldReader) int(name string) int64 {
	v := r.raw(name, true)
	if v == nil {
		return 0
	}
	// ParseInt rejects fractions and exponents, which JSON numbers may have.
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		r.fail(name, "must be an integer in the 64-bit range")
		return 0
	}
	return n
}

func (r *fieldReader) time(name string) time.Time {
	v := r.raw(name, true)
	if v == nil {
		return time.Time{}
	}
	var t time.Time
	if v[0] != '"' || t.UnmarshalJSON(v) != nil {
		r.fail(name, "must be an RFC 3339 time string")
		return time.Time{}
	}
	return t.UTC()
}

func (r *fieldReader) files(name string) []File {
	v := r.raw(name, true)
	if v == nil {
		return nil
	}
	if v[0] != '[' {
		r.fail(name, "must be an array")
		return nil
	}
	if n := countElements(v); n > MaxFiles {
		r.fail(name, "%d files, at most %d allowed", n, MaxFiles)
		return nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		// Some element is not an object: find it.
		var raws []json.RawMessage
		_ = json.Unmarshal(v, &raws)
		for i, item := range raws {
			if item[0] != '{' {
				r.fail(fmt.Sprintf("%s[%d]", name, i), "must be an object")
				return nil
			}
		}
		r.fail(name, "must be an array of objects")
		return nil
	}
	files := make([]File, 0, len(items))
	fr := &fieldReader{doc: r.doc, lenient: r.lenient}
	for i, obj := range items {
		if obj == nil {
			r.fail(fmt.Sprintf("%s[%d]", name, i), "must be an object")
			return nil
		}
		fr.fields, fr.prefix = obj, fmt.Sprintf("%s%s[%d].", r.prefix, name, i)
		fr.noUnknown("path", "size", "rows", "checksum")
		f := File{
			Path:     fr.str("path", true),
			Size:     fr.int("size"),
			Rows:     fr.int("rows"),
			Checksum: fr.str("checksum", true),
		}
		if fr.err != nil {
			r.err = fr.err
			return nil
		}
		files = append(files, f)
	}
	return files
}

// bool reads an optional boolean (absent: false).
func (r *fieldReader) bool(name string) bool {
	v := r.raw(name, false)
	switch string(v) {
	case "":
		return false
	case "true":
		return true
	case "false":
		return false
	}
	r.fail(name, "must be true or false")
	return false
}

// history reads a pointer's history array (required).
func (r *fieldReader) history(name string) []HistoryEntry {
	v := r.raw(name, true)
	if v == nil {
		return nil
	}
	if v[0] != '[' {
		r.fail(name, "must be an array")
		return nil
	}
	if n := countElements(v); n > MaxHistory {
		r.fail(name, "%d entries, at most %d allowed", n, MaxHistory)
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		r.fail(name, "must be an array of objects")
		return nil
	}
	out := make([]HistoryEntry, 0, len(raws))
	er := &fieldReader{doc: r.doc, lenient: r.lenient}
	for i, item := range raws {
		var obj map[string]json.RawMessage
		if item[0] != '{' || json.Unmarshal(item, &obj) != nil {
			r.fail(fmt.Sprintf("%s[%d]", name, i), "must be an object")
			return nil
		}
		er.fields, er.prefix = obj, fmt.Sprintf("%s%s[%d].", r.prefix, name, i)
		er.noUnknown("generation", "data_generation", "run_id", "committed_at", "rows")
		e := HistoryEntry{
			Generation:     er.str("generation", true),
			DataGeneration: er.str("data_generation", false),
			RunID:          er.str("run_id", false),
			CommittedAt:    er.time("committed_at"),
			Rows:           er.int("rows"),
		}
		if er.err != nil {
			r.err = er.err
			return nil
		}
		out = append(out, e)
	}
	return out
}

// noUnknown fails on the first (in sorted order) field not in known, unless
// the reader is lenient.
func (r *fieldReader) noUnknown(known ...string) {
	if r.err != nil || r.lenient {
		return
	}
	var unknown []string
	for k := range r.fields {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return
	}
	slices.Sort(unknown)
	r.err = invalid(r.doc, r.prefix+unknown[0], nil, "unknown field (version %s has no such field)", Version)
}
