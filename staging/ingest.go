package staging

import (
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/ctxio"
	"github.com/pswap/pswap/internal/pqscan"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// AddParquetFile adds an existing local Parquet file to the generation as
// one data file, copying its bytes unchanged. Nothing about the file is
// trusted: its footer is read and checked (schema against the
// generation's, column chunks inside the file) before the first byte is
// uploaded; then the upload and the checks of the pages run at the same
// time over the same file: every page CRC present is verified and every
// row decoded and hashed (for the content checksum, and to prove the pages
// intact), across cores. The uploaded object is committed only once the
// checks passed: a file that cannot be read is refused with ErrCorrupt
// (ErrPageChecksum for a page CRC mismatch) and its upload aborted, so
// nothing of it becomes visible. The file must not change while it is
// added. A file without rows adds nothing. With Options.Check CheckFooter
// the pages are not decoded (see CheckFooter).
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

// fileErr wraps an error of the existing-file path with the file's name:
// "corrupt parquet file: PATH: what" for a file that cannot be read.
func fileErr(path string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnsupported) {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return &corruptFileError{path: path, err: err}
}

// corruptFileError puts the file's name after the kind of error.
type corruptFileError struct {
	path string
	err  error // matches ErrCorrupt
}

func (e *corruptFileError) Error() string {
	return ErrCorrupt.Error() + ": " + e.path + ": " + strings.TrimPrefix(e.err.Error(), ErrCorrupt.Error()+": ")
}

func (e *corruptFileError) Unwrap() error { return e.err }

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
	size := before.Size()

	// The footer, before anything goes out.
	pr, err := pqscan.Open(f, size)
	if err != nil {
		return fileErr(path, err)
	}
	defer pr.Close()
	ft, canon, err := pqscan.CheckFooter(pr, size)
	if err != nil {
		return fileErr(path, err)
	}
	if err := s.setSchema("Parquet file "+path, canon); err != nil {
		if cv := asConversion(err); cv != nil && ft.Rows > 0 {
			if _, err := pqscan.VerifyPageChecksumsOf(f, size, pr.MetaData()); err != nil {
				return fileErr(path, err)
			}
			return s.addConvertedParquet(ctx, f, size, cv) // promote.go: cannot be copied as it is
		} else if cv != nil {
			return s.acceptConverted(cv)
		}
		return err
	}
	if ft.Rows == 0 {
		return nil
	}
	if err := s.closePart(); err != nil {
		return err
	}
	if err := s.openPart(func(io.Writer) (encoder, error) { return copyEncoder{md: pr.MetaData()}, nil }); err != nil {
		return err
	}
	p := s.cur
	if h, ok := p.w.(sizeHinter); ok {
		h.SizeHint(size) // a multipart upload is created while the first part fills
	}

	// The pages, while the bytes upload.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type scanned struct {
		rows int64
		sum  checksum.Sums
		err  error
	}
	done := make(chan scanned, 1)
	footerOnly := s.opts.Check == CheckFooter
	go func() {
		var r scanned
		if footerOnly {
			r.rows = ft.Rows
			_, r.err = pqscan.VerifyPageChecksumsOf(f, size, pr.MetaData())
		} else {
			r.rows, r.sum, r.err = pqscan.ScanPages(sctx, f, size, pr, canon, s.opts.LegacyChecksum)
		}
		if r.err != nil {
			cancel() // stop the upload early
		}
		done <- r
	}()
	// The bytes go from the file straight into the store writer's part
	// buffers when it reads for itself (hashSink.ReadFrom), past the part's
	// write buffer, which holds nothing: a copy encoder writes no bytes of
	// its own. Other writers get them through that buffer, in 1 MiB reads.
	cerr := p.buf.Flush()
	var n int64
	if src := ctxio.Reader(sctx, io.NewSectionReader(f, 0, size)); cerr == nil {
		if _, ok := p.w.(io.ReaderFrom); ok {
			n, cerr = p.sink.ReadFrom(src)
		} else {
			n, cerr = io.Copy(p.buf, src)
		}
	}
	// Every byte is in: the last part goes out now, while the check may
	// still run, instead of after it (the upload is completed only once
	// the check passed, by closePart below).
	if sw, ok := p.w.(sealer); ok && cerr == nil {
		cerr = sw.Seal()
	}
	if cerr != nil {
		cancel()
	}
	sc := <-done
	if sc.err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("%s: %w", path, cerr)
		}
		return fileErr(path, sc.err)
	}
	if cerr != nil {
		return fmt.Errorf("staging: copy %s to %s: %w", path, p.key, cerr)
	}
	if sc.rows != ft.Rows {
		return fileErr(path, fmt.Errorf("footer says %d rows, pages hold %d", ft.Rows, sc.rows))
	}
	after, err := f.Stat()
	if err != nil {
		return err
	}
	if n != size || after.Size() != n || !after.ModTime().Equal(before.ModTime()) {
		return fmt.Errorf("%w: %s changed while it was being added", ErrBadInput, path)
	}
	p.rows, p.sum = sc.rows, sc.sum
	if footerOnly {
		s.unread = true
	}
	return s.closePart()
}

// sizeHinter is a store writer told the object's size before its bytes
// (partupload.Writer.SizeHint).
type sizeHinter interface{ SizeHint(size int64) }

// sealer is a store writer that can send its last part before its Commit
// (partupload.Writer.Seal).
type sealer interface{ Seal() error }

// copyEncoder is the encoder of a file copied as is, whose footer was read
// before.
type copyEncoder struct{ md *metadata.FileMetaData }

func (copyEncoder) close() error                     { return nil }
func (copyEncoder) size(written int64) int64         { return written }
func (e copyEncoder) footer() *metadata.FileMetaData { return e.md }
