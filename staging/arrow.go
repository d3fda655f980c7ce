package staging

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/pqscan"
)

// arrowBatch is the number of rows handed to the Parquet writer per step;
// the rollover and row group checks run between steps.
const arrowBatch = 8 << 10

// WriteRecord appends an Arrow record batch, written through Arrow's
// Parquet writer (pqarrow). Its schema must be flat (dictionary-encoded
// columns are written as their value type). The record is not retained.
func (s *Stager) WriteRecord(rec arrow.RecordBatch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	rec, err := date64AsDate32(s.ctx, rec)
	if err != nil {
		return s.fail(err)
	}
	defer rec.Release()
	if err := s.writeRecord("Arrow record", rec); err != nil {
		return s.fail(err)
	}
	return nil
}

// date64AsDate32 returns rec (retained) with its top-level date64 columns
// as date32, as Arrow's Parquet writer stores them (a DATE column, days):
// the same dates from a record or from a Parquet file written from it are
// the same data. A date64 value that is not a whole day is ErrBadInput.
func date64AsDate32(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	sc := rec.Schema()
	var fields []arrow.Field
	var cols []arrow.Array
	var own []arrow.Array
	defer func() {
		for _, c := range own {
			c.Release()
		}
	}()
	for i, f := range sc.Fields() {
		col := rec.Column(i)
		if f.Type.ID() == arrow.DATE64 {
			out, err := compute.CastArray(ctx, col, compute.SafeCastOptions(arrow.FixedWidthTypes.Date32))
			if err != nil {
				return nil, fmt.Errorf("%w: Arrow record: column %q: date64 to date32: %v", ErrBadInput, f.Name, err)
			}
			own = append(own, out)
			col = out
			f.Type = arrow.FixedWidthTypes.Date32
		}
		fields = append(fields, f)
		cols = append(cols, col)
	}
	if len(own) == 0 {
		rec.Retain()
		return rec, nil
	}
	md := sc.Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows()), nil
}

// canonOfRecordSchema caches pqscan.SchemaOfArrow by schema fingerprint.
func (s *Stager) canonOfRecordSchema(sc *arrow.Schema) (*pqscan.Schema, error) {
	fp := sc.Fingerprint()
	if c, ok := s.arrows[fp]; ok {
		return c, nil
	}
	c, err := pqscan.SchemaOfArrow(sc, s.arrowProps)
	if err != nil {
		return nil, err
	}
	s.arrows[fp] = c
	return c, nil
}

func (s *Stager) writeRecord(input string, rec arrow.RecordBatch) (err error) {
	c, err := s.canonOfRecordSchema(rec.Schema())
	if err != nil {
		return err
	}
	if err := s.setSchema(input, c); err != nil {
		if cv := asConversion(err); cv != nil {
			return s.writeConverted(input, rec, cv) // promote.go
		}
		return err
	}
	n := rec.NumRows()
	if n == 0 {
		return nil
	}
	var encs []checksum.ArrowEnc // rowsum128's, when asked for
	if s.opts.LegacyChecksum {
		encs = make([]checksum.ArrowEnc, rec.NumCols())
		for i, col := range rec.Columns() {
			if encs[i], err = checksum.ArrowEncoder(col, c.Arrow.Field(i).Type); err != nil {
				return fmt.Errorf("staging: column %q: %w", rec.ColumnName(i), err)
			}
		}
	}
	// The content checksum of the whole record is computed on a second
	// core while pqarrow encodes it (Arrow arrays are immutable).
	hash := func(hsum *checksum.Sums) error {
		if err := s.colh.AddRecord(rec, c.Arrow, &hsum.Col); err != nil {
			return fmt.Errorf("staging: %w", err)
		}
		for i := 0; encs != nil && i < int(n); i++ {
			b := s.buf[:0]
			for _, e := range encs {
				b = e(b, i)
			}
			s.buf = b
			hsum.Row.AddRow(b)
		}
		return nil
	}
	wait := s.hashBeside(parallelHash, hash)
	defer func() {
		if herr := wait(); herr != nil && err == nil {
			err = herr
		}
	}()
	for off := int64(0); off < n; off += arrowBatch {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		end := min(n, off+arrowBatch)
		enc, err := s.arrowEncoderFor(rec.Schema())
		if err != nil {
			return err
		}
		slice := rec
		if off != 0 || end != n {
			slice = rec.NewSlice(off, end)
		}
		err = enc.w.WriteBuffered(slice)
		if slice != rec {
			slice.Release()
		}
		if err != nil {
			return fmt.Errorf("staging: write %s: %w", s.cur.key, err)
		}
		s.cur.rows += end - off
		// pqarrow reports no sizes for a buffered row group, so estimate
		// its memory from the Arrow data it holds.
		rgRows, err := enc.w.RowGroupNumRows()
		if err != nil {
			return fmt.Errorf("staging: write %s: %w", s.cur.key, err)
		}
		perRow := float64(recordBytes(rec)) / float64(n)
		enc.buffered = int64(float64(rgRows) * perRow)
		if enc.buffered >= s.opts.RowGroupBytes {
			enc.w.NewBufferedRowGroup()
			enc.buffered = 0
		}
		if err := s.maybeRoll(); err != nil {
			return err
		}
	}
	return nil
}

// checksum.ArrowEncoder writes one file of Arrow records with pqarrow.
type arrowFileEncoder struct {
	schema   *arrow.Schema
	w        *pqarrow.FileWriter
	buffered int64 // estimated Arrow bytes in the open row group
}

func (e *arrowFileEncoder) close() error { return e.w.Close() }

// footer is the footer Close wrote.
func (e *arrowFileEncoder) footer() *metadata.FileMetaData {
	md, err := e.w.FileMetadata()
	if err != nil {
		return nil
	}
	return md
}

// size counts the open row group at its uncompressed size, so files roll
// over somewhat early rather than late.
func (e *arrowFileEncoder) size(written int64) int64 { return written + e.buffered }

// recordBytes estimates the bytes of a record's values (for a slice, only
// its own rows).
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += arrayBytes(col)
	}
	return n
}

func arrayBytes(a arrow.Array) int64 {
	l := int64(a.Len())
	switch t := a.DataType().(type) {
	case arrow.FixedWidthDataType:
		return l * int64(max(t.BitWidth()/8, 1))
	}
	switch x := a.(type) {
	case interface{ ValueBytes() []byte }:
		return int64(len(x.ValueBytes())) + 4*l
	case *array.Dictionary:
		return arrayBytes(x.Indices())
	}
	return 8 * l
}

// arrowEncoderFor returns the current file's encoder if it writes records
// of schema sc, or closes the current file and opens one that does.
func (s *Stager) arrowEncoderFor(sc *arrow.Schema) (*arrowFileEncoder, error) {
	if s.cur != nil {
		if e, ok := s.cur.enc.(*arrowFileEncoder); ok && e.schema.Equal(sc) {
			return e, nil
		}
		if err := s.closePart(); err != nil {
			return nil, err
		}
	}
	var enc *arrowFileEncoder
	err := s.openPart(func(w io.Writer) (encoder, error) {
		props, err := s.opts.arrowPropsFor(sc)
		if err != nil {
			return nil, err
		}
		fw, err := pqarrow.NewFileWriter(sc, w, props, pqarrow.DefaultWriterProps())
		if err != nil {
			return nil, fmt.Errorf("staging: %w", err)
		}
		enc = &arrowFileEncoder{schema: sc, w: fw}
		return enc, nil
	})
	return enc, err
}
