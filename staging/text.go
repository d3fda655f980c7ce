package staging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/textconv"
)

// DefaultInferRows is the number of rows read to infer a CSV or JSON Lines
// schema when none is given.
const DefaultInferRows = textconv.DefaultInferRows

// CSVOptions tune AddCSV. The zero value reads comma-separated values with
// a header line, treats empty fields as nulls and infers the schema from
// the first DefaultInferRows rows when no schema is known.
type CSVOptions struct {
	// Schema of the input. Without it, the generation's schema (from
	// Options.Schema or an earlier input) is used, else one is inferred.
	// The header's names must be the schema's field names, in any order.
	Schema *arrow.Schema
	// Comma is the field delimiter (default ',').
	Comma rune
	// NoHeader: the input has no header line; its columns are the schema's
	// fields in order (a schema must then be known).
	NoHeader bool
	// NullValues are the field values read as null (default: the empty
	// string). Set []string{} to have none.
	NullValues []string
	// InferRows is the number of rows read to infer a schema (default
	// DefaultInferRows). Inferred types: int64, float64, bool, date32,
	// timestamp[us] (UTC when the values carry a zone) and string; a later
	// row that does not fit is an error naming its line.
	InferRows int
}

// AddCSV converts CSV text to Parquet and adds it to the generation. name
// identifies the input in errors. A malformed row, a value that does not
// fit its column, or a null in a non-nullable column fails with
// ErrBadInput naming the input and the line; no row is ever skipped.
func (s *Stager) AddCSV(ctx context.Context, r io.Reader, name string, opts CSVOptions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if err := s.addCSV(ctx, r, name, opts); err != nil {
		return s.fail(err)
	}
	return nil
}

func (s *Stager) addCSV(ctx context.Context, r io.Reader, name string, opts CSVOptions) error {
	schema, fromGeneration, fromText := s.csvSchema(opts)
	err := textconv.CSV(ctx, r, name, textconv.Options{
		Schema: schema, Tentative: fromText, Types: s.opts.TextTypes,
		InferRows: opts.InferRows, Comma: opts.Comma, NoHeader: opts.NoHeader, NullValues: opts.NullValues,
	}, textSink{s: s, input: "CSV " + name})
	var he *textconv.HeaderError
	if fromGeneration && errors.As(err, &he) {
		return fmt.Errorf("%w: CSV %s has the columns\n%s\nbut the generation has\n%s",
			ErrSchemaMismatch, name, strings.Join(he.Header, ", "), schema)
	}
	return err
}

// csvSchema is the schema a CSV input is read with before its header is
// seen: the input's own, the Stager's, the generation's (fromGeneration)
// or the table's (fromText), or nil to infer one.
func (s *Stager) csvSchema(opts CSVOptions) (schema *arrow.Schema, fromGeneration, fromText bool) {
	switch {
	case opts.Schema != nil:
		return opts.Schema, false, false
	case s.opts.Schema != nil:
		return s.opts.Schema, false, false
	case s.schema != nil:
		return s.schema.Arrow, true, false
	case s.opts.TextSchema != nil:
		return s.opts.TextSchema, false, true // the table's: no per-file guessing
	}
	return nil, false, false
}

// AddJSONL converts JSON Lines (one JSON object per line) to Parquet and
// adds it to the generation. name identifies the input in errors.
//
// The schema is Options.Schema, else the generation's, else inferred from
// the first DefaultInferRows lines (int64, float64, bool, date32,
// timestamp[us] and string; a key seen only with null is a string). A line
// that is not one JSON object, a key not in the schema, a
// value of the wrong type, or a null in a non-nullable column fails with
// ErrBadInput naming the input and the line. Blank lines are skipped.
// Binary columns are base64 strings, as in Arrow's JSON reader.
//
// Nested values convert to nested columns: a JSON array to a list, a JSON
// object to a struct (inferred: the fields seen in the first lines, in
// name order; element and field types inferred the same way), or to a map with string keys when the schema says so. A value of
// another shape than its column's (an object for a list, a key that is
// not a field of the struct) fails with ErrBadInput.
func (s *Stager) AddJSONL(ctx context.Context, r io.Reader, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	schema := s.opts.Schema
	if schema == nil && s.schema != nil {
		schema = s.schema.Arrow
	}
	if schema == nil {
		schema = s.opts.TextSchema // the table's: no per-file guessing
	}
	opts := textconv.Options{Schema: schema, Types: s.opts.TextTypes}
	if err := textconv.JSONL(ctx, r, name, opts, textSink{s: s, input: "JSON Lines " + name}); err != nil {
		return s.fail(err)
	}
	return nil
}

// textSink writes the records of a text input into the generation.
type textSink struct {
	s     *Stager
	input string // names the input in errors, e.g. "CSV sales.csv"
}

// Schema checks the schema a text input is read with against the
// generation's before any row is converted.
func (t textSink) Schema(sc *arrow.Schema) error {
	c, err := t.s.canonOfRecordSchema(sc)
	if err != nil {
		return err
	}
	if err := t.s.setSchema(t.input, c); err != nil {
		if cv := asConversion(err); cv != nil {
			return t.s.acceptConverted(cv) // each record is converted as it is written
		}
		return err
	}
	return nil
}

func (t textSink) Write(rec arrow.RecordBatch) error { return t.s.writeRecord(t.input, rec) }
