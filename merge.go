package pswap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/inputfiles"
	"github.com/pswap/pswap/internal/merge"
	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/swap"
)

// Errors of a merge, checked with errors.Is; all match ErrBadInput.
var (
	// ErrDuplicateKey: the input holds a key twice in one partition and
	// MergeOptions.Dedupe is not set. The message names the key.
	ErrDuplicateKey = merge.ErrDuplicateKey
	// ErrBadKey: a key column is missing from the input or the table, or
	// null in a row.
	ErrBadKey = merge.ErrBadKey
	// ErrRoute: a row cannot be routed to a partition, or routes outside
	// MergeOptions.Partition. The message names the row.
	ErrRoute = merge.ErrRoute
)

// NothingToDelete is the outcome of a merge's partition that has no
// generation and whose input rows all delete keys: there is nothing to
// delete, and the partition is left absent (not created empty).
const NothingToDelete Outcome = "nothing-to-delete"

// MergeOptions tune Table.Merge. Keys is required; the zero value of
// everything else works.
type MergeOptions struct {
	// Keys are the columns of the natural key ("order_id", or "tenant",
	// "order_id"): a row of the input replaces the partition's row with
	// the same key.
	Keys []string
	// DeleteWhen marks rows that delete their key: "op=D" (a row whose op
	// column reads D removes the key and is not written). A marker column
	// that is not a column of the table is not written either.
	DeleteWhen string
	// Dedupe is what to do with a key the input holds twice in one
	// partition: "" refuses the input (ErrDuplicateKey), "first" or
	// "last" keep that row (in input order).
	Dedupe string
	// Partition restricts the merge to one partition: a row routed
	// elsewhere is ErrRoute. An input without partition columns (and no
	// TimeColumn) goes there as a whole.
	Partition string
	// TimeColumn routes rows by this timestamp column through the table's
	// layout (dt=2006-01-02 puts 2026-11-29T13:05:00Z into dt=2026-11-29).
	// Without it rows are routed by the table's partition columns, which
	// the input then holds (and which are not written unless they are
	// data columns of the table).
	TimeColumn string
	// Format of every input (FormatAuto: by file extension).
	Format Format
	// Commit: RunID (each partition commits with RunID/<partition>, as
	// commit --partitioned does), retry bounds. OnConflict is ignored: a
	// merge that lost a race always re-derives from the new current
	// generation (never a blind overwrite). Kind is set to
	// manifest.KindMerge.
	Commit CommitOptions
	// Staging tunes the new generations' Parquet files.
	Staging staging.Options
	// Table: what the merge may do to the table's schema, as for a commit
	// (TableOptions): EvolveSchema lets the input add columns (the current
	// rows get them as NULL), FillMissingNullable accepts an input that
	// lacks nullable columns (written as NULL), Declare types columns of a
	// new table (a declared delete marker column is written). Without
	// EvolveSchema a new column is ErrSchemaMismatch, before anything is
	// written.
	Table TableOptions
	// MaxRebases bounds the attempts of one partition after a conflict or
	// a transient failure (default 5); past it the partition fails with
	// the last error (ErrConflict: exit status 3).
	MaxRebases int
	// Parallel is the number of partitions merged at once (default 4).
	Parallel int
	// TempDir holds the merge's scratch folder, pswap-merge-<pid>-*: the
	// input converted to Parquet and one current file at a time (default
	// os.TempDir()). It is removed when the merge returns; a folder that a
	// killed merge left is removed by the next merge in the same TempDir
	// once its process is gone.
	TempDir string
}

// PartitionMerge is what a merge did to one partition.
type PartitionMerge struct {
	Partition string
	RunID     string
	// Result is the commit's (Outcome Committed, SameRun, Identical, ...).
	Result Result
	// Err is why this partition failed (nil: it merged or was a no-op).
	Err error
	// Upserts and Deletes count the input's rows written and keys deleted.
	Upserts, Deletes int64
	// Kept and Removed count the current generation's rows kept and
	// replaced or deleted (in the attempt that committed).
	Kept, Removed int64
	// Rebases counts the attempts repeated after a conflict or a
	// transient failure.
	Rebases int
	// Filled are the nullable columns the input lacked, written as NULL
	// in this partition's new generation (TableOptions.FillMissingNullable).
	Filled []string
	// InputDiffers: the run id had already merged this partition
	// (outcome SameRun: a no-op that keeps what the run merged), and
	// this input would have changed it (a corrected input re-run under the
	// same run id). Commit.Force merges it.
	InputDiffers bool
}

// MergeResult is what Table.Merge did, one entry per partition the input
// touched, sorted by partition.
type MergeResult struct {
	Partitions []PartitionMerge
	InputRows  int64
}

// Merge upserts the rows of inputs (files or folders of CSV, JSON Lines or
// Parquet, as Writer.AddPath reads them) into the partitions they belong
// to, keyed by opts.Keys. The new generation of each partition the input
// touches is its current rows whose key the input does not hold plus the
// input's rows for it (minus the rows that delete their key); partitions
// the input does not touch are neither read nor written. A partition that
// has no generation and for which the input only deletes keys is left
// absent (outcome NothingToDelete), not created empty.
//
// Bad input (a duplicate or null key, a row that cannot be routed, a
// schema the table refuses) fails before anything is written. Each
// partition then commits atomically and independently, fenced on the
// pointer it read: after a conflict it is re-derived from the new current
// generation and the same input (never a lost update), up to MaxRebases
// times. With a run id each partition commits as RunID/<partition>, so a
// re-run after a crash merges only what did not land and a re-run of a
// merge that landed is a no-op (SameRun).
//
// Memory: the input's key set (a 128-bit hash and a row number per key,
// about 60 bytes a key with the map's overhead, plus 5 bytes a row),
// Parallel row groups of current rows being filtered, and the new files'
// row group buffers (staging.Options). The input and current files are
// read from TempDir, one row group at a time.
//
// The error is ErrBadInput for bad input (nothing written), or the join of
// the failed partitions' errors (the others stand: see the result).
func (t *Table) Merge(ctx context.Context, inputs []string, opts MergeOptions) (MergeResult, error) {
	var res MergeResult
	spec, err := t.mergeSpec(inputs, opts)
	if err != nil {
		return res, err
	}
	table, err := t.mergeTable(ctx, spec, opts)
	if err != nil {
		return res, err
	}
	in, err := convertInputs(ctx, inputs, opts, table)
	if err != nil {
		return res, err
	}
	defer in.close()
	plan, err := planMerge(ctx, in, table, spec, opts)
	if err != nil {
		return res, err
	}
	res.InputRows = plan.Rows
	res.Partitions = t.mergePartitions(ctx, plan, in, spec.keys, opts)
	var errs []error
	for _, p := range res.Partitions {
		if p.Err != nil {
			errs = append(errs, p.Err)
		}
	}
	return res, errors.Join(errs...)
}

// mergeSpec is a merge's options, parsed.
type mergeSpec struct {
	keys   []string
	del    merge.DeleteWhen
	dedupe merge.Dedupe
}

// Validate checks the options as Merge does before its first request, in
// this order: Keys (at least one column, none empty or given twice; each
// is trimmed of spaces, so strings.Split of "tenant, order_id" on ","
// works), DeleteWhen (column=value), Dedupe ("", "first" or "last"),
// Commit.RunID (manifest.ValidateRunID) and Partition. The errors of
// Keys, DeleteWhen, Dedupe and Partition match ErrBadInput.
func (o MergeOptions) Validate() error {
	_, err := mergeSpecOf(o)
	return err
}

// mergeSpec parses and checks a merge's options before any request.
func (t *Table) mergeSpec(inputs []string, opts MergeOptions) (mergeSpec, error) {
	spec, err := mergeSpecOf(opts)
	if err != nil {
		return spec, err
	}
	if len(inputs) == 0 {
		return spec, fmt.Errorf("%w: merge: no input", ErrBadInput)
	}
	return spec, nil
}

// mergeSpecOf parses and checks a merge's options (MergeOptions.Validate).
func mergeSpecOf(opts MergeOptions) (mergeSpec, error) {
	var spec mergeSpec
	keys, err := merge.ParseKeys(strings.Join(opts.Keys, ","))
	if err != nil {
		return spec, err
	}
	spec.keys = keys
	if opts.DeleteWhen != "" {
		if spec.del, err = merge.ParseDeleteWhen(opts.DeleteWhen); err != nil {
			return spec, err
		}
	}
	if spec.dedupe, err = merge.ParseDedupe(opts.Dedupe); err != nil {
		return spec, err
	}
	if err := manifest.ValidateRunID(opts.Commit.RunID); err != nil {
		return spec, err
	}
	if opts.Partition != "" {
		if err := partition.Validate(opts.Partition); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

// mergeTable reads the table's metadata (nil: none yet) and checks the
// merge's partition and key columns against it.
func (t *Table) mergeTable(ctx context.Context, spec mergeSpec, opts MergeOptions) (*tablemeta.Table, error) {
	tr := readTable(ctx, t.st, opts.Commit.swap()) // tableschema.go: with the commit's retries
	table, err := tr.t, tr.err
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case errors.Is(err, tablemeta.ErrInvalid):
		return nil, fmt.Errorf("%w: %w", swap.ErrCorrupt, err)
	case err != nil:
		return nil, fmt.Errorf("read table metadata: %w", err)
	}
	if opts.Partition != "" {
		if err := table.CheckKey(opts.Partition); err != nil {
			return nil, err
		}
	}
	for _, k := range spec.keys {
		if _, ok := table.Schema.Field(k); !ok {
			return nil, fmt.Errorf("%w: key column %q is not a column of the table (its columns: %s)", ErrBadKey, k, fieldNames(table.Schema))
		}
	}
	return table, nil
}

// planMerge reads the input once into the merge's plan: its key set and
// the partitions it touches. A schema the table refuses fails here,
// before any partition is written.
func planMerge(ctx context.Context, in *mergeInput, table *tablemeta.Table, spec mergeSpec, opts MergeOptions) (*merge.Plan, error) {
	planner, err := merge.NewPlanner(in.schema, merge.PlanOptions{
		Keys: spec.keys, KeyTypes: keyTypes(table, spec.keys), Delete: spec.del, Dedupe: spec.dedupe,
		Route: merge.RouteOptions{Table: table, Partition: opts.Partition, TimeColumn: opts.TimeColumn},
	})
	if err != nil {
		return nil, err
	}
	if err := in.each(ctx, func(rec arrow.RecordBatch, _ int64) error { return planner.Add(ctx, rec) }); err != nil {
		return nil, err
	}
	// A delete marker is not written unless it is a column of the table
	// (or, for a table the merge creates, a declared one): on a new table
	// it would otherwise become a column for good.
	dropDelete := false
	if !spec.del.IsZero() {
		if table != nil {
			_, dataCol := table.Schema.Field(spec.del.Column)
			dropDelete = !dataCol
		} else {
			dropDelete = !slices.Contains(opts.Table.Declare.Names(), spec.del.Column)
		}
	}
	plan := planner.Finish(dropDelete)
	if table != nil {
		written := schemaWithout(in.schema, plan.Drop)
		popts := tablemeta.PlanOptions{Text: in.text, FillMissing: opts.Table.FillMissingNullable}
		_, err := table.Plan(written, popts)
		if errors.Is(err, tablemeta.ErrSchemaMismatch) && opts.Table.EvolveSchema {
			_, _, err = table.Evolve(written, popts)
		}
		if err != nil {
			return nil, fmt.Errorf("merge input: %w", err)
		}
	}
	return plan, nil
}

// keyTypes are the table's Arrow types of the key columns (nil without a
// table): keys are compared as the table's values, whatever the input's
// types and units.
func keyTypes(table *tablemeta.Table, keys []string) []arrow.DataType {
	if table == nil {
		return nil
	}
	out := make([]arrow.DataType, len(keys))
	for i, k := range keys {
		if f, ok := table.Schema.Field(k); ok {
			out[i] = f.Type.Arrow()
		}
	}
	return out
}

// mergePartitions merges into each partition of the plan, Parallel at a
// time.
func (t *Table) mergePartitions(ctx context.Context, plan *merge.Plan, in *mergeInput, keys []string, opts MergeOptions) []PartitionMerge {
	parts := plan.Partitions()
	out := make([]PartitionMerge, len(parts))
	n := opts.Parallel
	if n <= 0 {
		n = 4
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, key := range parts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = t.mergePartition(ctx, key, plan, in, keys, opts)
		})
	}
	wg.Wait()
	return out
}

func fieldNames(s tablemeta.Schema) string {
	n := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		n[i] = f.Name
	}
	return strings.Join(n, ", ")
}

func schemaWithout(sc *arrow.Schema, drop []string) *arrow.Schema {
	var fs []arrow.Field
	for _, f := range sc.Fields() {
		if !slices.Contains(drop, f.Name) {
			fs = append(fs, f)
		}
	}
	md := sc.Metadata()
	return arrow.NewSchema(fs, &md)
}

// mergePartition merges into one partition: attempts until one commits or
// ends for good, at most MaxRebases repeated.
func (t *Table) mergePartition(ctx context.Context, key string, plan *merge.Plan, in *mergeInput, keys []string, opts MergeOptions) PartitionMerge {
	c := plan.Counts(key)
	pm := PartitionMerge{Partition: key, Upserts: c.Upserts, Deletes: c.Deletes}
	co := opts.Commit
	if co.RunID != "" {
		co.RunID += "/" + key
	}
	pm.RunID = co.RunID
	co.OnConflict = swap.Fail
	// Deleting keys may leave the partition empty, on purpose.
	co.AllowEmpty = co.AllowEmpty || c.Deletes > 0
	maxRebases := opts.MaxRebases
	if maxRebases <= 0 {
		maxRebases = 5
	}
	d := co.swap().WithDefaults()
	pol := retry.Policy{MaxAttempts: maxRebases + 1, BaseDelay: d.BaseDelay, MaxDelay: d.MaxDelay}
	unknown := false
	var unknownGens []string // generations of attempts whose outcome is unknown
	for attempt := 0; ; attempt++ {
		p, err := t.Partition(key)
		var gen string
		if err == nil {
			pm.Result, pm.Kept, pm.Removed, err = t.mergeOnce(ctx, p, plan, in, keys, co, opts, &pm.Filled, &gen, &pm.InputDiffers)
		}
		if err == nil {
			if unknown && !pm.Result.Changed {
				// An earlier attempt's swap may have landed, and this
				// attempt's no-op (same-run, identical) found it: report
				// the swap this merge made, or say it cannot tell.
				if !slices.Contains(unknownGens, pm.Result.Generation) {
					pm.Err = fmt.Errorf("merge %s: %w: an earlier attempt's pointer swap may or may not have applied, and the current generation %s is not one of this merge's (%s)",
						key, ErrOutcomeUnknown, pm.Result.Generation, strings.Join(unknownGens, ", "))
					return pm
				}
				pm.Result.Changed, pm.Result.Outcome, pm.Result.Staged = true, Committed, pm.Result.Generation
			}
			return pm
		}
		// A conflict re-derives from the new current generation; an
		// unknown outcome too (a re-run settles it: same-run with a run
		// id, identical without); a transient failure is retried.
		// A generation past its grace period is never committed: a new
		// attempt has a new one.
		again := errors.Is(err, ErrConflict) || errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, ErrStaleGeneration) || IsRetryable(err)
		if errors.Is(err, ErrOutcomeUnknown) {
			unknown = true
			if gen != "" {
				unknownGens = append(unknownGens, gen)
			}
		}
		if !again || attempt >= maxRebases || ctx.Err() != nil {
			pm.Err = fmt.Errorf("merge %s: %w", key, err)
			if unknown && !errors.Is(err, ErrOutcomeUnknown) {
				// An earlier attempt may have landed: say so, as its
				// own error would have.
				pm.Err = fmt.Errorf("merge %s: %w (and an earlier attempt: %w)", key, err, ErrOutcomeUnknown)
			}
			return pm
		}
		pm.Rebases++
		if !errors.Is(err, ErrConflict) {
			if werr := pol.Wait(ctx, attempt, err); werr != nil {
				pm.Err = fmt.Errorf("merge %s: %w (after: %w)", key, werr, err)
				return pm
			}
		}
	}
}

// mergeOnce is one attempt: Begin (the pointer read is the fence), the
// current generation's rows filtered by the partition's key set, the
// input's rows, Commit.
func (t *Table) mergeOnce(ctx context.Context, p *Partition, plan *merge.Plan, in *mergeInput, keys []string, co CommitOptions, opts MergeOptions, filled *[]string, gen *string, differs *bool) (res Result, kept, removed int64, err error) {
	w, err := p.Begin(ctx, WriteOptions{Commit: co, Staging: opts.Staging, Table: opts.Table, kind: manifest.KindMerge})
	if err != nil {
		return res, 0, 0, err
	}
	*gen = w.Generation()
	if w.AlreadyCommitted() {
		base := w.txn.Base().Pointer
		res, err = w.Commit(ctx)
		if err == nil && res.Outcome == SameRun && base != nil {
			*differs = t.inputDiffers(ctx, p.key, base, co.RunID, plan, in, keys, opts)
		}
		return res, 0, 0, err
	}
	if w.txn.Base().Pointer == nil && plan.Counts(p.key).Upserts == 0 {
		// Only deletes for a partition that never loaded: nothing to
		// delete, and an empty generation would make it look loaded.
		w.Abort(context.WithoutCancel(ctx)) // nothing was staged
		return Result{Partition: p.key, RunID: co.RunID, Outcome: NothingToDelete}, 0, 0, nil
	}
	defer func() {
		if err != nil {
			w.Abort(context.WithoutCancel(ctx))
		}
	}()
	var curGen string
	if cur := w.txn.Base().Pointer; cur != nil {
		curGen = cur.Generation
	}
	kept, removed, err = t.derive(ctx, w, p.key, curGen, plan, in, keys, opts)
	if err != nil {
		return res, kept, removed, err
	}
	res, err = w.Commit(ctx)
	*filled = w.Filled()
	return res, kept, removed, err
}

// derive writes into w the merge of the input into generation gen of
// partition key ("": none): gen's rows whose key the input lacks (widened
// to the table's schema), then the input's rows for the partition.
func (t *Table) derive(ctx context.Context, w *Writer, key, gen string, plan *merge.Plan, in *mergeInput, keys []string, opts MergeOptions) (kept, removed int64, err error) {
	if gen != "" {
		m, err := swap.ReadManifest(ctx, t.st, key, gen)
		if err != nil {
			return 0, 0, err
		}
		set := plan.Set(key)
		h := merge.NewHasher(keys, plan.KeyTypes...)
		wide := widenTo(w.schema.stored(), schemaWithout(in.schema, plan.Drop), in.text, opts.Table)
		for _, f := range swap.Files(t.st, m) {
			k, r, err := t.filterCurrent(ctx, w, f, in.dir, h, set, wide)
			kept, removed = kept+k, removed+r
			if err != nil {
				return kept, removed, fmt.Errorf("current generation %s: %w", gen, err)
			}
		}
	}
	err = in.each(ctx, func(rec arrow.RecordBatch, first int64) error {
		mask, n := plan.InputMask(rec, first, key)
		if n == 0 {
			return nil
		}
		sel, err := merge.Select(ctx, rec, mask, n, plan.Drop)
		if err != nil {
			return err
		}
		defer sel.Release()
		return w.WriteRecord(sel)
	})
	return kept, removed, err
}

// inputDiffers reports whether merging the input into the generation that
// run runID committed to partition key (per the pointer's history) would
// change it: a re-run under the same run id with another input, whose
// SameRun no-op would otherwise pass unnoticed. The merge is derived into
// the merge's scratch folder (nothing is written to the store; it costs
// about a merge of the partition); any failure reports false, as the
// warning is advice.
func (t *Table) inputDiffers(ctx context.Context, key string, base *manifest.Pointer, runID string, plan *merge.Plan, in *mergeInput, keys []string, opts MergeOptions) bool {
	var gen string
	for _, h := range base.History {
		if h.RunID == runID {
			gen = h.Generation
			break
		}
	}
	if gen == "" {
		return false
	}
	m, err := swap.ReadManifest(ctx, t.st, key, gen)
	if err != nil {
		return false
	}
	scratch, err := os.MkdirTemp(in.dir, "rederive-*")
	if err != nil {
		return false
	}
	defer os.RemoveAll(scratch)
	mem, err := filestore.New(scratch)
	if err != nil {
		return false
	}
	if table, _, err := tablemeta.Read(ctx, t.st); err == nil {
		if _, _, _, err := tablemeta.Create(ctx, mem, table); err != nil {
			return false
		}
	}
	p, err := NewTable(mem).Partition(key)
	if err != nil {
		return false
	}
	so := opts.Staging
	so.LegacyChecksum = checksum.Algo(m.ContentChecksum) == checksum.RowSum
	w, err := p.Begin(ctx, WriteOptions{Staging: so, Table: opts.Table, kind: manifest.KindMerge})
	if err != nil {
		return false
	}
	defer w.Abort(context.WithoutCancel(ctx))
	if _, _, err := t.derive(ctx, w, key, gen, plan, in, keys, opts); err != nil {
		return false
	}
	content, err := w.stager.Finish(ctx)
	if err != nil {
		return false
	}
	return !content.SameContent(m.ContentChecksum, m.Rows)
}

// filterCurrent downloads one file of the current generation into dir and
// writes its rows whose key is not in set, a row group at a time.
func (t *Table) filterCurrent(ctx context.Context, w *Writer, f swap.FileRef, dir string, h *merge.Hasher, set map[merge.Hash]int64, wide *tablemeta.Table) (kept, removed int64, err error) {
	tmp, err := os.CreateTemp(dir, "current-*.parquet")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	rc, _, err := t.st.Get(ctx, f.Key)
	if err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(tmp, rc)
	rc.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", f.URI, err)
	}
	if n != f.Size {
		return 0, 0, fmt.Errorf("%w: %s holds %d bytes, its manifest says %d", ErrCorrupt, f.URI, n, f.Size)
	}
	err = eachBatch(ctx, tmp, n, func(rec arrow.RecordBatch) error {
		cols, err := h.Columns(rec.Schema(), f.URI)
		if err != nil {
			return err
		}
		mask, k, err := merge.CurrentMask(ctx, rec, h, cols, set)
		if err != nil {
			return err
		}
		kept += int64(k)
		removed += rec.NumRows() - int64(k)
		if k == 0 {
			return nil
		}
		sel, err := merge.Select(ctx, rec, mask, k, nil)
		if err != nil {
			return err
		}
		defer sel.Release()
		sel = widen(sel, wide)
		defer sel.Release()
		return w.WriteRecord(sel)
	})
	return kept, removed, err
}

// widenTo is the table the current rows are widened to: the table as the
// attempt read it, with the columns the input adds when the merge evolves
// the schema (nil: no table metadata).
func widenTo(table *tablemeta.Table, written *arrow.Schema, text bool, to TableOptions) *tablemeta.Table {
	if table == nil || !to.EvolveSchema {
		return table
	}
	if ev, _, err := table.Evolve(written, tablemeta.PlanOptions{Text: text, FillMissing: to.FillMissingNullable}); err == nil {
		return ev
	}
	return table // the write refuses the input, naming the column
}

// widen returns rec (retained: the caller releases it) with the columns
// of table that it lacks, as NULL: the rows of a file written before the
// schema evolved, read as the table's schema reads them (readers see
// NULL there too). Columns added by an evolution are always nullable.
func widen(rec arrow.RecordBatch, table *tablemeta.Table) arrow.RecordBatch {
	if table == nil {
		rec.Retain()
		return rec
	}
	sc := rec.Schema()
	fields := slices.Clone(sc.Fields())
	cols := slices.Clone(rec.Columns())
	var added []arrow.Array
	for _, f := range table.Schema.Fields {
		if sc.HasField(f.Name) || !f.Nullable {
			continue
		}
		af := f.Arrow()
		a := array.MakeArrayOfNull(memory.DefaultAllocator, af.Type, int(rec.NumRows()))
		added = append(added, a)
		fields = append(fields, arrow.Field{Name: f.Name, Type: af.Type, Nullable: true})
		cols = append(cols, a)
	}
	if len(added) == 0 {
		rec.Retain()
		return rec
	}
	md := sc.Metadata()
	out := array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows())
	for _, a := range added {
		a.Release()
	}
	return out
}

// mergeBatchRows is the rows of one record batch read from a Parquet file.
const mergeBatchRows = 64 << 10

// eachBatch reads a Parquet file a row group at a time, in batches.
func eachBatch(ctx context.Context, r io.ReaderAt, size int64, fn func(arrow.RecordBatch) error) error {
	pr, err := pqscan.Open(r, size)
	if err != nil {
		return err
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: mergeBatchRows}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	for rg := range pr.NumRowGroups() {
		rr, err := fr.GetRecordReader(ctx, nil, []int{rg})
		if err != nil {
			return err
		}
		for rr.Next() {
			if err := fn(rr.RecordBatch()); err != nil {
				rr.Release()
				return err
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}

// mergeInput is the merge's input converted to Parquet in a scratch
// folder (CSV and JSON Lines read with the table's types, Parquet copied
// as it is, every file checked as a commit checks it).
type mergeInput struct {
	dir    string
	files  []string
	schema *arrow.Schema
	text   bool // converted from CSV or JSON Lines
}

func (in *mergeInput) close() { os.RemoveAll(in.dir) }

// each calls fn with every batch of the input in order, and the input
// row number (0-based) of its first row.
func (in *mergeInput) each(ctx context.Context, fn func(rec arrow.RecordBatch, first int64) error) error {
	var row int64
	for _, name := range in.files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err == nil {
			err = eachBatch(ctx, f, fi.Size(), func(rec arrow.RecordBatch) error {
				err := fn(rec, row)
				row += rec.NumRows()
				return err
			})
		}
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// convertInputs converts the inputs into a scratch folder. Text columns
// named like the table's columns are read as the table's types, the
// partition columns as strings.
func convertInputs(ctx context.Context, inputs []string, opts MergeOptions, table *tablemeta.Table) (_ *mergeInput, err error) {
	dir, err := newMergeScratch(opts.TempDir) // mergescratch.go
	if err != nil {
		return nil, err
	}
	in := &mergeInput{dir: dir}
	defer func() {
		if err != nil {
			in.close()
		}
	}()
	fs, err := filestore.New(dir)
	if err != nil {
		return nil, err
	}
	so := staging.Options{Compression: staging.Zstd, TextTypes: map[string]arrow.DataType{}}
	for _, c := range opts.Table.Declare.cols {
		so.TextTypes[c.Name] = c.Type.Arrow()
	}
	if table != nil {
		for _, f := range table.Schema.Fields {
			so.TextTypes[f.Name] = f.Type.Arrow()
		}
		for _, c := range table.PartitionColumns {
			if _, data := table.Schema.Field(c.Name); !data {
				so.TextTypes[c.Name] = arrow.BinaryTypes.String
			}
		}
	}
	st := staging.New(ctx, fs, "input/", so)
	var files []string
	for _, p := range inputs {
		fi, err := os.Stat(p)
		if err != nil {
			st.Abort(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		more, err := inputfiles.DataFiles(p, opts.Format != FormatAuto)
		if err != nil {
			st.Abort(context.WithoutCancel(ctx))
			return nil, err
		}
		files = append(files, more...)
	}
	for _, p := range files {
		format := opts.Format
		if format == FormatAuto {
			if format, err = formatOf(p); err != nil {
				st.Abort(context.WithoutCancel(ctx))
				return nil, err
			}
		}
		if format != FormatParquet {
			in.text = true
		}
		if err := addInput(ctx, st, p, format); err != nil {
			st.Abort(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	c, err := st.Finish(ctx)
	if err != nil {
		return nil, err
	}
	if c.Rows == 0 {
		return nil, fmt.Errorf("%w: %w: the merge input holds no rows", ErrBadInput, ErrEmptyCommit)
	}
	in.schema = st.Schema()
	for _, f := range c.Files {
		in.files = append(in.files, filepath.Join(dir, "input", filepath.FromSlash(f.Path)))
	}
	return in, nil
}

func addInput(ctx context.Context, st *staging.Stager, path string, format Format) error {
	if format == FormatParquet {
		return st.AddParquetFile(ctx, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	defer f.Close()
	switch format {
	case FormatCSV:
		return st.AddCSV(ctx, f, filepath.Base(path), staging.CSVOptions{})
	case FormatJSONL:
		return st.AddJSONL(ctx, f, filepath.Base(path))
	}
	return fmt.Errorf("%w: %s: format %q", ErrBadInput, path, format)
}
