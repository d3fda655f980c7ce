package pqscan

import (
	"context"
	"encoding/binary"
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

// int96Batch is the rows of a record of INT96 columns alone.
const int96Batch = 8 << 10

// ReadRecords calls fn with the records of every row group of pr in turn,
// read through Arrow's record reader in batches of batch rows, with the
// flat INT96 columns that canon reads in microseconds read so. fn's error
// is returned as it is; records are released after fn returns.
func ReadRecords(ctx context.Context, pr *file.Reader, canon *Schema, batch int64, fn func(arrow.RecordBatch) error) error {
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	int96 := int96Leaves(pr, canon)
	for g := range pr.NumRowGroups() {
		if err := rowGroupRecords(ctx, pr, fr, g, canon, int96, fn); err != nil {
			return err
		}
	}
	return nil
}

// int96Leaves returns the indices of pr's flat INT96 columns that canon
// reads in microseconds (none when it reads them as Arrow does).
func int96Leaves(pr *file.Reader, canon *Schema) []int {
	sc := pr.MetaData().Schema
	if sc.NumColumns() != canon.Arrow.NumFields() {
		return nil // nested columns: canon's fields are not the leaves
	}
	var out []int
	for c := 0; c < sc.NumColumns(); c++ {
		col := sc.Column(c)
		if col.PhysicalType() == parquet.Types.Int96 && len(col.ColumnPath()) == 1 && arrow.TypeEqual(canon.Arrow.Field(c).Type, int96Type) {
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
func rowGroupRecords(ctx context.Context, pr *file.Reader, fr *pqarrow.FileReader, g int, canon *Schema, int96 []int, fn func(arrow.RecordBatch) error) error {
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
	for c := range canon.Arrow.NumFields() {
		if _, ok := cols[c]; !ok {
			others = append(others, c)
		}
	}
	fields := canon.Arrow.Fields()
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
		for off := int64(0); off < n; off += int96Batch {
			if err := emit(nil, min(int96Batch, n-off)); err != nil {
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

// int96Type is the canonical type of a flat INT96 timestamp column: Spark
// writes instants (UTC), and reads them in microseconds.
var int96Type = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// julianUnixEpoch is the Julian day of 1970-01-01.
const julianUnixEpoch = 2440588

// int96Micros converts an INT96 timestamp (nanoseconds of the day, then
// the Julian day, little-endian) to microseconds since the epoch exactly
// as Spark reads it (ParquetRowConverter, DateTimeUtils.fromJulianDay):
// both fields signed, (day - 2440588) * 86400000000 + nanos / 1000, in
// wrapping 64-bit arithmetic, the nanoseconds below the microsecond
// dropped. Spark's writer computes the fields in the same arithmetic, so
// every timestamp Spark writes (about 290,000 years either way, where
// Arrow's nanoseconds stop at 1677 and 2262) reads back as it wrote it.
func int96Micros(b []byte) int64 {
	nanos := int64(binary.LittleEndian.Uint64(b[:8]))
	days := int64(int32(binary.LittleEndian.Uint32(b[8:12])))
	const microsPerDay = 86_400_000_000
	return (days-julianUnixEpoch)*microsPerDay + nanos/1000
}
