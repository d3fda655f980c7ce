package pswap

import (
	"context"
	"errors"
	"fmt"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// WouldCommit is the outcome of a dry run (Partition.DryRun) whose commit
// would change the partition.
const WouldCommit Outcome = "would-commit"

// DryRun is what a write would do (Partition.DryRun). Nothing was written
// to the table.
type DryRun struct {
	// Outcome is WouldCommit, Identical (the input's rows are the current
	// generation's: the commit would be a no-op; never with
	// CommitOptions.Force) or SameRun (the run id already committed to the
	// partition: the commit would be a no-op, and the input was not read).
	Outcome Outcome
	// Current is the partition's current generation ("" before its first
	// commit), with its rows and bytes.
	Current                   string
	CurrentRows, CurrentBytes int64
	// Rows, Bytes and Files are what the commit would stage (zero for
	// SameRun).
	Rows, Bytes int64
	Files       int
	// RunGeneration is the generation that the write's run id
	// (CommitOptions.RunID) already committed to the partition, when the
	// pointer remembers one (Outcome SameRun, or any outcome with
	// CommitOptions.Force), and RunRows its rows. With Force, InputDiffers
	// then says whether the input's rows differ from it: a retry of that
	// run without Force keeps what the run committed (SameRun), which is
	// right for a retry and wrong for a re-run meant to pick up corrected
	// input.
	RunGeneration string
	RunRows       int64
	InputDiffers  bool
}

// DryRun reports what a write of the inputs that add stages would do, and
// writes nothing to the table. Like Begin it reads the partition's pointer
// and the table's metadata (and refuses what Begin refuses: a key that
// does not fit, a table where none can be, WriteOptions.MustExist); then,
// unless the run id already committed, it calls add with a Writer on a
// copy of the table's metadata in memory, which converts the inputs
// exactly as a commit would (the table's types, the same content
// checksum) without uploading them, and compares the result with the
// current generation. Its cost is Begin's two reads, plus one GET of the
// run's manifest with CommitOptions.Force and a run id the pointer
// remembers.
func (p *Partition) DryRun(ctx context.Context, opts WriteOptions, add func(*Writer) error) (DryRun, error) {
	opts.Prefetch = nil // no publish follows
	w, err := p.Begin(ctx, opts)
	if err != nil {
		return DryRun{}, err
	}
	base, already, meta := w.txn.Base().Pointer, w.AlreadyCommitted(), w.schema.base
	// Begin only read: Abort of the empty generation deletes nothing.
	if err := w.Abort(ctx); err != nil {
		return DryRun{}, err
	}
	var d DryRun
	if base != nil {
		d.Current, d.CurrentRows, d.CurrentBytes = base.Generation, base.Rows, base.Bytes
		if id := opts.Commit.RunID; id != "" {
			for _, h := range base.History {
				if h.RunID == id {
					d.RunGeneration, d.RunRows = h.Generation, h.Rows
					break
				}
			}
		}
	}
	if already {
		d.Outcome = SameRun
		return d, nil
	}
	// As Begin does on the real table: a generation committed before
	// colsum128 compares by its own algorithm too.
	legacy := base != nil && checksum.Algo(base.ContentChecksum) == checksum.RowSum
	var run *manifest.Manifest
	if d.RunGeneration != "" {
		run, err = swap.ReadManifest(ctx, p.t.st, p.key, d.RunGeneration)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return DryRun{}, err
		}
		legacy = legacy || run != nil && checksum.Algo(run.ContentChecksum) == checksum.RowSum
	}
	opts.Staging.LegacyChecksum = opts.Staging.LegacyChecksum || legacy
	content, err := p.stageInMemory(ctx, meta, opts, add)
	if err != nil {
		return DryRun{}, err
	}
	d.Rows, d.Bytes, d.Files = content.Rows, content.Bytes, len(content.Files)
	d.Outcome = WouldCommit
	if base != nil && !opts.Commit.Force && content.SameContent(base.ContentChecksum, base.Rows) {
		d.Outcome = Identical
	}
	if d.RunGeneration != "" {
		same := content.Rows == d.RunRows
		if run != nil && (checksum.Algo(run.ContentChecksum) == checksum.Algo(content.ContentChecksum) || len(content.Equivalent) > 0) {
			same = content.SameContent(run.ContentChecksum, run.Rows)
		}
		d.InputDiffers = !same
	}
	return d, nil
}

// stageInMemory stages what add adds into a memory store holding a copy of
// the table's metadata meta (nil: none yet), so that CSV and JSON Lines are
// read with the table's types and inputs promoted as a commit does, and
// returns what a commit would stage.
func (p *Partition) stageInMemory(ctx context.Context, meta *tablemeta.Table, opts WriteOptions, add func(*Writer) error) (manifest.Content, error) {
	mst := memstore.New()
	if meta != nil {
		if _, _, _, err := tablemeta.Create(ctx, mst, meta); err != nil {
			return manifest.Content{}, fmt.Errorf("dry run: %w", err)
		}
	}
	mpart, err := NewTable(mst).Partition(p.key)
	if err != nil {
		return manifest.Content{}, err
	}
	opts.MustExist = false // the real table was checked by Begin
	mw, err := mpart.Begin(ctx, opts)
	if err != nil {
		return manifest.Content{}, err
	}
	if err := add(mw); err != nil {
		_ = mw.Abort(context.WithoutCancel(ctx))
		return manifest.Content{}, err
	}
	_, content, err := mw.Stage(ctx)
	return content, err
}
