package manifest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/strictjson"
)

// StatsVersion is the manifest format version written for a manifest that
// records column statistics (File.Columns): version 1.2 adds the optional
// field files[].columns to 1.1, which a reader of 1.0 or 1.1 ignores (a
// higher minor version). A manifest without statistics is written as 1.0
// (1.1 with a kind).
const StatsVersion = "1.2"

// Bound types of ColumnStats.Type: what the column's values are, and so how
// Min and Max read. A column of another type (floating point, decimal,
// binary, nanosecond or INT96 timestamps, unsigned integers) has no bounds.
const (
	BoundBoolean   = "boolean"   // "false" or "true"
	BoundInt       = "int"       // a signed 32-bit integer, in decimal
	BoundLong      = "long"      // a signed 64-bit integer, in decimal
	BoundDate      = "date"      // days since 1970-01-01, a 32-bit integer in decimal
	BoundTimestamp = "timestamp" // microseconds since 1970-01-01 00:00 (UTC for an instant), a 64-bit integer in decimal
	BoundString    = "string"    // UTF-8 text, compared byte by byte (code point order)
)

// Limits of column statistics.
const (
	// MaxStatsColumns bounds File.Columns.
	MaxStatsColumns = 10_000
	// MaxColumnNameBytes bounds ColumnStats.Name.
	MaxColumnNameBytes = 1024
	// MaxBoundBytes bounds ColumnStats.Min and Max: a string bound longer
	// than that is not recorded (writers truncate string bounds to
	// StringBoundRunes code points).
	MaxBoundBytes = 256
	// StringBoundRunes is how many code points of a string bound a writer
	// keeps (Java Iceberg's default metrics mode, truncate(16)).
	StringBoundRunes = 16
)

// ColumnStats are the statistics of one flat top-level column of a data
// file, as the file's Parquet footer gives them (version 1.2): what a
// publisher of the table's views needs for each file without reading its
// footer again. See the package documentation for their rules.
type ColumnStats struct {
	Name   string // the column's name (the footer's top-level field)
	Size   int64  // compressed bytes of the column's chunks
	Values int64  // values, nulls included
	Nulls  int64  // null values; -1 when unknown (omitted in the document)
	// Type is the bound type of Min and Max (BoundInt, ...), "" when the
	// file has no bounds for the column.
	Type string
	// Min and Max bound the column's non-null values: Min <= every value
	// <= Max in the order of Type. Either is "" when unknown (a string
	// bound is never empty: the empty string is a lower bound of
	// anything, so it is omitted). They need not be values of the column:
	// a string bound may be a truncated prefix (Min) or a prefix with its
	// last code point incremented (Max).
	Min, Max string
}

// LimitStats removes the column statistics of every file when they would
// make the manifest larger than budget bytes (their encoded size,
// estimated): a publisher then reads those files' footers instead. Stagers
// call it before handing the content over.
func (c *Content) LimitStats(budget int) {
	n := 0
	for _, f := range c.Files {
		for _, s := range f.Columns {
			n += 96 + len(s.Name) + len(s.Min) + len(s.Max)
		}
	}
	if n <= budget {
		return
	}
	for i := range c.Files {
		c.Files[i].Columns = nil
	}
}

// StatsBudget is the share of a manifest that column statistics may take
// (Content.LimitStats): a quarter of MaxDocumentBytes.
const StatsBudget = MaxDocumentBytes / 4

// HasStats reports whether any file of c records column statistics.
func (c *Content) HasStats() bool {
	for _, f := range c.Files {
		if f.Columns != nil {
			return true
		}
	}
	return false
}

// Validate reports whether s obeys the rules of a manifest's column
// statistics, as an error matching ErrInvalid.
func (s *ColumnStats) Validate() error {
	if err := s.validate("manifest", "column"); err != nil {
		return err
	}
	return nil
}

func (s *ColumnStats) validate(doc, field string) *Error {
	switch {
	case s.Name == "":
		return invalid(doc, field+".name", nil, "empty")
	case len(s.Name) > MaxColumnNameBytes:
		return invalid(doc, field+".name", nil, "longer than %d bytes", MaxColumnNameBytes)
	case !utf8.ValidString(s.Name):
		return invalid(doc, field+".name", nil, "not valid UTF-8")
	case s.Size < 0:
		return invalid(doc, field+".size", s.Size, "negative")
	case s.Values < 0:
		return invalid(doc, field+".values", s.Values, "negative")
	case s.Nulls < -1:
		return invalid(doc, field+".nulls", s.Nulls, "negative")
	case s.Nulls > s.Values:
		return invalid(doc, field+".nulls", s.Nulls, "more than the %d values", s.Values)
	}
	if s.Type == "" {
		if s.Min != "" || s.Max != "" {
			return invalid(doc, field+".type", nil, "missing, but the column has bounds")
		}
		return nil
	}
	lo, hi, ok := boundKeys(s.Type, s.Min, s.Max)
	if !ok {
		if !knownBound(s.Type) {
			return invalid(doc, field+".type", s.Type, "not a bound type (boolean, int, long, date, timestamp, string)")
		}
		for _, b := range []struct{ name, v string }{{"min", s.Min}, {"max", s.Max}} {
			if _, ok := boundKey(s.Type, b.v); !ok {
				return invalid(doc, field+"."+b.name, b.v, "not a %s bound", s.Type)
			}
		}
	}
	if s.Min != "" && s.Max != "" && hi.less(lo) {
		return invalid(doc, field+".min", s.Min, "greater than max %s", show(s.Max))
	}
	return nil
}

func knownBound(t string) bool {
	switch t {
	case BoundBoolean, BoundInt, BoundLong, BoundDate, BoundTimestamp, BoundString:
		return true
	}
	return false
}

// key orders the bounds of one type.
type key struct {
	n int64
	s string
}

func (k key) less(o key) bool {
	if k.s != o.s {
		return k.s < o.s
	}
	return k.n < o.n
}

func boundKeys(t, min, max string) (lo, hi key, ok bool) {
	lo, ok1 := boundKey(t, min)
	hi, ok2 := boundKey(t, max)
	return lo, hi, ok1 && ok2 && knownBound(t)
}

// boundKey checks one bound ("" is an absent one) of type t.
func boundKey(t, v string) (key, bool) {
	if v == "" {
		return key{}, true
	}
	switch t {
	case BoundBoolean:
		switch v {
		case "false":
			return key{n: 0}, true
		case "true":
			return key{n: 1}, true
		}
		return key{}, false
	case BoundInt, BoundDate, BoundLong, BoundTimestamp:
		bits := 64
		if t == BoundInt || t == BoundDate {
			bits = 32
		}
		n, err := strconv.ParseInt(v, 10, bits)
		if err != nil || strconv.FormatInt(n, 10) != v {
			return key{}, false // not canonical decimal ("+1", "01")
		}
		return key{n: n}, true
	case BoundString:
		if len(v) > MaxBoundBytes || !utf8.ValidString(v) {
			return key{}, false
		}
		return key{s: v}, true
	}
	return key{}, false
}

// validateColumns checks a file's statistics.
func validateColumns(doc, field string, cols []ColumnStats) *Error {
	if len(cols) > MaxStatsColumns {
		return invalid(doc, field, nil, "%d columns, at most %d allowed", len(cols), MaxStatsColumns)
	}
	seen := make(map[string]int, len(cols))
	for i := range cols {
		f := fmt.Sprintf("%s[%d]", field, i)
		if err := cols[i].validate(doc, f); err != nil {
			return err
		}
		if j, dup := seen[cols[i].Name]; dup {
			return invalid(doc, f+".name", cols[i].Name, "duplicates %s[%d].name", field, j)
		}
		seen[cols[i].Name] = i
	}
	return nil
}

// writeColumns writes a file's statistics (after its other fields).
func (w *objWriter) writeColumns(cols []ColumnStats) {
	w.buf.WriteString(", \"columns\": ")
	w.writeColumnsArray(cols)
}

// EncodeColumns returns a file's column statistics as the JSON array
// that a manifest's files[].columns holds, for the one other document that
// records a file list before its manifest exists (swap's staged record).
func EncodeColumns(cols []ColumnStats) []byte {
	w := newObjWriter()
	w.buf.Reset()
	w.writeColumnsArray(cols)
	return bytes.Clone(w.buf.Bytes())
}

// DecodeColumns parses and validates what EncodeColumns wrote, as strictly
// as Decode reads files[].columns. Errors are *Error (matching ErrInvalid)
// naming doc and, as the JSON path of the array, field.
func DecodeColumns(doc, field string, data []byte) ([]ColumnStats, error) {
	wrapped := make([]byte, 0, len(data)+13)
	wrapped = append(append(append(wrapped, `{"columns": `...), data...), '}')
	top, p := strictjson.Parse(wrapped, strictjson.Limits{MaxBytes: MaxDocumentBytes + 13, MaxDepth: maxDepth})
	if p != nil {
		return nil, invalid(doc, field, nil, "%s", p.Msg)
	}
	r := strictjson.NewReader(top, StatsVersion)
	cols := readColumns(r)
	if p := r.Err(); p != nil {
		return nil, invalid(doc, field+strings.TrimPrefix(p.Field, "columns"), nil, "%s", p.Msg)
	}
	if cols == nil {
		cols = []ColumnStats{}
	}
	if err := validateColumns(doc, field, cols); err != nil {
		return nil, err
	}
	return cols, nil
}

// writeColumnsArray writes statistics as a JSON array.
func (w *objWriter) writeColumnsArray(cols []ColumnStats) {
	w.buf.WriteString("[")
	for i, s := range cols {
		if i > 0 {
			w.buf.WriteString(", ")
		}
		w.buf.WriteString("{\"name\": ")
		w.quote(s.Name)
		w.buf.WriteString(", \"size\": ")
		w.buf.WriteString(strconv.FormatInt(s.Size, 10))
		w.buf.WriteString(", \"values\": ")
		w.buf.WriteString(strconv.FormatInt(s.Values, 10))
		if s.Nulls >= 0 {
			w.buf.WriteString(", \"nulls\": ")
			w.buf.WriteString(strconv.FormatInt(s.Nulls, 10))
		}
		if s.Type != "" {
			w.buf.WriteString(", \"type\": ")
			w.quote(s.Type)
		}
		if s.Min != "" {
			w.buf.WriteString(", \"min\": ")
			w.quote(s.Min)
		}
		if s.Max != "" {
			w.buf.WriteString(", \"max\": ")
			w.quote(s.Max)
		}
		w.buf.WriteString("}")
	}
	w.buf.WriteString("]")
}

// readColumns reads a file's optional statistics: nil when absent, a
// non-nil slice (perhaps empty) when present.
func readColumns(o *strictjson.Reader) []ColumnStats {
	if !o.Has("columns") {
		return nil
	}
	objs := o.Objects("columns", MaxStatsColumns, "columns")
	if objs == nil {
		return nil
	}
	cols := make([]ColumnStats, 0, len(objs))
	for _, c := range objs {
		c.Known("name", "size", "values", "nulls", "type", "min", "max")
		s := ColumnStats{
			Name:   c.Str("name", true),
			Size:   c.Int("size", 64),
			Values: c.Int("values", 64),
			Nulls:  -1,
			Type:   c.Str("type", false),
			Min:    c.Str("min", false),
			Max:    c.Str("max", false),
		}
		if c.Has("nulls") {
			s.Nulls = c.Int("nulls", 64)
			if c.Err() == nil && s.Nulls < 0 {
				c.Fail("nulls", "negative")
			}
		}
		for _, b := range []struct{ name, v string }{{"min", s.Min}, {"max", s.Max}} {
			if c.Has(b.name) && c.Err() == nil && b.v == "" {
				c.Fail(b.name, "empty (omit an unknown bound)")
			}
		}
		cols = append(cols, s)
	}
	if o.Err() != nil {
		return nil
	}
	return cols
}
