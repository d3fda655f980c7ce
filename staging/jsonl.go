package staging

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
)

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
	if err := s.addJSONL(ctx, r, name); err != nil {
		return s.fail(err)
	}
	return nil
}

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

func (s *Stager) addJSONL(ctx context.Context, r io.Reader, name string) error {
	br := bufio.NewReaderSize(ctxReader{ctx: ctx, r: r}, 1<<20)
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: %s: line %d: %s", ErrBadInput, name, line, fmt.Sprintf(format, args...))
	}
	lineNo := 0
	// next returns the next non-blank line's object, or io.EOF.
	next := func(row *jsonRow) error {
		for {
			line, err := readLine(br)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err == io.EOF {
					return io.EOF
				}
				if errors.Is(err, errLineTooLong) {
					return bad(lineNo+1, "%v", err)
				}
				return fmt.Errorf("staging: read %s: %w", name, err)
			}
			lineNo++
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if err := parseJSONObject(line, row); err != nil {
				if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
					// The line stops in the middle of a value: cut short,
					// as by a failed or partial export.
					return bad(lineNo, "truncated: the line ends in the middle of a JSON value (an incomplete export?)")
				}
				return bad(lineNo, "%v", err)
			}
			row.line = lineNo
			return nil
		}
	}

	schema := s.opts.Schema
	if schema == nil && s.schema != nil {
		schema = s.schema.arrow
	}
	if schema == nil {
		schema = s.opts.TextSchema // the table's: no per-file guessing
	}
	var buffered []jsonRow
	if schema == nil {
		var states []*inferState
		byName := map[string]*inferState{}
		type kindSeen struct {
			kind string
			line int
		}
		kinds := map[string]kindSeen{}
		conflict := func(k, kind string, line int) error {
			prev, ok := kinds[k]
			if !ok {
				kinds[k] = kindSeen{kind, line}
				return nil
			}
			if prev.kind != kind {
				return bad(line, "key %q is a %s here but a %s on line %d", k, kind, prev.kind, prev.line)
			}
			return nil
		}
		for len(buffered) < DefaultInferRows {
			var row jsonRow
			err := next(&row)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			for i, k := range row.keys {
				st := byName[k]
				if st == nil {
					st = &inferState{name: k}
					byName[k] = st
					states = append(states, st)
				}
				var err error
				switch v := row.values[i].(type) {
				case nil:
				case bool:
					st.seen = true
					st.bools++
					err = conflict(k, "boolean", row.line)
				case json.Number:
					st.seen = true
					if _, err := v.Int64(); err == nil {
						st.ints++
					} else {
						st.floats++
					}
					err = conflict(k, "number", row.line)
				case string:
					st.observeString(v)
					err = conflict(k, "string", row.line)
				case []any:
					st.observeJSON(v)
					err = conflict(k, "array", row.line)
				case map[string]any:
					st.observeJSON(v)
					err = conflict(k, "object", row.line)
				default:
					return bad(row.line, "key %q: unexpected JSON value %T", k, v)
				}
				if err != nil {
					return err
				}
			}
			buffered = append(buffered, row)
		}
		if len(buffered) == 0 {
			return nil // no rows: nothing to check a schema against
		}
		fields := make([]arrow.Field, len(states))
		for i, st := range states {
			fields[i] = s.declared(st.field())
		}
		schema = arrow.NewSchema(fields, nil)
	}
	batch, err := s.newTextBatcher("JSON Lines "+name, schema)
	if err != nil {
		return err
	}
	defer batch.release()
	cols := batch.cols
	set := make([]bool, len(cols))
	add := func(row *jsonRow) error {
		clear(set)
		for i, k := range row.keys {
			idx := schema.FieldIndices(k)
			if len(idx) != 1 {
				return bad(row.line, "key %q is not in the schema", k)
			}
			c := cols[idx[0]]
			set[idx[0]] = true
			var err error
			if row.values[i] == nil {
				err = c.appendNull()
			} else {
				err = c.json(row.values[i])
			}
			if err != nil {
				return bad(row.line, "key %q: %v", k, err)
			}
		}
		for i, c := range cols {
			if !set[i] {
				if err := c.appendNull(); err != nil {
					return bad(row.line, "key %q missing: %v", c.field.Name, err)
				}
			}
		}
		return batch.added()
	}
	for i := range buffered {
		if err := add(&buffered[i]); err != nil {
			return err
		}
	}
	buffered = nil
	var row jsonRow
	for {
		err := next(&row)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := add(&row); err != nil {
			return err
		}
	}
	return batch.flush()
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
