package pqscan

import (
	"github.com/pswap/pswap/internal/checksum"

	"context"
	"errors"
	"fmt"
	"io"
)

// RowScan computes the row-level content checksum of Parquet files read in
// full, the same one a generation staged from those files would record, so
// that adopted files can be compared row for row with any generation. The
// zero value is ready and computes colsum128 (what staging records); it is
// not safe for concurrent use.
type RowScan struct {
	// Algo is the checksum algorithm: checksum.ColSum (or "") or
	// checksum.RowSum (that of generations staged before colsum128). Set it
	// before the first Add.
	Algo string
	// Int96Nanos reads INT96 timestamp columns as Arrow's nanoseconds
	// (timestamp[ns, tz=UTC]), as staging read them before it read them
	// in microseconds as Spark does: the content checksum of a generation
	// staged then. Values outside 1677..2262 fail.
	Int96Nanos bool

	schema *Schema
	rows   int64
	sum    checksum.Sums
}

// Add reads one whole file of size bytes; name appears in errors. All
// files must share one schema (a mismatch fails with ErrSchemaMismatch
// naming the file).
func (r *RowScan) Add(ctx context.Context, f interface {
	io.ReaderAt
	io.Seeker
}, size int64, name string) error {
	if r.Algo != "" && r.Algo != checksum.ColSum && r.Algo != checksum.RowSum {
		return fmt.Errorf("%w: content checksum algorithm %q", ErrUnsupported, r.Algo)
	}
	rows, sum, canon, err := Scan(ctx, f, size, r.Algo == checksum.RowSum, r.Int96Nanos)
	if err != nil {
		if errors.Is(err, ErrUnsupported) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s: %w", name, err)
		}
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	if r.schema == nil {
		r.schema = canon
	} else if !r.schema.Equal(canon) {
		return Mismatch("Parquet file "+name, canon, r.schema)
	}
	r.rows += rows
	r.sum.Add(sum)
	return nil
}

// Checksum returns the rows read and the content checksum of all of them,
// in r.Algo.
func (r *RowScan) Checksum() (rows int64, sum string) {
	schema := ""
	if r.schema != nil {
		schema = r.schema.Text
	}
	if r.Algo == checksum.RowSum {
		return r.rows, checksum.RowSumOf(schema, r.rows, r.sum.Row)
	}
	return r.rows, checksum.ColSumOf(schema, r.rows, r.sum.Col)
}
