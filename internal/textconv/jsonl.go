package textconv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/ctxio"
)

// JSONL converts JSON Lines (one JSON object per line) to Arrow records
// and hands them to sink; name identifies the input in errors.
//
// The schema is opts.Schema, else inferred from the first
// DefaultInferRows lines (int64, float64, bool, date32, timestamp[us] and
// string; a key seen only with null is a string). A line that is not one
// JSON object, a value of the wrong type, or a null in a non-nullable
// column fails with ErrBadInput naming the input and the line. Blank
// lines are skipped. Binary columns are base64 strings, as in Arrow's
// JSON reader.
//
// With a schema given, the input's columns are its keys, as a CSV input's
// are its header's names: a key not in the schema is a *ColumnsError
// (Extra) at its line, and a column of the schema that no line of a
// non-empty input has as a key (not even with null) is a *ColumnsError
// (Missing) once the input is read, after every row went to the sink. A
// key absent from some lines only is null there.
//
// Nested values convert to nested columns: a JSON array to a list, a JSON
// object to a struct (inferred: the fields seen in the first lines, in
// name order; element and field types inferred the same way), or to a
// map with string keys when the schema says so. A value of another shape
// than its column's (an object for a list, a key that is not a field of
// the struct) fails with ErrBadInput.
func JSONL(ctx context.Context, r io.Reader, name string, opts Options, sink Sink) error {
	in := &jsonlInput{ctx: ctx, br: bufio.NewReaderSize(ctxio.Reader(ctx, r), 1<<20), name: name}
	schema := opts.Schema
	var buffered []jsonRow
	if schema == nil {
		var err error
		if buffered, schema, err = in.infer(opts); err != nil || len(buffered) == 0 {
			return err // no error and no rows: nothing to check a schema against
		}
	}
	batch, err := newBatcher(schema, sink)
	if err != nil {
		return err
	}
	defer batch.release()
	set := make([]bool, len(batch.cols))
	seen := make([]bool, len(batch.cols)) // a column some line has as a key
	rows := 0
	for i := range buffered {
		if err := in.add(batch, set, seen, &buffered[i]); err != nil {
			return err
		}
		rows++
	}
	buffered = nil
	var row jsonRow
	for {
		err := in.next(&row)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := in.add(batch, set, seen, &row); err != nil {
			return err
		}
		rows++
	}
	if err := batch.flush(); err != nil {
		return err
	}
	if rows == 0 {
		return nil // no line: nothing says which columns the input has
	}
	var missing []string
	for i, f := range schema.Fields() {
		if !seen[i] {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		return &ColumnsError{Name: name, Missing: missing}
	}
	return nil
}

// ColumnsError: a JSON Lines input read with a given schema whose keys are
// not the schema's columns. It is ErrBadInput; the caller, which knows
// where the schema came from (a table's, a generation's), may say more.
type ColumnsError struct {
	// Name names the input.
	Name string
	// Missing are the schema's columns that no line has as a key.
	Missing []string
	// Extra is a key the schema lacks, first seen on line Line (then the
	// input was read no further).
	Extra string
	Line  int
	// Value is the Extra key's value on Line (its JSON kind types it).
	Value any
}

func (e *ColumnsError) Error() string {
	if e.Extra != "" {
		return fmt.Sprintf("%v: %s: line %d: key %q is not in the schema", ErrBadInput, e.Name, e.Line, e.Extra)
	}
	q := make([]string, len(e.Missing))
	for i, n := range e.Missing {
		q[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("%v: %s: column %s of the schema is a key of no line", ErrBadInput, e.Name, strings.Join(q, ", "))
}

func (e *ColumnsError) Unwrap() error { return ErrBadInput }

// maxJSONLine bounds one line of JSON Lines input.
const maxJSONLine = 64 << 20

type jsonRow struct {
	keys   []string
	values []any
	line   int
}

// parseJSONObject decodes one line holding one flat JSON object.
func parseJSONObject(line []byte, row *jsonRow) error {
	row.keys, row.values = row.keys[:0], row.values[:0]
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("want a JSON object, got %v", t)
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		k := kt.(string) // object keys are always strings
		for _, seen := range row.keys {
			if seen == k {
				return fmt.Errorf("key %q appears twice", k)
			}
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		row.keys = append(row.keys, k)
		row.values = append(row.values, v)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// jsonlInput is one JSON Lines input being read.
type jsonlInput struct {
	ctx  context.Context
	br   *bufio.Reader
	name string
	line int // of the last line read
}

func (in *jsonlInput) bad(line int, format string, args ...any) error {
	return fmt.Errorf("%w: %s: line %d: %s", ErrBadInput, in.name, line, fmt.Sprintf(format, args...))
}

// next reads the next non-blank line's object into row, or returns io.EOF.
func (in *jsonlInput) next(row *jsonRow) error {
	for {
		line, err := readLine(in.br)
		if err != nil {
			if in.ctx.Err() != nil {
				return in.ctx.Err()
			}
			if err == io.EOF {
				return io.EOF
			}
			if errors.Is(err, errLineTooLong) {
				return in.bad(in.line+1, "%v", err)
			}
			return fmt.Errorf("staging: read %s: %w", in.name, err)
		}
		in.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := parseJSONObject(line, row); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				// The line stops in the middle of a value: cut short,
				// as by a failed or partial export.
				return in.bad(in.line, "truncated: the line ends in the middle of a JSON value (an incomplete export?)")
			}
			return in.bad(in.line, "%v", err)
		}
		row.line = in.line
		return nil
	}
}

// infer reads up to DefaultInferRows rows and infers a schema from them
// (columns in the order their keys first appear); it returns the rows
// read, to be converted first.
func (in *jsonlInput) infer(opts Options) ([]jsonRow, *arrow.Schema, error) {
	inf := jsonlInference{byName: map[string]*inferState{}, kinds: map[string]kindSeen{}}
	var buffered []jsonRow
	for len(buffered) < DefaultInferRows {
		var row jsonRow
		err := in.next(&row)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if err := inf.observe(in, &row); err != nil {
			return nil, nil, err
		}
		buffered = append(buffered, row)
	}
	fields := make([]arrow.Field, len(inf.states))
	for i, st := range inf.states {
		fields[i] = opts.declared(st.field())
	}
	return buffered, arrow.NewSchema(fields, nil), nil
}

// jsonlInference is the state of a JSON Lines input's schema inference.
type jsonlInference struct {
	states []*inferState          // in the order keys first appear
	byName map[string]*inferState // by key
	kinds  map[string]kindSeen    // the JSON kind each key first had
}

// kindSeen is the JSON kind of a key's first non-null value, and its line.
type kindSeen struct {
	kind string
	line int
}

// observe adds a row's values to the inference; a key whose values are of
// two JSON kinds is an error naming both lines.
func (inf *jsonlInference) observe(in *jsonlInput, row *jsonRow) error {
	for i, k := range row.keys {
		st := inf.byName[k]
		if st == nil {
			st = &inferState{name: k}
			inf.byName[k] = st
			inf.states = append(inf.states, st)
		}
		var kind string
		switch v := row.values[i].(type) {
		case nil:
			continue
		case bool:
			st.seen = true
			st.bools++
			kind = "boolean"
		case json.Number:
			st.seen = true
			if _, err := v.Int64(); err == nil {
				st.ints++
			} else {
				st.floats++
			}
			kind = "number"
		case string:
			st.observeString(v)
			kind = "string"
		case []any:
			st.observeJSON(v)
			kind = "array"
		case map[string]any:
			st.observeJSON(v)
			kind = "object"
		default:
			return in.bad(row.line, "key %q: unexpected JSON value %T", k, v)
		}
		prev, ok := inf.kinds[k]
		if !ok {
			inf.kinds[k] = kindSeen{kind, row.line}
		} else if prev.kind != kind {
			return in.bad(row.line, "key %q is a %s here but a %s on line %d", k, kind, prev.kind, prev.line)
		}
	}
	return nil
}

// add converts one row into the batch's columns: keys by name, a missing
// key null. set is scratch space of one flag per column; seen flags the
// columns the row has as keys.
func (in *jsonlInput) add(batch *batcher, set, seen []bool, row *jsonRow) error {
	clear(set)
	cols := batch.cols
	for i, k := range row.keys {
		idx := batch.schema.FieldIndices(k)
		if len(idx) != 1 {
			return &ColumnsError{Name: in.name, Extra: k, Line: row.line, Value: row.values[i]}
		}
		c := cols[idx[0]]
		set[idx[0]] = true
		seen[idx[0]] = true
		var err error
		if row.values[i] == nil {
			err = c.appendNull()
		} else {
			err = c.json(row.values[i])
		}
		if err != nil {
			return in.bad(row.line, "key %q: %v", k, err)
		}
	}
	for i, c := range cols {
		if !set[i] {
			if err := c.appendNull(); err != nil {
				return in.bad(row.line, "key %q missing: %v", c.field.Name, err)
			}
		}
	}
	return batch.added()
}

var errLineTooLong = fmt.Errorf("line longer than %d bytes", maxJSONLine)

// readLine returns the next line without its end of line; the last line
// need not end with a newline.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxJSONLine {
			return nil, errLineTooLong
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		case err != nil:
			return nil, err
		}
		return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), nil
	}
}
