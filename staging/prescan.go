package staging

import (
	"context"

	"github.com/pswap/pswap/internal/pqscan"
)

// Prescan is the full check of an existing Parquet file (what
// AddParquetFile's default check computes: footer, page CRCs, every page
// decoded and hashed) started before the file is added, so that the
// decoding overlaps what precedes the add (a command's start, opening the
// table, Begin's reads) instead of all of it running beside the upload.
type Prescan struct{ p *pqscan.Prescan }

// StartPrescan starts the full check of the Parquet file at path in the
// background, on one core until the file is added. The next
// AddParquetFile of that path in this process takes its result in place of
// its own scan when it opens the same file unchanged (same file, size and
// modification time) and computes the same checksum (CheckFull, without
// LegacyChecksum); otherwise it scans as always, and stops the prescan.
// It returns nil (a Prescan whose Stop does nothing) when the file cannot
// be opened: AddParquetFile reports that. Stop it when it is no longer
// wanted (a commit that ends without adding the file); ctx bounds it too.
func StartPrescan(ctx context.Context, path string) *Prescan {
	p := pqscan.StartPrescan(ctx, path)
	if p == nil {
		return nil
	}
	return &Prescan{p}
}

// Stop cancels the prescan if it still runs and forgets it. Safe on nil
// and after the file was added.
func (p *Prescan) Stop() {
	if p != nil {
		p.p.Stop()
	}
}
