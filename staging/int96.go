package staging

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The Arrow path for files with INT96 columns. Arrow's record reader reads
// INT96 in nanoseconds and fails on a timestamp outside 1677..2262, which
// Spark writes; staging reads INT96 in microseconds (int96Micros). Where
// records are read through Arrow (the scan of a row group the fast scan
// gave up, the conversion of a file), the INT96 columns are read with
// Parquet's column reader instead and put in the records in their place.

// int96Leaves returns the indices of pr's flat INT96 columns that canon
// reads in microseconds (none when it reads them as Arrow does).
func int96Leaves(pr *file.Reader, canon *canonSchema) []int {
	sc := pr.MetaData().Schema
	if sc.NumColumns() != canon.arrow.NumFields() {
		return nil // nested columns: canon's fields are not the leaves
	}
	var out []int
	for c := 0; c < sc.NumColumns(); c++ {
		col := sc.Column(c)
		if col.PhysicalType() == parquet.Types.Int96 && len(col.ColumnPath()) == 1 && arrow.TypeEqual(canon.arrow.Field(c).Type, int96Type) {
			out = append(out, c)
		}
	}
	return out
}

// int96Column reads a flat INT96 column chunk in steps of rows, in
// microseconds (int96Micros).
type int96Column struct {
	r      *file.Int96ColumnChunkReader
	maxDef int16
	vals   []parquet.Int96
	defs   []int16
}

func newInt96Column(rg *file.RowGroupReader, c int) (*int96Column, error) {
	cr, err := rg.Column(c)
	if err != nil {
		return nil, err
	}
	r, ok := cr.(*file.Int96ColumnChunkReader)
	if !ok {
		return nil, fmt.Errorf("%w: column %d is not INT96", ErrCorrupt, c)
	}
	return &int96Column{r: r, maxDef: cr.Descriptor().MaxDefinitionLevel()}, nil
}

// next reads the next n rows (a flat column: one level a row); a column
// that holds fewer, or fewer values than its levels say, is corrupt.
func (c *int96Column) next(n int64, mem memory.Allocator) (arrow.Array, error) {
	b := array.NewTimestampBuilder(mem, int96Type)
	defer b.Release()
	b.Reserve(int(n))
	const step = 4096
	if c.vals == nil {
		c.vals, c.defs = make([]parquet.Int96, step), make([]int16, step)
	}
	for left := n; left > 0; {
		if !c.r.HasNext() {
			if err := c.r.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: INT96 column %s holds fewer rows than its row group", ErrCorrupt, c.r.Descriptor().Path())
		}
		levels, values, err := c.r.ReadBatch(min(left, step), c.vals, c.defs, nil)
		if err != nil {
			return nil, err
		}
		defined := levels
		if c.maxDef > 0 {
			defined = 0
			for _, d := range c.defs[:levels] {
				if d == c.maxDef {
					defined++
				}
			}
		}
		if levels == 0 || int64(values) != defined {
			return nil, fmt.Errorf("%w: INT96 column %s: %d values for %d defined levels", ErrCorrupt, c.r.Descriptor().Path(), values, defined)
		}
		v := 0
		for i := range int(levels) {
			if c.maxDef > 0 && c.defs[i] < c.maxDef {
				b.AppendNull()
				continue
			}
			b.Append(arrow.Timestamp(int96Micros(c.vals[v][:])))
			v++
		}
		left -= levels
	}
	return b.NewArray(), nil
}

// rowGroupRecords calls fn with the records of row group g of pr read
// through fr, the INT96 columns of int96 (int96Leaves) read in
// microseconds. Records are released after fn returns.
func rowGroupRecords(ctx context.Context, pr *file.Reader, fr *pqarrow.FileReader, g int, canon *canonSchema, int96 []int, fn func(arrow.RecordBatch) error) error {
	if len(int96) == 0 {
		rr, err := fr.GetRecordReader(ctx, nil, []int{g})
		if err != nil {
			return err
		}
		defer rr.Release()
		for rr.Next() {
			if err := fn(rr.RecordBatch()); err != nil {
				return err
			}
		}
		if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	mem := memory.DefaultAllocator
	rg := pr.RowGroup(g)
	n := rg.NumRows()
	cols := map[int]*int96Column{}
	for _, c := range int96 {
		col, err := newInt96Column(rg, c)
		if err != nil {
			return err
		}
		cols[c] = col
	}
	var others []int
	for c := range canon.arrow.NumFields() {
		if _, ok := cols[c]; !ok {
			others = append(others, c)
		}
	}
	fields := canon.arrow.Fields()
	emit := func(rec arrow.RecordBatch, rows int64) error {
		arrs := make([]arrow.Array, len(fields))
		o := 0
		for c := range fields {
			if col, ok := cols[c]; ok {
				a, err := col.next(rows, mem)
				if err != nil {
					return err
				}
				defer a.Release()
				arrs[c] = a
				continue
			}
			arrs[c] = rec.Column(o)
			fields[c] = rec.Schema().Field(o)
			o++
		}
		full := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, rows)
		defer full.Release()
		return fn(full)
	}
	if len(others) == 0 {
		for off := int64(0); off < n; off += arrowBatch {
			if err := emit(nil, min(arrowBatch, n-off)); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	rr, err := fr.GetRecordReader(ctx, others, []int{g})
	if err != nil {
		return err
	}
	defer rr.Release()
	off := int64(0)
	for rr.Next() {
		rec := rr.RecordBatch()
		if off+rec.NumRows() > n {
			return fmt.Errorf("%w: row group %d holds more rows than it says", ErrCorrupt, g)
		}
		if err := emit(rec, rec.NumRows()); err != nil {
			return err
		}
		off += rec.NumRows()
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if off != n {
		return fmt.Errorf("%w: row group %d: %d rows read, %d said", ErrCorrupt, g, off, n)
	}
	return nil
}
