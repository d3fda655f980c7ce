package textconv

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/ctxio"
)

// CSV converts CSV text to Arrow records and hands them to sink; name
// identifies the input in errors. The schema is opts.Schema (the header's
// names must be its field names, in any order, or a HeaderError), else
// one inferred from the first opts.InferRows rows. A malformed row, a
// value that does not fit its column, or a null in a non-nullable column
// fails with ErrBadInput naming the input and the line; no row is ever
// skipped. An input of a header only, or of nothing with a schema, hands
// sink its schema and no record.
func CSV(ctx context.Context, r io.Reader, name string, opts Options, sink Sink) error {
	in := newCSVInput(ctx, r, name, opts)
	schema := opts.Schema
	var header []string
	if !opts.NoHeader {
		var err error
		if header, err = in.header(); err == io.EOF {
			if schema == nil {
				return fmt.Errorf("%w: %s: empty input, no header", ErrBadInput, name)
			}
			return sink.Schema(schema)
		} else if err != nil {
			return err
		}
	} else if schema == nil {
		return fmt.Errorf("%w: %s: NoHeader needs a schema", ErrBadInput, name)
	}
	if opts.Tentative && schema != nil && header != nil && !headerFits(header, schema) {
		schema = nil // other columns: infer, and let the sink name the difference
	}
	var buffered []csvRecord
	if schema == nil {
		var err error
		if buffered, schema, err = in.infer(header, opts); err != nil || len(buffered) == 0 {
			return err // no error and no rows: header only, nothing to check a schema against
		}
	}
	order, err := in.columnOrder(header, schema)
	if err != nil {
		return err
	}
	batch, err := newBatcher(schema, sink)
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

type csvRecord struct {
	fields []string
	line   int
}

// csvInput is one CSV input being read.
type csvInput struct {
	ctx   context.Context
	cr    *csv.Reader
	name  string
	nulls []string // field values read as null
}

func newCSVInput(ctx context.Context, r io.Reader, name string, opts Options) *csvInput {
	in := &csvInput{ctx: ctx, cr: csv.NewReader(ctxio.Reader(ctx, r)), name: name, nulls: opts.NullValues}
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

// infer reads up to opts.InferRows records (default DefaultInferRows) and
// infers the schema of the columns header names from them; it returns the
// records read, to be converted first.
func (in *csvInput) infer(header []string, opts Options) ([]csvRecord, *arrow.Schema, error) {
	inferRows := opts.InferRows
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
		fields[i] = opts.declared(states[i].field())
	}
	return buffered, arrow.NewSchema(fields, nil), nil
}

// columnOrder maps each input column (by position) to its schema field:
// by name with a header, in order without one.
func (in *csvInput) columnOrder(header []string, schema *arrow.Schema) ([]int, error) {
	order := make([]int, schema.NumFields()) // input position -> field index
	if header == nil {
		for i := range order {
			order[i] = i
		}
		return order, nil
	}
	if len(header) != schema.NumFields() {
		return nil, &HeaderError{Name: in.name, Header: header, Schema: schema}
	}
	for pos, n := range header {
		idx := schema.FieldIndices(n)
		if len(idx) != 1 {
			return nil, &HeaderError{Name: in.name, Header: header, Schema: schema}
		}
		order[pos] = idx[0]
	}
	return order, nil
}

// HeaderError: the header of a CSV input does not name the columns of the
// schema it is read with. It is ErrBadInput.
type HeaderError struct {
	Name   string
	Header []string
	Schema *arrow.Schema
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("%v: %s: line 1: the header's columns\n%s\ndo not match the schema\n%s", ErrBadInput, e.Name, strings.Join(e.Header, ", "), e.Schema)
}

func (e *HeaderError) Unwrap() error { return ErrBadInput }

// headerFits reports whether a CSV header names exactly the schema's
// fields, in any order.
func headerFits(header []string, s *arrow.Schema) bool {
	if len(header) != s.NumFields() {
		return false
	}
	for _, n := range header {
		if len(s.FieldIndices(n)) != 1 {
			return false
		}
	}
	return true
}

// add converts one record (of line line) into the batch's columns.
func (in *csvInput) add(batch *batcher, order []int, rec []string, line int) error {
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
