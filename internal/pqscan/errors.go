package pqscan

import (
	"fmt"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/errkind"
)

// Sentinel errors, checked with errors.Is; package staging re-exports them.
var (
	// ErrCorrupt: a file is not a valid Parquet file (bad footer,
	// truncated, undecodable pages).
	ErrCorrupt = errkind.New("corrupt parquet file", errkind.ErrBadInput)
	// ErrPageChecksum: a page of a Parquet file carries a CRC that does
	// not match its bytes. It matches ErrCorrupt too.
	ErrPageChecksum = fmt.Errorf("%w: page checksum mismatch", ErrCorrupt)
	// ErrSchemaMismatch: an input's schema differs from the generation's
	// (or, for RowScan, from the files' before it). The message shows both
	// schemas.
	ErrSchemaMismatch = errkind.New("schema mismatch", errkind.ErrBadInput)
	// ErrUnsupported: a column type the content checksum cannot hash.
	ErrUnsupported = checksum.ErrUnsupported
)
