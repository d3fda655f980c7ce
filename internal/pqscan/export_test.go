package pqscan

import (
	"context"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/pswap/pswap/internal/checksum"
)

// Hooks for the external tests (package pqscan_test: they use
// internal/testing/pqfiles, which imports this package).

// SetFastScan turns the fast scan on or off (tests compare the two paths).
func SetFastScan(on bool) { noFastScan = !on }

// FastScanner is the fast scan of one file.
type FastScanner = fastScanner

// NewFastScanner is newFastScanner.
func NewFastScanner(md *metadata.FileMetaData, canon *Schema) *FastScanner {
	return newFastScanner(md, canon)
}

// RowGroup is rowGroup.
func (s *fastScanner) RowGroup(ctx context.Context, rg *file.RowGroupReader, sum *checksum.Sum) (int64, error) {
	return s.rowGroup(ctx, rg, sum)
}
