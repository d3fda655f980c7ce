package textconv

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// recordSink checks the Sink protocol: the schema once, before any
// record, and every record of that schema.
type recordSink struct {
	t      *testing.T
	schema *arrow.Schema
	rows   int64
}

func (s *recordSink) Schema(sc *arrow.Schema) error {
	if s.schema != nil {
		s.t.Fatalf("Schema called twice: %s, then %s", s.schema, sc)
	}
	s.schema = sc
	return nil
}

func (s *recordSink) Write(rec arrow.RecordBatch) error {
	if s.schema == nil || !rec.Schema().Equal(s.schema) {
		s.t.Fatalf("record of schema %s, sink given %v", rec.Schema(), s.schema)
	}
	if rec.NumRows() > textBatch || rec.NumRows() == 0 && rec.NumCols() > 0 { // "{}" has no columns: no rows either
		s.t.Fatalf("record of %d rows", rec.NumRows())
	}
	s.rows += rec.NumRows()
	return nil
}

// checkConverted: an input either converts or fails with one of the
// documented errors.
func checkConverted(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrBadInput) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("undocumented error: %v", err)
	}
}

var fuzzSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "b", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "c", Type: arrow.FixedWidthTypes.Date32},
}, nil)

// FuzzCSV: the CSV parser never panics, and hands its sink records of the
// schema it announced.
func FuzzCSV(f *testing.F) {
	for _, seed := range []string{"a,b,c\n1,x,2026-11-29\n,,\n", "a;c\n007;2026-02-30\n", "c,a\n2026-11-29,9223372036854775808\n\"x"} {
		f.Add([]byte(seed), uint8(0))
		f.Add([]byte(seed), uint8(6))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opts := Options{InferRows: int(mode%4) + 1, NoHeader: mode&8 != 0, Tentative: mode&16 != 0}
		if mode&4 != 0 || opts.NoHeader {
			opts.Schema = fuzzSchema
		}
		if mode&32 != 0 {
			opts.Comma, opts.NullValues = ';', []string{}
		}
		err := CSV(context.Background(), bytes.NewReader(data), "fuzz.csv", opts, &recordSink{t: t})
		checkConverted(t, err)
	})
}

// FuzzJSONL: the JSON Lines parser never panics, and hands its sink
// records of the schema it announced.
func FuzzJSONL(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":["x",null],"c":"2026-11-29"}` + "\n\n" + `{"a":null}`, `{"b":{"k":[1]}}` + "\n" + `{"b":"x"}`, `{"a":1e400} {"a":2}`} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, withSchema bool) {
		var opts Options
		if withSchema {
			opts.Schema = fuzzSchema
		}
		err := JSONL(context.Background(), bytes.NewReader(data), "fuzz.jsonl", opts, &recordSink{t: t})
		checkConverted(t, err)
	})
}
