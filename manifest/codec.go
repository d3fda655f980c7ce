package manifest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/pswap/pswap/internal/strictjson"
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
	c.Format, c.Version = FormatManifest, m.EncodedVersion()
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
	w.optStr("kind", c.Kind)
	if c.DataLayout != 0 {
		w.int("data_layout", int64(c.DataLayout))
	}
	w.time("created_at", c.CreatedAt)
	w.time("committed_at", c.CommittedAt)
	w.str("writer", c.Writer)
	w.int("rows", c.Rows)
	w.int("bytes", c.Bytes)
	w.str("content_checksum", c.ContentChecksum)
	w.optStr("schema", c.Schema)
	if c.Segmented() {
		w.writeSegments(c.Segments)
	}
	w.writeFiles(c.Files)
	return w.finish("manifest")
}

// writeFiles writes a file list (one line per file).
func (w *objWriter) writeFiles(files []File) {
	w.key("files")
	if len(files) == 0 {
		w.buf.WriteString("[]")
		return
	}
	w.buf.WriteString("[")
	for i, f := range files {
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
		if f.Columns != nil {
			w.writeColumns(f.Columns)
		}
		w.buf.WriteString("}")
	}
	w.buf.WriteString("\n  ]")
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
	w.optStr("moved_to", c.MovedTo)
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
	r, err := parseDocument(doc, FormatManifest, data)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Format: FormatManifest}
	m.Version = r.Str("version", true)
	major, minor, _ := strictjson.ParseVersion(m.Version)
	known := []string{"format", "version", "partition", "generation", "data_generation", "parent",
		"run_id", "rollback_of", "kind", "data_layout", "created_at", "committed_at", "writer", "rows", "bytes",
		"content_checksum", "schema", "files"}
	if major >= 2 {
		known = append(known, "segments")
	}
	r.Known(known...)
	m.Partition = r.Str("partition", true)
	m.Generation = r.Str("generation", true)
	m.DataGeneration = r.Str("data_generation", false)
	m.Parent = r.Str("parent", false)
	m.RunID = r.Str("run_id", false)
	m.RollbackOf = r.Str("rollback_of", false)
	m.Kind = r.Str("kind", false)
	if r.Has("data_layout") {
		m.DataLayout = int(r.Int("data_layout", 8))
	}
	m.CreatedAt = r.Time("created_at")
	m.CommittedAt = r.Time("committed_at")
	m.Writer = r.Str("writer", true)
	m.Rows = r.Int("rows", 64)
	m.Bytes = r.Int("bytes", 64)
	m.ContentChecksum = r.Str("content_checksum", true)
	m.Schema = r.Str("schema", false)
	if major >= 2 {
		m.Segments = readSegments(r, "segments")
		if r.Err() == nil && len(m.Segments) == 0 {
			r.Fail("segments", "empty: a version 2 manifest references at least one segment")
		}
	}
	m.Files = readFiles(r, "files", major >= 2 || minor >= 2)
	if p := r.Err(); p != nil {
		return nil, fromProblem(doc, p)
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
	r, err := parseDocument(doc, FormatPointer, data)
	if err != nil {
		return nil, err
	}
	p := &Pointer{Format: FormatPointer}
	p.Version = r.Str("version", true)
	// Version 1.1 added files, history and history_truncated; in a 1.0
	// document they are unknown fields.
	_, minor, _ := strictjson.ParseVersion(p.Version)
	v11 := minor >= 1
	known := []string{"format", "version", "partition", "generation", "seq", "parent", "run_id",
		"rows", "bytes", "content_checksum", "committed_at", "moved_to"}
	if v11 {
		known = append(known, "files", "history", "history_truncated")
	}
	r.Known(known...)
	p.Partition = r.Str("partition", true)
	p.Generation = r.Str("generation", true)
	p.Seq = r.Int("seq", 64)
	p.Parent = r.Str("parent", false)
	p.RunID = r.Str("run_id", false)
	p.Rows = r.Int("rows", 64)
	p.Bytes = r.Int("bytes", 64)
	p.ContentChecksum = r.Str("content_checksum", true)
	p.CommittedAt = r.Time("committed_at")
	p.MovedTo = r.Str("moved_to", false)
	if v11 {
		files := r.Int("files", 64)
		if r.Err() == nil && (files < 0 || files > MaxFiles) {
			r.Fail("files", "must be between 0 and %d", MaxFiles)
		}
		p.Files = int(files)
		p.HistoryTruncated = r.Bool("history_truncated", false)
		p.History = readHistory(r, "history")
		if r.Err() == nil && len(p.History) == 0 {
			r.Fail("history", "empty: lists at least the current generation")
		}
	}
	if pr := r.Err(); pr != nil {
		return nil, fromProblem(doc, pr)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// parseDocument checks the size, encoding and syntax of a document, its
// format and its version. It returns a reader of its top-level fields,
// lenient if the document is of a newer minor version.
func parseDocument(doc, wantFormat string, data []byte) (*strictjson.Reader, *Error) {
	top, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: MaxDocumentBytes, MaxDepth: maxDepth})
	if p != nil {
		return nil, fromProblem(doc, p)
	}
	r := strictjson.NewReader(top, Version)
	format := r.Str("format", true)
	version := r.Str("version", true)
	if p := r.Err(); p != nil {
		return nil, fromProblem(doc, p)
	}
	if format != wantFormat {
		switch {
		case wantFormat == FormatManifest && format == FormatPointer:
			return nil, invalid(doc, "format", format, "this is a pointer, not a manifest")
		case wantFormat == FormatPointer && format == FormatManifest:
			return nil, invalid(doc, "format", format, "this is a manifest, not a pointer")
		}
		return nil, invalid(doc, "format", format, "want %q", wantFormat)
	}
	newer, err := checkVersion(doc, version)
	if err != nil {
		return nil, err
	}
	r.SetLenient(newer)
	return r, nil
}

// fromProblem turns the strict reader's problem into this package's error.
func fromProblem(doc string, p *strictjson.Problem) *Error {
	return invalid(doc, p.Field, nil, "%s", p.Msg)
}

// readFiles reads a manifest's file list (required), with their column
// statistics when the document's version has them (stats: 1.2 or later).
func readFiles(r *strictjson.Reader, name string, stats bool) []File {
	objs := r.Objects(name, MaxFiles, "files")
	if objs == nil {
		return nil
	}
	files := make([]File, 0, len(objs))
	for _, o := range objs {
		known := []string{"path", "size", "rows", "checksum"}
		if stats {
			known = append(known, "columns")
		}
		o.Known(known...)
		f := File{
			Path:     o.Str("path", true),
			Size:     o.Int("size", 64),
			Rows:     o.Int("rows", 64),
			Checksum: o.Str("checksum", true),
		}
		if stats {
			f.Columns = readColumns(o)
		}
		files = append(files, f)
	}
	if r.Err() != nil {
		return nil
	}
	return files
}

// readHistory reads a pointer's history array (required).
func readHistory(r *strictjson.Reader, name string) []HistoryEntry {
	objs := r.Objects(name, MaxHistory, "entries")
	if objs == nil {
		return nil
	}
	out := make([]HistoryEntry, 0, len(objs))
	for _, o := range objs {
		o.Known("generation", "data_generation", "run_id", "committed_at", "rows")
		out = append(out, HistoryEntry{
			Generation:     o.Str("generation", true),
			DataGeneration: o.Str("data_generation", false),
			RunID:          o.Str("run_id", false),
			CommittedAt:    o.Time("committed_at"),
			Rows:           o.Int("rows", 64),
		})
	}
	if r.Err() != nil {
		return nil
	}
	return out
}
