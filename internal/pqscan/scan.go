package pqscan

import (
	"github.com/pswap/pswap/internal/checksum"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ScanPages verifies the page CRCs of a file and decodes and hashes every
// row (colsum128, and rowsum128 too when legacy), row groups in parallel
// across cores (the row sum is commutative, so they may finish in any
// order). Each worker decodes with its own reader and recovers from a
// decoder's panic on malformed input.
func ScanPages(ctx context.Context, f io.ReaderAt, size int64, pr *file.Reader, canon *Schema, legacy bool) (rows int64, sum checksum.Sums, err error) {
	if _, err := VerifyPageChecksumsOf(f, size, pr.MetaData()); err != nil {
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
func scanRowGroups(ctx context.Context, pr, fast *file.Reader, canon *Schema, legacy bool, next <-chan int, sum *checksum.Sums, rows *int64) (err error) {
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
			err := ch.AddRecord(rec, canon.Arrow, &sum.Col)
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

// FastRowGroups returns how many row groups the fast scan has hashed in
// this process (tests check which path a file took).
func FastRowGroups() int64 { return fastGroups.Load() }

var debugFast = os.Getenv("PSWAP_DEBUG_FASTSCAN") != ""

// hashBatch adds the rowsum128 row hashes of rec to sum.
func hashBatch(rec arrow.RecordBatch, canon *Schema, sum *checksum.Sum, buf []byte) (out []byte, err error) {
	encs := make([]checksum.ArrowEnc, rec.NumCols())
	for i, col := range rec.Columns() {
		if encs[i], err = checksum.ArrowEncoder(col, canon.Arrow.Field(i).Type); err != nil {
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

// Scan validates a Parquet file and hashes its rows (the whole
// check of AddParquetFile, without the upload).
func Scan(ctx context.Context, f io.ReaderAt, size int64, legacy, int96Nanos bool) (rows int64, sum checksum.Sums, canon *Schema, err error) {
	pr, err := Open(f, size)
	if err != nil {
		return 0, sum, nil, err
	}
	defer pr.Close()
	ft, canon, err := checkFooterAs(pr, size, int96Nanos)
	if err != nil {
		return 0, sum, nil, err
	}
	rows, sum, err = ScanPages(ctx, f, size, pr, canon, legacy)
	if err != nil {
		return 0, sum, nil, err
	}
	if rows != ft.Rows {
		return 0, sum, nil, fmt.Errorf("footer says %d rows, pages hold %d", ft.Rows, rows)
	}
	return rows, sum, canon, nil
}
