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

// readInt96Column reads column c of a row group as int96Type values.
func readInt96Column(rg *file.RowGroupReader, c int, mem memory.Allocator) (arrow.Array, error) {
	cr, err := rg.Column(c)
	if err != nil {
		return nil, err
	}
	r, ok := cr.(*file.Int96ColumnChunkReader)
	if !ok {
		return nil, fmt.Errorf("%w: column %d is not INT96", ErrCorrupt, c)
	}
	maxDef := cr.Descriptor().MaxDefinitionLevel()
	b := array.NewTimestampBuilder(mem, int96Type)
	defer b.Release()
	const batch = 4096
	vals := make([]parquet.Int96, batch)
	defs := make([]int16, batch)
	for r.HasNext() {
		n, _, err := r.ReadBatch(batch, vals, defs, nil)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		v := 0
		for i := range int(n) {
			if maxDef > 0 && defs[i] < maxDef {
				b.AppendNull()
				continue
			}
			b.Append(arrow.Timestamp(int96Micros(vals[v][:])))
			v++
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
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
	isInt96 := map[int]arrow.Array{}
	defer func() {
		for _, a := range isInt96 {
			a.Release()
		}
	}()
	for _, c := range int96 {
		a, err := readInt96Column(rg, c, mem)
		if err != nil {
			return err
		}
		isInt96[c] = a
		if int64(a.Len()) != n {
			return fmt.Errorf("%w: INT96 column %d holds %d values, its row group %d rows", ErrCorrupt, c, a.Len(), n)
		}
	}
	var others []int
	for c := range canon.arrow.NumFields() {
		if _, ok := isInt96[c]; !ok {
			others = append(others, c)
		}
	}
	fields := canon.arrow.Fields()
	emit := func(off int64, rec arrow.RecordBatch, rows int64) error {
		cols := make([]arrow.Array, len(fields))
		o := 0
		for c := range fields {
			if a, ok := isInt96[c]; ok {
				cols[c] = array.NewSlice(a, off, off+rows)
				defer cols[c].Release()
				continue
			}
			cols[c] = rec.Column(o)
			fields[c] = rec.Schema().Field(o)
			o++
		}
		full := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rows)
		defer full.Release()
		return fn(full)
	}
	if len(others) == 0 {
		for off := int64(0); off < n; off += arrowBatch {
			if err := emit(off, nil, min(arrowBatch, n-off)); err != nil {
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
		if err := emit(off, rec, rec.NumRows()); err != nil {
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
