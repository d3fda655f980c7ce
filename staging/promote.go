package staging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap/internal/pqscan"
)

// Input describes an input to a ConformFunc.
type Input struct {
	// Name names the input in errors: "Parquet file x.parquet",
	// "CSV sales.csv", "Arrow record", "Go type main.Sale".
	Name string
	// Text: the input is CSV or JSON Lines, its types inferred or given.
	Text bool
	// FieldIDs are the Parquet field ids of a Parquet input's top-level
	// columns (nil: none); NestedFieldIDs says a nested field has one.
	// Iceberg engines read a file that has ids by its ids, not by name.
	FieldIDs       map[string]int
	NestedFieldIDs bool
}

// ConformFunc decides the schema an input's data is stored in. It gets
// the input's canonical schema (the Arrow schema Arrow's Parquet reader
// derives from the Parquet the input would produce) and returns the
// schema to store it in (nil: as it is), or an error to refuse the input.
// A table schema's safe promotions are such functions: see Options.Conform.
type ConformFunc func(in Input, schema *arrow.Schema) (*arrow.Schema, error)

// conversion is the error setSchema returns for an input whose data must
// be converted before it is stored. Inputs that can convert (Arrow
// records, CSV and JSON Lines, existing Parquet files) do; Go structs
// cannot, and report it.
type conversion struct {
	input  string
	from   *pqscan.Schema
	target *arrow.Schema  // what ConformFunc returned
	canon  *pqscan.Schema // its canonical form
}

func (c *conversion) Error() string {
	return fmt.Sprintf("%v: %s must be stored as\n%s\nbut has\n%s\nand values of %s are not converted: change the types to the table's", ErrSchemaMismatch, c.input, c.canon.Text, c.from.Text, c.input)
}

func (c *conversion) Unwrap() error { return ErrSchemaMismatch }

// conform applies Options.Conform to an input's canonical schema; it
// returns the canonical schema the data is to be stored in, with the
// target to convert to when that differs from c. Callers hold mu.
func (s *Stager) conform(input string, c *pqscan.Schema) (*conversion, error) {
	if s.opts.Conform == nil || s.converting {
		return nil, nil
	}
	if r, ok := s.conformed[c.Text+c.IDs.Key()]; ok {
		return r, nil
	}
	in := Input{Name: input, Text: strings.HasPrefix(input, "CSV ") || strings.HasPrefix(input, "JSON Lines "),
		FieldIDs: c.IDs.Top, NestedFieldIDs: c.IDs.Nested}
	target, err := s.opts.Conform(in, c.Arrow)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, input) // the sentinel's text first: "schema mismatch: ..."
	}
	var r *conversion
	if target != nil {
		tc, err := s.canonOfRecordSchema(target)
		if err != nil {
			return nil, fmt.Errorf("staging: schema to store %s in: %w", input, err)
		}
		if !tc.Equal(c) {
			r = &conversion{input: input, from: c, target: target, canon: tc}
		}
	}
	if s.conformed == nil {
		s.conformed = map[string]*conversion{}
	}
	s.conformed[c.Text+c.IDs.Key()] = r
	return r, nil
}

// asConversion returns the conversion an error from setSchema asks for.
func asConversion(err error) *conversion {
	var c *conversion
	if errors.As(err, &c) {
		return c
	}
	return nil
}

// acceptConverted establishes or checks the schema of an input that will
// be converted to cv.target before it is written.
func (s *Stager) acceptConverted(cv *conversion) error {
	s.converting = true
	defer func() { s.converting = false }()
	return s.setSchema(cv.input, cv.canon)
}

// writeConverted converts a record to cv.target and writes it.
func (s *Stager) writeConverted(input string, rec arrow.RecordBatch, cv *conversion) error {
	out, err := convertRecord(s.ctx, input, rec, cv.target)
	if err != nil {
		return err
	}
	defer out.Release()
	s.converting = true
	defer func() { s.converting = false }()
	return s.writeRecord(input, out)
}

// convertRecord returns rec's columns in target's order and types, by
// Arrow's safe casts (an overflow or a lost fraction is an error, never a
// silent change), refusing nulls in a column target says is not nullable.
func convertRecord(ctx context.Context, input string, rec arrow.RecordBatch, target *arrow.Schema) (arrow.RecordBatch, error) {
	src := rec.Schema()
	cols := make([]arrow.Array, 0, target.NumFields())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, f := range target.Fields() {
		idx := src.FieldIndices(f.Name)
		if len(idx) == 0 && f.Nullable {
			// A nullable column the input lacks, which the ConformFunc
			// accepted (a table's FillMissingNullable): all NULL.
			cols = append(cols, array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(rec.NumRows())))
			continue
		}
		if len(idx) != 1 {
			release()
			return nil, fmt.Errorf("%w: %s has no column %q", ErrSchemaMismatch, input, f.Name)
		}
		col := rec.Column(idx[0])
		if !f.Nullable && col.NullN() > 0 {
			release()
			return nil, fmt.Errorf("%w: %s: column %q holds %d nulls, but the table's column is NOT NULL", ErrBadInput, input, f.Name, col.NullN())
		}
		if arrow.TypeEqual(col.DataType(), f.Type) {
			col.Retain()
			cols = append(cols, col)
			continue
		}
		filled, err := nullsOf(col, f.Type)
		if err != nil {
			release()
			return nil, fmt.Errorf("%w: %s: column %q: %v", ErrBadInput, input, f.Name, err)
		}
		if filled != nil {
			cols = append(cols, filled)
			continue
		}
		out, err := compute.CastArray(ctx, col, compute.SafeCastOptions(f.Type))
		if err != nil {
			release()
			if hint := castHint(col.DataType(), f.Type); hint != "" {
				return nil, fmt.Errorf("%w: %s: column %q: %s to %s: %v: %s", ErrBadInput, input, f.Name, col.DataType(), f.Type, err, hint)
			}
			return nil, fmt.Errorf("%w: %s: column %q: %s to %s: %v", ErrBadInput, input, f.Name, col.DataType(), f.Type, err)
		}
		cols = append(cols, out)
	}
	out := array.NewRecordBatch(target, cols, rec.NumRows())
	release()
	return out, nil
}

// addConvertedParquet adds an existing Parquet file whose data must be
// converted (an int32 column of a long table column, say): it cannot be
// copied as it is, so its records are read through Arrow, converted and
// written as new files, whose checksums and content checksum are those of
// the converted data.
func (s *Stager) addConvertedParquet(ctx context.Context, f io.ReaderAt, size int64, cv *conversion) (err error) {
	if err := s.acceptConverted(cv); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: decoding failed: %v", ErrCorrupt, cv.input, r)
		}
	}()
	r, err := pqscan.Open(f, size) // as the scan read it
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, cv.input, err)
	}
	defer r.Close()
	// INT96 columns are read in microseconds beside Arrow's records.
	var werr error
	err = pqscan.ReadRecords(ctx, r, cv.from, arrowBatch, func(rec arrow.RecordBatch) error {
		werr = s.writeConverted(cv.input, rec, cv)
		return werr
	})
	if werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, cv.input, err)
	}
	return nil
}

// Schema returns the generation's schema: the Arrow schema its files are
// stored with (after any conversion), or nil before the first input.
func (s *Stager) Schema() *arrow.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.schema == nil {
		return nil
	}
	return s.schema.Arrow
}

// castHint says what to do about a value that a conversion from type from
// to type to cannot store unchanged, where there is a usual remedy.
func castHint(from, to arrow.DataType) string {
	f, ok1 := from.(*arrow.TimestampType)
	t, ok2 := to.(*arrow.TimestampType)
	if ok1 && ok2 && f.Unit == arrow.Nanosecond && t.Unit == arrow.Microsecond {
		return "the table's timestamps hold microseconds (Iceberg v2's unit), and a nanosecond value that is not a whole microsecond is not truncated silently: " +
			"truncate it before writing (pandas: s.dt.floor(\"us\"); pyarrow: pq.write_table(..., coerce_timestamps=\"us\", allow_truncated_timestamps=True); Go: t.Truncate(time.Microsecond))"
	}
	if from.ID() == arrow.UINT64 && to.ID() == arrow.INT64 {
		return "Iceberg has no unsigned types: the table stores uint64 as long, which holds values up to 2^63-1; " +
			"write larger ones as decimal(20,0) (Polars: .cast(pl.Decimal(20, 0)); pyarrow: pa.decimal128(20, 0)) into a table whose column is decimal(20,0), " +
			"or, for ids and hashes, as int64 (Polars: .reinterpret(signed=True))"
	}
	return ""
}

// nullsOf returns col as an array of type to when col holds nulls only by
// its type: a null column, or a list of null elements (an all-null list
// column, pyarrow's list<null>): the same nulls and list lengths, with
// elements that are nulls of the target's element type (Arrow's cast
// panics on a list of nulls). It returns nil for any other column, and an
// error for null elements that the target's elements refuse.
func nullsOf(col arrow.Array, to arrow.DataType) (arrow.Array, error) {
	mem := memory.DefaultAllocator
	if col.DataType().ID() == arrow.NULL {
		return array.MakeArrayOfNull(mem, to, col.Len()), nil
	}
	ll, ok := col.(array.ListLike)
	lt, ok2 := to.(*arrow.ListType)
	if !ok || !ok2 || ll.ListValues().DataType().ID() != arrow.NULL {
		return nil, nil
	}
	b := array.NewListBuilderWithField(mem, lt.ElemField())
	defer b.Release()
	vb := b.ValueBuilder()
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) {
			b.AppendNull()
			continue
		}
		start, end := ll.ValueOffsets(i)
		if end > start && !lt.ElemField().Nullable {
			return nil, errors.New("its lists hold null elements, and the table's elements are NOT NULL")
		}
		b.Append(true)
		vb.AppendNulls(int(end - start))
	}
	return b.NewArray(), nil
}
