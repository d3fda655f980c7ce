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
	cr := csv.NewReader(ctxReader{ctx: ctx, r: r})
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	nulls := opts.NullValues
	if nulls == nil {
		nulls = []string{""}
	}
	inferRows := opts.InferRows
	if inferRows <= 0 {
		inferRows = DefaultInferRows
	}
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: %s: line %d: %s", ErrBadInput, name, line, fmt.Sprintf(format, args...))
	}
	readErr := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%w: %s: %v", ErrBadInput, name, err)
		}
		return fmt.Errorf("staging: read %s: %w", name, err)
	}

	schema := opts.Schema
	fromGeneration := false
	if schema == nil {
		schema = s.opts.Schema
	}
	if schema == nil && s.schema != nil {
		schema = s.schema.arrow
		fromGeneration = true
	}
	fromText := false
	if schema == nil && s.opts.TextSchema != nil {
		schema = s.opts.TextSchema // the table's: no per-file guessing
		fromText = true
	}

	var header []string
	if !opts.NoHeader {
		h, err := cr.Read()
		if err == io.EOF {
			if schema == nil {
				return fmt.Errorf("%w: %s: empty input, no header", ErrBadInput, name)
			}
			return s.checkTextSchema("CSV "+name, schema)
		}
		if err != nil {
			return readErr(err)
		}
		header = slices.Clone(h)
		seen := map[string]bool{}
		for _, n := range header {
			if seen[n] {
				return bad(1, "column %q appears twice in the header", n)
			}
			seen[n] = true
		}
	} else if schema == nil {
		return fmt.Errorf("%w: %s: NoHeader needs a schema", ErrBadInput, name)
	}
	if fromText && header != nil && !headerFits(header, schema) {
		schema = nil // other columns: infer, and let Conform name the difference
	}

	// Buffer the rows used to infer a schema.
	var buffered []csvRecord
	if schema == nil {
		states := make([]inferState, len(header))
		for i, n := range header {
			states[i].name = n
		}
		for len(buffered) < inferRows {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return readErr(err)
			}
			line, _ := cr.FieldPos(0)
			for i, v := range rec {
				if !slices.Contains(nulls, v) {
					states[i].observeText(v)
				}
			}
			buffered = append(buffered, csvRecord{fields: slices.Clone(rec), line: line})
		}
		if len(buffered) == 0 {
			return nil // header only: no rows, nothing to check a schema against
		}
		fields := make([]arrow.Field, len(states))
		for i := range states {
			fields[i] = s.declared(states[i].field())
		}
		schema = arrow.NewSchema(fields, nil)
	}

	// Map input columns to schema fields.
	order := make([]int, schema.NumFields()) // input position -> field index
	if header == nil {
		for i := range order {
			order[i] = i
		}
	} else {
		headerErr := func() error {
			if fromGeneration {
				return fmt.Errorf("%w: CSV %s has the columns\n%s\nbut the generation has\n%s",
					ErrSchemaMismatch, name, strings.Join(header, ", "), schema)
			}
			return bad(1, "the header's columns\n%s\ndo not match the schema\n%s", strings.Join(header, ", "), schema)
		}
		if len(header) != schema.NumFields() {
			return headerErr()
		}
		for pos, n := range header {
			idx := schema.FieldIndices(n)
			if len(idx) != 1 {
				return headerErr()
			}
			order[pos] = idx[0]
		}
	}
	batch, err := s.newTextBatcher("CSV "+name, schema)
	if err != nil {
		return err
	}
	defer batch.release()
	cols := batch.cols
	add := func(rec []string, line int) error {
		if len(rec) != len(order) {
			return bad(line, "%d fields, want %d", len(rec), len(order))
		}
		for pos, v := range rec {
			c := cols[order[pos]]
			var err error
			if slices.Contains(nulls, v) {
				err = c.appendNull()
			} else {
				err = c.text(v)
			}
			if err != nil {
				return bad(line, "column %q: %v", c.field.Name, err)
			}
		}
		return batch.added()
	}
	for _, r := range buffered {
		if err := add(r.fields, r.line); err != nil {
			return err
		}
	}
	buffered = nil
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return readErr(err)
		}
		line, _ := cr.FieldPos(0)
		if err := add(rec, line); err != nil {
			return err
		}
	}
	return batch.flush()
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
