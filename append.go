package pswap

import (
	"context"

	"github.com/pswap/pswap/swap"
)

// ErrAppendNeedsRunID: Partition.Append was called without
// WriteOptions.Commit.RunID, which is what makes an append exactly once.
// It matches ErrBadInput.
var ErrAppendNeedsRunID = swap.ErrAppendNeedsRunID

// Append starts an append to the partition: a Writer like Begin's, whose
// Commit adds the rows written to the partition's current rows instead of
// replacing them, as a new generation fenced on the one Append read (a
// lost race is rebased on the new current generation and tried again, so
// racing appends of different runs all land).
//
// opts.Commit.RunID is required (ErrAppendNeedsRunID): it makes the
// append exactly once. Once an attempt of the run appended, every later
// attempt is a no-op, however many commits landed since: Writer.
// AlreadyCommitted says so before anything is written, and Commit returns
// Outcome SameRun with Result.RunGeneration naming the generation that
// took the run's files. A replacing commit or a rollback of the partition
// works as always: the run's rows go with the generations that hold them.
//
// The current files are carried, never copied: the new generation lists
// them beside the run's, which are written into the current generation's
// data folder. opts.Commit.OnConflict does not apply (an append never
// overwrites anything), nor does the identical-content no-op: the same
// rows appended under another run id are appended again.
func (p *Partition) Append(ctx context.Context, opts WriteOptions) (*Writer, error) {
	opts.append = true
	return p.Begin(ctx, opts)
}
