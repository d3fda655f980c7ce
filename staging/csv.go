package staging

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

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

type csvRecord struct {
	fields []string
	line   int
}

func (s *Stager) addCSV(ctx context.Context, r io.Reader, name string, opts CSVOptions) error {
	in := newCSVInput(ctx, r, name, opts)
	schema, fromGeneration, fromText := s.csvSchema(opts)
	var header []string
	if !opts.NoHeader {
		var err error
		if header, err = in.header(); err == io.EOF {
			if schema == nil {
				return fmt.Errorf("%w: %s: empty input, no header", ErrBadInput, name)
			}
			return s.checkTextSchema("CSV "+name, schema)
		} else if err != nil {
			return err
		}
	} else if schema == nil {
		return fmt.Errorf("%w: %s: NoHeader needs a schema", ErrBadInput, name)
	}
	if fromText && header != nil && !headerFits(header, schema) {
		schema = nil // other columns: infer, and let Conform name the difference
	}
	var buffered []csvRecord
	if schema == nil {
		var err error
		if buffered, schema, err = s.inferCSV(in, header, opts.InferRows); err != nil || len(buffered) == 0 {
			return err // no error and no rows: header only, nothing to check a schema against
		}
	}
	order, err := in.columnOrder(header, schema, fromGeneration)
	if err != nil {
		return err
	}
	batch, err := s.newTextBatcher("CSV "+name, schema)
	if err != nil {
		return err
	}
	defer batch.release()
	for _, r := range buffered {
		if err := in.add(batch, order, r.fields, r.line); err != nil {
			return err
		}
	}
	buffered = nil
	in.cr.ReuseRecord = true
	for {
		rec, line, err := in.record()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := in.add(batch, order, rec, line); err != nil {
			return err
		}
	}
	return batch.flush()
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
		return s.schema.arrow, true, false
	case s.opts.TextSchema != nil:
		return s.opts.TextSchema, false, true // the table's: no per-file guessing
	}
	return nil, false, false
}

// csvInput is one CSV input being read.
type csvInput struct {
	ctx   context.Context
	cr    *csv.Reader
	name  string
	nulls []string // field values read as null
}

func newCSVInput(ctx context.Context, r io.Reader, name string, opts CSVOptions) *csvInput {
	in := &csvInput{ctx: ctx, cr: csv.NewReader(ctxReader{ctx: ctx, r: r}), name: name, nulls: opts.NullValues}
	if opts.Comma != 0 {
		in.cr.Comma = opts.Comma
	}
	if in.nulls == nil {
		in.nulls = []string{""}
	}
	return in
}

func (in *csvInput) bad(line int, format string, args ...any) error {
	return fmt.Errorf("%w: %s: line %d: %s", ErrBadInput, in.name, line, fmt.Sprintf(format, args...))
}

// record reads the next record and its line; io.EOF at the end.
func (in *csvInput) record() ([]string, int, error) {
	rec, err := in.cr.Read()
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	if err != nil {
		if in.ctx.Err() != nil {
			return nil, 0, in.ctx.Err()
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, 0, fmt.Errorf("%w: %s: %v", ErrBadInput, in.name, err)
		}
		return nil, 0, fmt.Errorf("staging: read %s: %w", in.name, err)
	}
	line, _ := in.cr.FieldPos(0)
	return rec, line, nil
}

// header reads the header line (io.EOF for an empty input); a column named
// twice is an error.
func (in *csvInput) header() ([]string, error) {
	h, _, err := in.record()
	if err != nil {
		return nil, err
	}
	header := slices.Clone(h)
	seen := map[string]bool{}
	for _, n := range header {
		if seen[n] {
			return nil, in.bad(1, "column %q appears twice in the header", n)
		}
		seen[n] = true
	}
	return header, nil
}

// inferCSV reads up to inferRows records (default DefaultInferRows) and
// infers the schema of the columns header names from them; it returns the
// records read, to be converted first.
func (s *Stager) inferCSV(in *csvInput, header []string, inferRows int) ([]csvRecord, *arrow.Schema, error) {
	if inferRows <= 0 {
		inferRows = DefaultInferRows
	}
	states := make([]inferState, len(header))
	for i, n := range header {
		states[i].name = n
	}
	var buffered []csvRecord
	for len(buffered) < inferRows {
		rec, line, err := in.record()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		for i, v := range rec {
			if !slices.Contains(in.nulls, v) {
				states[i].observeText(v)
			}
		}
		buffered = append(buffered, csvRecord{fields: slices.Clone(rec), line: line})
	}
	fields := make([]arrow.Field, len(states))
	for i := range states {
		fields[i] = s.declared(states[i].field())
	}
	return buffered, arrow.NewSchema(fields, nil), nil
}

// columnOrder maps each input column (by position) to its schema field:
// by name with a header, in order without one.
func (in *csvInput) columnOrder(header []string, schema *arrow.Schema, fromGeneration bool) ([]int, error) {
	order := make([]int, schema.NumFields()) // input position -> field index
	if header == nil {
		for i := range order {
			order[i] = i
		}
		return order, nil
	}
	headerErr := func() error {
		if fromGeneration {
			return fmt.Errorf("%w: CSV %s has the columns\n%s\nbut the generation has\n%s",
				ErrSchemaMismatch, in.name, strings.Join(header, ", "), schema)
		}
		return in.bad(1, "the header's columns\n%s\ndo not match the schema\n%s", strings.Join(header, ", "), schema)
	}
	if len(header) != schema.NumFields() {
		return nil, headerErr()
	}
	for pos, n := range header {
		idx := schema.FieldIndices(n)
		if len(idx) != 1 {
			return nil, headerErr()
		}
		order[pos] = idx[0]
	}
	return order, nil
}

// add converts one record (of line line) into the batch's columns.
func (in *csvInput) add(batch *textBatcher, order []int, rec []string, line int) error {
	if len(rec) != len(order) {
		return in.bad(line, "%d fields, want %d", len(rec), len(order))
	}
	for pos, v := range rec {
		c := batch.cols[order[pos]]
		var err error
		if slices.Contains(in.nulls, v) {
			err = c.appendNull()
		} else {
			err = c.text(v)
		}
		if err != nil {
			return in.bad(line, "column %q: %v", c.field.Name, err)
		}
	}
	return batch.added()
}

// checkTextSchema checks the schema a text input is read with against the
// generation's before any row is converted.
func (s *Stager) checkTextSchema(input string, sc *arrow.Schema) error {
	c, err := s.canonOfRecordSchema(sc)
	if err != nil {
		return err
	}
	if err := s.setSchema(input, c); err != nil {
		if cv := asConversion(err); cv != nil {
			return s.acceptConverted(cv) // each record is converted as it is written
		}
		return err
	}
	return nil
}

// declared applies Options.TextTypes to an inferred text column.
func (s *Stager) declared(f arrow.Field) arrow.Field {
	if t, ok := s.opts.TextTypes[f.Name]; ok {
		f.Type = t
	}
	return f
}
