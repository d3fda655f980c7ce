package pswap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/inputfiles"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/swap"
)

// WriteOptions tune one write of a partition. The zero value works.
type WriteOptions struct {
	// Commit carries the run id, conflict policy, force flag, grace period
	// and retry bounds of the commit.
	Commit CommitOptions
	// Staging tunes the Parquet files (file size, row groups, compression,
	// upload parts).
	Staging staging.Options
	// Table: schema evolution and the layout of a new table (tableschema.go).
	Table TableOptions
	// Prefetch, when not nil, has Begin start the first reads of the
	// Iceberg publish that follows the commit (Writer.Publish) in the
	// background once its own reads are in: the version hint, the metadata
	// file and its manifest list, which depend on nothing the commit does,
	// are then read while the data uploads, and Publish starts from them
	// (Table.StartPrefetch): three round trips fewer after the commit.
	// Commit reads them again if they are older than a quarter of
	// MaxElapsed by then, so that Publish may still use them. The options
	// are the publish's (its MaxElapsed counts here); the zero
	// PublishOptions work. Nil: Publish reads them after the commit.
	Prefetch *PublishOptions
	// MustExist refuses to create a table: Begin fails with ErrNoTable
	// unless the table's own marker is there (Table.Exists), so that a
	// wrong URL cannot start a new table. It costs no request when the
	// table has its _pswap/table.json (read by Begin anyway). Whatever it
	// says, a table is never created inside another or at a prefix that
	// holds tables (ErrNestedTable).
	MustExist bool

	kind   string // the manifest's kind (manifest.KindMerge); "" for a commit
	append bool   // Partition.Append: the commit adds to the current files (append.go)

	// Set by Table.CommitPartitioned (partitioned.go) for each partition
	// of a run: table.json as the run read it once (nil: Begin reads it),
	// and that a listing found no state of the partition, so Begin reads
	// no pointer (swap.Options.AssumeAbsent).
	table  *tableRead
	absent bool
	// Also set by CommitPartitioned: the generation's id, which the run's
	// batch attempt record names (swap.Options.Generation), and the
	// partition's attempt's start; with it the attempt writes no started record of its
	// own (the batch record is it) nor a no-op's (the batch's end says
	// it), only a failed one.
	generation string
	batchStart time.Time
	// noAttempt writes no attempt record (the audit table's own commits).
	noAttempt bool
}

// swapOptions are the protocol's options of this write.
func (o WriteOptions) swapOptions() swap.Options {
	so := o.Commit.swap()
	so.Kind = o.kind
	so.Append = o.append
	so.Generation = o.generation
	return so
}

// Writer stages one new generation of a partition and commits it.
type Writer struct {
	p      *Partition
	txn    *swap.Txn
	stager *staging.Stager
	opts   WriteOptions
	schema *schemaGuard
	done   bool

	committed Result           // set by a successful Commit, for Publish
	content   manifest.Content // what that commit staged
	prefetch  *lakehouse.Prefetch

	// ctx is Begin's, for the attempt record's write that the first
	// upload starts (identity.go); nil attempt: none is written.
	ctx     context.Context
	attempt *attemptRecord
	lastErr error // the last error of an Add or Write, for the record of an Abort
}

// Begin starts a new generation of the partition: one GET of the pointer.
//
// It also reads the table's metadata (one GET, at the same time): the key
// must fit the table's partition columns (ErrPartitionMismatch), and every
// input is checked against and stored in the table's schema
// (ErrSchemaMismatch).
func (p *Partition) Begin(ctx context.Context, opts WriteOptions) (*Writer, error) {
	if err := manifest.ValidateRunID(opts.Commit.RunID); err != nil {
		return nil, err // before any request
	}
	// The pointer and table.json are independent reads: one round trip
	// for both. Neither decides anything about the other, and nothing is
	// staged before both are in (so the generation's age still counts
	// from before its first file).
	var (
		txn    *swap.Txn
		err    error
		table  tableRead
		so     = opts.swapOptions()
		reader = newTableReader(p.t.st, so) // tableschema.go
	)
	// The pointer's legacy key (package layout) is read, when the
	// pointer's has none, only if table.json does not say that the table
	// was created in the table-level layout (swap.Txn.SettleLegacy).
	so.DeferLegacy = true
	so.AssumeAbsent = opts.absent
	overlap.Do(ctx,
		func() { txn, err = swap.Begin(ctx, p.t.st, p.key, so) },
		func() {
			if opts.table != nil {
				table = *opts.table // read once for the whole run
			} else {
				table = reader.read(ctx, 1)
			}
		},
	)
	if err != nil {
		return nil, err
	}
	if reader.retry(ctx) {
		// Its retries only now that the pointer's read succeeded: a store
		// that is down costs one request more than the pointer's, not
		// the retries of both.
		table = reader.read(ctx, 0)
	}
	noLegacy := table.t != nil && table.t.Layout == tablemeta.LayoutTable
	guard, err := beginSchema(table, p.t.st, p.key, opts, &opts.Staging) // tableschema.go
	if err == nil && guard.create && txn.Base().Pointer == nil {
		// This write would create the table: not inside another, nor
		// above others (tableguard.go). A write to a table makes no
		// request for it. A table it creates has no legacy partition.
		var found bool
		found, err = checkNewTableFound(ctx, p.t.st, opts.MustExist)
		guard.newLayout = err == nil && !found
		noLegacy = noLegacy || guard.newLayout
	}
	if err == nil {
		// The pointer's legacy key (package layout) when the pointer's has
		// none, unless the table cannot have legacy partitions.
		err = txn.SettleLegacy(ctx, noLegacy)
	}
	if err != nil {
		txn.Abort(context.WithoutCancel(ctx))
		return nil, err
	}
	if base := txn.Base().Pointer; base != nil && checksum.Algo(base.ContentChecksum) == checksum.RowSum {
		// The current generation was staged before colsum128: compute its
		// algorithm as well, so that identical rows are still a no-op.
		opts.Staging.LegacyChecksum = true
	}
	var pf *lakehouse.Prefetch
	if opts.Prefetch != nil {
		// Once Begin's reads succeeded (a failing store or a partition
		// that does not fit the table costs no more requests): its three
		// reads then overlap with the upload and the commit's.
		pf = lakehouse.StartPrefetch(ctx, p.t.st, opts.Prefetch.lib(), p.key)
	}
	w := &Writer{p: p, txn: txn, schema: guard, stager: staging.New(ctx, p.t.st, txn.DataPrefix(), opts.Staging), opts: opts, prefetch: pf, ctx: ctx}
	// The attempt's record (run id, identity, start) is written with its
	// first upload, at the same time: see startAttempt.
	w.attempt = newAttemptRecord(p, txn.Generation(), opts)
	return w, nil
}

// startAttempt issues the attempt's record in the background (once), as
// the attempt's first upload begins: its round trip overlaps the data's,
// and an attempt killed while it uploads leaves its run id, identity and
// start time on the store (the audit's started, then failed or abandoned,
// rows).
func (w *Writer) startAttempt() { w.attempt.start(w.ctx) }

// AttemptErr returns the error of writing the attempt's record (nil when
// written, or not yet). It never fails the attempt: only the audit loses
// the attempt's identity, start time and (without a commit) its end.
func (w *Writer) AttemptErr() error { return w.attempt.errorOf() }

// keep records err, the last error of an Add or Write, for the attempt
// record of an Abort that follows.
func (w *Writer) keep(err error) error {
	if err != nil {
		w.lastErr = err
	}
	return err
}

// renewPrefetch reads the publish's metadata again if what the prefetch
// read is too old for the publish to use by the time it runs
// (lakehouse.Prefetch.Renew).
func (w *Writer) renewPrefetch(ctx context.Context) {
	if w.prefetch != nil {
		w.prefetch = w.prefetch.Renew(ctx)
	}
}

// stopPrefetch stops the prefetch: no publish follows.
func (w *Writer) stopPrefetch() {
	w.prefetch.Stop()
	w.prefetch = nil
}

// Generation returns the id of the generation being written.
func (w *Writer) Generation() string { return w.txn.Generation() }

// AlreadyCommitted reports that this run id already committed to the
// partition (it is among the last 100 commits the pointer remembers, current
// or not): Commit would be a no-op (Outcome SameRun), so the caller may skip
// producing data and call Commit at once. It costs no request.
func (w *Writer) AlreadyCommitted() bool { return w.txn.AlreadyCommitted() }

// CreatedTable reports that this write created the table: its Commit or
// Stage wrote the table's metadata (<table>/_pswap/table.json), which was
// not there at Begin. A URL with a typo in it makes a new table this way,
// so a caller may want to say so.
func (w *Writer) CreatedTable() bool {
	w.schema.mu.Lock()
	defer w.schema.mu.Unlock()
	return w.schema.created
}

// Rows returns the number of rows written so far.
func (w *Writer) Rows() int64 { return w.stager.Rows() }

// Write appends Go structs (one schema per generation) through parquet-go.
func Write[T any](w *Writer, rows ...T) error {
	w.startAttempt()
	return w.keep(staging.Write(w.stager, rows...))
}

// WriteRecord appends an Arrow record batch.
func (w *Writer) WriteRecord(rec arrow.RecordBatch) error {
	w.startAttempt()
	return w.keep(w.stager.WriteRecord(rec))
}

// Format is an input file format.
type Format string

const (
	FormatAuto    Format = ""        // by file extension
	FormatParquet Format = "parquet" // copied as-is after its footer is validated
	FormatCSV     Format = "csv"     // converted; header row required
	FormatJSONL   Format = "jsonl"   // JSON Lines, converted
)

// formatOf guesses a format from a file name.
func formatOf(name string) (Format, error) {
	f, err := inputfiles.FormatOf(name)
	return Format(f), err
}

// AddPath stages a local file, or every data file of a folder (sorted by
// name, hidden and _-prefixed entries skipped), by format.
func (w *Writer) AddPath(ctx context.Context, path string, format Format) error {
	return w.keep(w.addPath(ctx, path, format))
}

func (w *Writer) addPath(ctx context.Context, path string, format Format) error {
	w.startAttempt()
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if !fi.IsDir() {
		return w.addFile(ctx, path, format)
	}
	files, err := inputfiles.DataFiles(path, format != FormatAuto)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := w.addFile(ctx, f, format); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) addFile(ctx context.Context, path string, format Format) error {
	if format == FormatAuto {
		f, err := formatOf(path)
		if err != nil {
			return err
		}
		format = f
	}
	if format == FormatParquet {
		return w.stager.AddParquetFile(ctx, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	defer f.Close()
	return w.addReader(ctx, f, filepath.Base(path), format)
}

// AddReader stages CSV, JSON Lines, Parquet or an Arrow IPC stream
// (FormatArrow) from a stream (e.g. stdin); name is used in error messages.
func (w *Writer) AddReader(ctx context.Context, r io.Reader, name string, format Format) error {
	w.startAttempt()
	return w.keep(w.addReader(ctx, r, name, format))
}

func (w *Writer) addReader(ctx context.Context, r io.Reader, name string, format Format) error {
	switch format {
	case FormatCSV:
		return w.stager.AddCSV(ctx, r, name, staging.CSVOptions{})
	case FormatJSONL:
		return w.stager.AddJSONL(ctx, r, name)
	case FormatArrow:
		return w.addArrowStream(ctx, r, name) // arrowstream.go
	case FormatParquet:
		// Parquet needs random access to its footer: spool to a temp file.
		tmp, err := os.CreateTemp("", "pswap-stdin-*.parquet")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		if _, err := io.Copy(tmp, r); err != nil {
			return fmt.Errorf("%w: read %s: %v", ErrBadInput, name, err)
		}
		return w.stager.AddParquetFile(ctx, tmp.Name())
	}
	return fmt.Errorf("%w: %s: format %q", ErrBadInput, name, format)
}

// Commit finishes the files and swaps the new generation in. On any error
// before the swap, what was staged is removed. A commit of no rows fails with
// ErrEmptyCommit unless WriteOptions.Commit.AllowEmpty (or the run id already
// committed: then it is the SameRun no-op).
func (w *Writer) Commit(ctx context.Context) (Result, error) {
	if w.done {
		return Result{}, errors.New("pswap: writer already finished")
	}
	w.done = true
	if !w.attempt.started() && w.AlreadyCommitted() && !w.opts.Commit.Force {
		// A retry of a run that committed: its only record is the no-op's.
		res, err := w.commit(ctx)
		w.endAttempt(ctx, res, err, true)
		return res, err
	}
	w.startAttempt()
	res, err := w.commit(ctx)
	w.endAttempt(ctx, res, err, false)
	return res, err
}

// endAttempt writes the attempt's end to its record when it ended without
// a commit (no-op, failed); a commit only waits for the started record.
func (w *Writer) endAttempt(ctx context.Context, res Result, err error, always bool) {
	switch {
	case err != nil:
		w.failAttempt(ctx, err.Error(), always)
	case res.Changed:
		w.attempt.finish()
	default:
		found, why := noOpOf(res)
		w.attempt.end(ctx, audit.StatusNoOp, found, why, always)
	}
}

func (w *Writer) commit(ctx context.Context) (Result, error) {
	content, err := w.stager.Finish(ctx)
	if err == nil {
		err = w.schema.commit(ctx, w.stager.Schema()) // tableschema.go
	}
	if err != nil {
		w.stopPrefetch()
		w.stager.Abort(context.WithoutCancel(ctx))
		w.txn.Abort(context.WithoutCancel(ctx))
		return Result{}, err
	}
	w.renewPrefetch(ctx)
	res, err := w.txn.Commit(ctx, content)
	if err != nil {
		w.stopPrefetch()
		return res, err
	}
	w.committed, w.content = res, content // for Publish
	return res, nil
}

// Abort discards everything staged.
func (w *Writer) Abort(ctx context.Context) error {
	if w.done {
		return nil
	}
	w.done = true
	w.stopPrefetch()
	err := w.stager.Abort(ctx)
	err = errors.Join(err, w.txn.Abort(ctx))
	why := "aborted"
	if w.lastErr != nil {
		why = "aborted: " + w.lastErr.Error()
	}
	w.failAttempt(ctx, why, false)
	return err
}

// failAttempt rewrites the attempt record as failed, with why; or, when
// the table does not exist (this write would have created it and did
// not), deletes it: a failed write to a new table leaves nothing.
func (w *Writer) failAttempt(ctx context.Context, why string, always bool) {
	if w.schema != nil && w.schema.create && !w.CreatedTable() {
		w.attempt.remove(ctx)
		return
	}
	w.attempt.end(ctx, audit.StatusFailed, "", why, always)
}

// Stage finishes the files without committing, records what was staged and
// the pointer it was staged against (see swap.CommitStaged), and returns the
// generation id for CommitStaged (a later process may commit it). Like
// Commit, it refuses no rows (ErrEmptyCommit) unless AllowEmpty.
func (w *Writer) Stage(ctx context.Context) (string, manifest.Content, error) {
	if w.done {
		return "", manifest.Content{}, errors.New("pswap: writer already finished")
	}
	w.done = true
	w.stopPrefetch() // no publish follows a stage
	w.startAttempt()
	gen, content, err := w.stage(ctx)
	if err != nil {
		w.failAttempt(ctx, err.Error(), false)
	} else {
		w.attempt.finish()
	}
	return gen, content, err
}

func (w *Writer) stage(ctx context.Context) (string, manifest.Content, error) {
	content, err := w.stager.Finish(ctx)
	if err == nil {
		err = w.schema.commit(ctx, w.stager.Schema()) // tableschema.go
	}
	if err != nil {
		w.stager.Abort(context.WithoutCancel(ctx))
		w.txn.Abort(context.WithoutCancel(ctx))
		return "", manifest.Content{}, err
	}
	if content.Rows == 0 && !w.opts.Commit.AllowEmpty {
		w.txn.Abort(context.WithoutCancel(ctx))
		return "", manifest.Content{}, fmt.Errorf("stage %s: %w", w.p.key, ErrEmptyCommit)
	}
	if err := w.txn.Stage(ctx, content); err != nil {
		w.stager.Abort(context.WithoutCancel(ctx))
		w.txn.Abort(context.WithoutCancel(ctx))
		return "", manifest.Content{}, err
	}
	return w.txn.Generation(), content, nil
}

// CommitStaged commits a generation made by Stage, or reserved by Reserve
// (whose files are then adopted where they lie, tuned by adopt), fenced on
// the pointer it was staged against; see swap.CommitStaged. An empty
// staged generation is committed: Stage already required AllowEmpty for
// it; adopted files without rows need opts.AllowEmpty.
func (p *Partition) CommitStaged(ctx context.Context, generation string, opts CommitOptions, adopt ...AdoptOptions) (Result, error) {
	var o AdoptOptions
	if len(adopt) > 0 {
		o = adopt[0]
	}
	o.AllowEmpty = o.AllowEmpty || opts.AllowEmpty
	res, err := swap.CommitStaged(ctx, p.t.st, p.key, generation, opts.swap(), adopter(o, p.key, opts))
	if manifest.ValidateGenerationID(generation) == nil && !errors.Is(err, swap.ErrGenerationNotFound) && !errors.Is(err, swap.ErrNoData) {
		// The end of the attempt that staged (or reserved) the
		// generation, in its record, when it ends without a commit (a
		// conflict, files that cannot be adopted; a no-op); a commit
		// leaves the record of its stage or reservation as it is.
		att := newAttemptRecord(p, generation, WriteOptions{Commit: opts})
		att.ended(ctx, res, err, true)
	}
	return res, err
}
