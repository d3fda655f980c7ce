package staging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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
	types := s.opts.TextTypes
	if fromText {
		// A header that does not fit the table's schema has its types
		// inferred, the table's columns read as the table's types (as a
		// JSON Lines input's are): what differs is then only the columns,
		// which the sink names (or fills: FillMissingNullable).
		types = map[string]arrow.DataType{}
		for _, f := range schema.Fields() {
			types[f.Name] = f.Type
		}
		for n, t := range s.opts.TextTypes {
			types[n] = t
		}
	}
	err := textconv.CSV(ctx, r, name, textconv.Options{
		Schema: schema, Tentative: fromText, Types: types,
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
// that is not one JSON object, a value of the wrong type, or a null in a
// non-nullable column fails with ErrBadInput naming the input and the
// line. Blank lines are skipped.
//
// An input's columns are its keys, as a CSV input's are its header's
// names: a key that the schema lacks, or a column of the schema that no
// line has as a key (not even with null), is refused as a CSV input
// without that column is (with Options.Conform, a table's: by its verdict
// and with its message; else ErrSchemaMismatch against a generation's
// schema, ErrBadInput against a given one). A key absent from some lines
// only is null there.
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
	if err := s.addJSONL(ctx, r, name); err != nil {
		return s.fail(err)
	}
	return nil
}

func (s *Stager) addJSONL(ctx context.Context, r io.Reader, name string) error {
	schema, fromGeneration, fromText := s.opts.Schema, false, false
	switch {
	case schema != nil:
	case s.schema != nil:
		schema, fromGeneration = s.schema.Arrow, true
	case s.opts.TextSchema != nil:
		schema, fromText = s.opts.TextSchema, true // the table's: no per-file guessing
	}
	input := "JSON Lines " + name
	opts := textconv.Options{Schema: schema, Types: s.opts.TextTypes}
	err := textconv.JSONL(ctx, r, name, opts, textSink{s: s, input: input})
	var ce *textconv.ColumnsError
	if !errors.As(err, &ce) {
		return err
	}
	// The input's columns are not the schema's: the table decides, as
	// for a CSV input whose header names the same columns (a key the
	// generation lacks is not asked about: the table might add it, and
	// the generation's files could not hold it).
	if s.opts.Conform != nil && (fromText || fromGeneration && ce.Extra == "") {
		c, cerr := s.canonOfRecordSchema(keysSchema(schema, ce))
		if cerr != nil {
			return errors.Join(err, cerr)
		}
		if _, cerr := s.conform(input, c); cerr != nil {
			return cerr
		}
		if ce.Extra == "" {
			return nil // accepted as it is: the missing columns are null (TableOptions.FillMissingNullable)
		}
	}
	if fromGeneration {
		if ce.Extra != "" {
			return fmt.Errorf("%w: %s: line %d has the key %q, but the generation has the columns\n%s", ErrSchemaMismatch, input, ce.Line, ce.Extra, schema)
		}
		return fmt.Errorf("%w: %s has no line with the key %s, but the generation has the columns\n%s", ErrSchemaMismatch, input, strings.Join(ce.Missing, ", "), schema)
	}
	return err
}

// keysSchema is the schema of a JSON Lines input whose keys are not the
// schema it was read with: without the missing columns, with the extra
// key (typed by its JSON value's kind, as inference would).
func keysSchema(schema *arrow.Schema, ce *textconv.ColumnsError) *arrow.Schema {
	var fs []arrow.Field
	for _, f := range schema.Fields() {
		if !slices.Contains(ce.Missing, f.Name) {
			fs = append(fs, f)
		}
	}
	if ce.Extra != "" {
		var t arrow.DataType = arrow.BinaryTypes.String
		switch v := ce.Value.(type) {
		case nil:
			t = arrow.Null
		case bool:
			t = arrow.FixedWidthTypes.Boolean
		case json.Number:
			if _, err := v.Int64(); err == nil {
				t = arrow.PrimitiveTypes.Int64
			} else {
				t = arrow.PrimitiveTypes.Float64
			}
		}
		fs = append(fs, arrow.Field{Name: ce.Extra, Type: t, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
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
