package staging

import (
	"github.com/pswap/pswap/internal/checksum"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
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
	pr, err := openParquet(f, size)
	if err != nil {
		return fileErr(path, err)
	}
	defer pr.Close()
	ft, canon, err := checkFooter(pr, size)
	if err != nil {
		return fileErr(path, err)
	}
	if err := s.setSchema("Parquet file "+path, canon); err != nil {
		if cv := asConversion(err); cv != nil && ft.Rows > 0 {
			if _, err := verifyPageChecksums(f, size, pr.MetaData()); err != nil {
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
	if err := s.openPart(func(io.Writer) (encoder, error) { return copyEncoder{}, nil }); err != nil {
		return err
	}
	p := s.cur

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
			_, r.err = verifyPageChecksums(f, size, pr.MetaData())
		} else {
			r.rows, r.sum, r.err = scanPages(sctx, f, size, pr, canon, s.opts.LegacyChecksum)
		}
		if r.err != nil {
			cancel() // stop the upload early
		}
		done <- r
	}()
	n, cerr := io.Copy(p.buf, ctxReader{ctx: sctx, r: io.NewSectionReader(f, 0, size)})
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

// checkFooter checks what the footer of pr (a file of size bytes) says
// and derives the canonical schema.
func checkFooter(pr *file.Reader, size int64) (Footer, *canonSchema, error) {
	return checkFooterAs(pr, size, false)
}

// checkFooterAs is checkFooter, with the canonical schema of canonOf.
func checkFooterAs(pr *file.Reader, size int64, int96Nanos bool) (Footer, *canonSchema, error) {
	md := pr.MetaData()
	canon, err := canonOf(md.Schema, int96Nanos)
	if err != nil {
		return Footer{}, nil, err
	}
	var sum int64
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		if rg.NumRows() < 0 {
			return Footer{}, nil, fmt.Errorf("%w: row group %d has %d rows", ErrCorrupt, g, rg.NumRows())
		}
		if rg.NumColumns() != md.Schema.NumColumns() {
			return Footer{}, nil, fmt.Errorf("%w: row group %d has %d columns, the schema %d", ErrCorrupt, g, rg.NumColumns(), md.Schema.NumColumns())
		}
		sum += rg.NumRows()
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return Footer{}, nil, fmt.Errorf("%w: row group %d column %d: %v", ErrCorrupt, g, c, err)
			}
			if cc.NumValues() == 0 {
				continue
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
			if start < 4 || cc.TotalCompressedSize() < 0 || start+cc.TotalCompressedSize() > size {
				return Footer{}, nil, fmt.Errorf("%w: column %s (row group %d) lies outside the file", ErrCorrupt, cc.PathInSchema(), g)
			}
		}
	}
	if md.NumRows < 0 || md.NumRows != sum && sum != 0 {
		return Footer{}, nil, fmt.Errorf("%w: footer says %d rows, its row groups %d", ErrCorrupt, md.NumRows, sum)
	}
	return Footer{Rows: md.NumRows, Schema: canon.text, RowGroups: md.NumRowGroups()}, canon, nil
}

// scanPages verifies the page CRCs of a file and decodes and hashes every
// row (colsum128, and rowsum128 too when legacy), row groups in parallel
// across cores (the row sum is commutative, so they may finish in any
// order). Each worker decodes with its own reader and recovers from a
// decoder's panic on malformed input.
func scanPages(ctx context.Context, f io.ReaderAt, size int64, pr *file.Reader, canon *canonSchema, legacy bool) (rows int64, sum checksum.Sums, err error) {
	if _, err := verifyPageChecksums(f, size, pr.MetaData()); err != nil {
		return 0, sum, err
	}
	groups := pr.NumRowGroups()
	workers := min(groups, runtime.GOMAXPROCS(0))
	next := make(chan int, groups)
	for g := range groups {
		next <- g
	}
	close(next)
	// The fast scan reads pages through a reader of its own whose page
	// buffers come from the scan's pool (they are freed as each row
	// group's page readers close), and which streams each column chunk
	// through a small buffer instead of reading it whole into fresh memory
	// (page bodies are read straight into the decompression buffer): one
	// copy and one allocation less per column chunk, and memory holds a
	// page per column rather than whole column chunks.
	var fast *file.Reader
	if !legacy && !noFastScan && newFastScanner(pr.MetaData(), canon) != nil {
		props := parquet.NewReaderProperties(pageAllocator)
		props.BufferedStreamEnabled, props.BufferSize = true, 64<<10
		fast, err = file.NewParquetReader(&sizedReaderAt{r: f, size: size},
			file.WithReadProps(props), file.WithMetadata(pr.MetaData()))
		if err != nil {
			return 0, sum, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		defer fast.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local checksum.Sums
			var n int64
			err := scanRowGroups(ctx, pr, fast, canon, legacy, next, &local, &n)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				cancel()
				return
			}
			sum.Add(local)
			rows += n
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		for _, e := range errs { // the cause, not the cancellations it caused
			if !errors.Is(e, context.Canceled) {
				return 0, sum, e
			}
		}
		return 0, sum, errs[0]
	}
	return rows, sum, ctx.Err()
}

// scanRowGroups decodes and hashes the row groups it takes from next:
// with the fast scan (scanfast.go) through fast when it is not nil, and
// with Arrow's record reader over pr otherwise and for every row group the
// fast scan gives up.
func scanRowGroups(ctx context.Context, pr, fast *file.Reader, canon *canonSchema, legacy bool, next <-chan int, sum *checksum.Sums, rows *int64) (err error) {
	defer func() {
		// Arrow's decoders can panic on malformed input.
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding failed: %v", r)
		}
	}()
	var fs *fastScanner
	if fast != nil {
		fs = newFastScanner(pr.MetaData(), canon)
	}
	var (
		fr  *pqarrow.FileReader
		buf []byte
		ch  checksum.ColHasher
	)
	defer ch.Release()
	for g := range next {
		if fs != nil {
			n, err := fs.rowGroup(ctx, fast.RowGroup(g), &sum.Col)
			if err == nil {
				*rows += n
				fastGroups.Add(1)
				continue
			}
			if debugFast {
				fmt.Fprintf(os.Stderr, "fast scan gave up row group %d: %v\n", g, err)
			}
			gaveUp.Add(1)
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			// Given up: the Arrow path decides.
		}
		if fr == nil {
			if fr, err = pqarrow.NewFileReader(pr, scanProps(pr), scanAllocator); err != nil {
				return err
			}
		}
		err := rowGroupRecords(ctx, pr, fr, g, canon, int96Leaves(pr, canon), func(rec arrow.RecordBatch) error {
			err := ch.AddRecord(rec, canon.arrow, &sum.Col)
			if err == nil && legacy {
				buf, err = hashBatch(rec, canon, &sum.Row, buf)
			}
			if err != nil {
				return err
			}
			*rows += rec.NumRows()
			return ctx.Err()
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// noFastScan turns the fast scan off (tests and benchmarks compare the
// two paths).
var noFastScan bool

// fastGroups and gaveUp count the row groups the fast scan hashed and gave
// up (tests check which path a file took).
var fastGroups, gaveUp atomic.Int64

var debugFast = os.Getenv("PSWAP_DEBUG_FASTSCAN") != ""

// hashBatch adds the rowsum128 row hashes of rec to sum.
func hashBatch(rec arrow.RecordBatch, canon *canonSchema, sum *checksum.Sum, buf []byte) (out []byte, err error) {
	encs := make([]checksum.ArrowEnc, rec.NumCols())
	for i, col := range rec.Columns() {
		if encs[i], err = checksum.ArrowEncoder(col, canon.arrow.Field(i).Type); err != nil {
			return buf, err
		}
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		buf = buf[:0]
		for _, e := range encs {
			buf = e(buf, i)
		}
		sum.AddRow(buf)
	}
	return buf, nil
}

// scanParquet validates a Parquet file and hashes its rows (the whole
// check of AddParquetFile, without the upload).
func scanParquet(ctx context.Context, f readerAtSize, size int64, legacy, int96Nanos bool) (rows int64, sum checksum.Sums, canon *canonSchema, err error) {
	pr, err := openParquet(f, size)
	if err != nil {
		return 0, sum, nil, err
	}
	defer pr.Close()
	ft, canon, err := checkFooterAs(pr, size, int96Nanos)
	if err != nil {
		return 0, sum, nil, err
	}
	rows, sum, err = scanPages(ctx, f, size, pr, canon, legacy)
	if err != nil {
		return 0, sum, nil, err
	}
	if rows != ft.Rows {
		return 0, sum, nil, fmt.Errorf("footer says %d rows, pages hold %d", ft.Rows, rows)
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
