package staging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// AddParquetFile adds an existing local Parquet file to the generation as
// one data file, copying its bytes unchanged. Nothing about the file is
// trusted: its footer is read and its schema checked against the
// generation's, and every row is decoded (to compute the content checksum
// and to prove the pages are intact) before any byte is uploaded. A file
// that cannot be read is refused with ErrCorrupt; the file must not change
// while it is added. A file without rows adds nothing.
func (s *Stager) AddParquetFile(ctx context.Context, path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if err := s.addParquetFile(ctx, path); err != nil {
		return s.fail(err)
	}
	return nil
}

func (s *Stager) addParquetFile(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err // names the path
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return err
	}
	if !before.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrBadInput, path)
	}
	rows, sum, canon, err := scanParquet(ctx, f, before.Size())
	if err != nil {
		if errors.Is(err, ErrUnsupported) || errors.Is(err, ErrCorrupt) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s: %w", path, err)
		}
		return fmt.Errorf("%s: %w: %v", path, ErrCorrupt, err)
	}
	if err := s.setSchema("Parquet file "+path, canon); err != nil {
		if cv := asConversion(err); cv != nil && rows > 0 {
			return s.addConvertedParquet(ctx, f, before.Size(), cv) // promote.go: cannot be copied as it is
		} else if cv != nil {
			return s.acceptConverted(cv)
		}
		return err
	}
	if rows == 0 {
		return nil
	}
	if err := s.closePart(); err != nil {
		return err
	}
	if err := s.openPart(func(io.Writer) (encoder, error) { return copyEncoder{}, nil }); err != nil {
		return err
	}
	p := s.cur
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("staging: %w", err)
	}
	n, err := io.Copy(p.buf, ctxReader{ctx: ctx, r: f})
	if err != nil {
		return fmt.Errorf("staging: copy %s to %s: %w", path, p.key, err)
	}
	after, err := f.Stat()
	if err != nil {
		return fmt.Errorf("staging: %w", err)
	}
	if n != before.Size() || after.Size() != n || !after.ModTime().Equal(before.ModTime()) {
		return fmt.Errorf("%w: %s changed while it was being added", ErrBadInput, path)
	}
	p.rows, p.sum = rows, sum
	return s.closePart()
}

// scanParquet validates a Parquet file and hashes its rows.
func scanParquet(ctx context.Context, f readerAtSize, size int64) (rows int64, sum rowSum, canon *canonSchema, err error) {
	defer func() {
		// Arrow's decoders can panic on malformed input.
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding failed: %v", r)
		}
	}()
	r, err := openParquet(f, size)
	if err != nil {
		return 0, sum, nil, err
	}
	defer r.Close()
	canon, err = fromParquetSchema(r.MetaData().Schema)
	if err != nil {
		return 0, sum, nil, err
	}
	if _, err := verifyPageChecksums(f, size, r.MetaData()); err != nil {
		return 0, sum, nil, err
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: arrowBatch}, memory.DefaultAllocator)
	if err != nil {
		return 0, sum, nil, err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return 0, sum, nil, err
	}
	defer rr.Release()
	var buf []byte
	for rr.Next() {
		rec := rr.RecordBatch()
		encs := make([]arrowEnc, rec.NumCols())
		for i, col := range rec.Columns() {
			if encs[i], err = arrowEncoder(col, canon.arrow.Field(i).Type); err != nil {
				return 0, sum, nil, err
			}
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			buf = buf[:0]
			for _, e := range encs {
				buf = e(buf, i)
			}
			sum.addRow(buf)
		}
		rows += rec.NumRows()
		if err := ctx.Err(); err != nil {
			return 0, sum, nil, err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return 0, sum, nil, err
	}
	if rows != r.NumRows() {
		return 0, sum, nil, fmt.Errorf("footer says %d rows, pages hold %d", r.NumRows(), rows)
	}
	return rows, sum, canon, nil
}

// copyEncoder is the encoder of a file copied as is.
type copyEncoder struct{}

func (copyEncoder) close() error             { return nil }
func (copyEncoder) size(written int64) int64 { return written }

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
