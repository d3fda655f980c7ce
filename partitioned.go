package pswap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/inputfiles"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// PartitionedOptions tune Table.CommitPartitioned. The zero value works.
type PartitionedOptions struct {
	// Write are the options of every partition's commit. A Commit.RunID
	// becomes RUN/<partition> for each partition, so that running the same
	// backfill again after a crash is a no-op for the partitions that
	// landed.
	Write WriteOptions
	// Parallel bounds the partitions committed at once (default 4).
	Parallel int
	// Publish, when not nil, publishes the table's views once after the
	// commits (Table.Publish, with these options): every partition's
	// pointer, those unchanged or failed included, is then in every view.
	// It reads the pointers but not the manifests the commits just wrote.
	// Nil: nothing is published.
	Publish *PublishOptions
}

// PartitionOutcome is one partition's outcome in a CommitPartitioned run.
type PartitionOutcome struct {
	// Partition is the canonical key ("dt=2026-11-29").
	Partition string
	// Source is the local folder or store prefix (s3://, gs://, az://…)
	// its files came from.
	Source string
	// RunID is the run id its commit was made with (RUN/<partition>).
	RunID string
	// Result is the commit's result when Err is nil.
	Result Result
	// Err is why the partition was not committed (nil: committed or a
	// no-op). The other partitions are committed regardless.
	Err error

	// started and ended are when its attempt began and ended (the
	// writer's clock), for the batch record's end (partitionedattempt.go).
	started, ended time.Time
}

// PartitionedResult is what CommitPartitioned did.
type PartitionedResult struct {
	// Partitions are the partitions found, in key order.
	Partitions []PartitionOutcome
	// Committed, Unchanged and Failed count them by outcome.
	Committed, Unchanged, Failed int
	// Published is the publish's result when PartitionedOptions.Publish
	// asked for one; PublishErr says what of it failed.
	Published  *PublishResult
	PublishErr error
	// AttemptErr is the error of writing the run's batch attempt record
	// (nil when written). It never fails the run: only the audit loses
	// the attempts' run ids, identity and start, and the no-ops.
	AttemptErr error
}

// defaultPartitionedParallel is PartitionedOptions.Parallel's default.
const defaultPartitionedParallel = 4

// CommitPartitioned commits every key=value folder of source as its own
// partition, each atomically (a partition's commit is the one pointer
// swap of a Begin and Commit): source is a local folder or a prefix in the
// table's object store (the output of an engine's PARTITION_BY or
// partitionBy): s3:// on S3, gs:// on GCS, az://, abfss:// or wasbs:// on
// Azure. A local partition's files are staged as Writer.AddPath stages a
// folder; a store partition's are copied server-side within the table's
// store (Partition.CommitObjects, whose rules on schemes, buckets and
// containers apply: a source they refuse is ErrBadInput with nothing
// committed).
//
// The folders are checked before anything is committed: every one must be
// key=value segments with the same columns, and fit the table's partition
// columns; a folder of Spark's null partition (__HIVE_DEFAULT_PARTITION__)
// or two spellings of one value are refused. Such an error (ErrBadInput,
// partition.ErrInvalidKey) is returned with nothing committed. Once the
// commits start, each partition's failure is its PartitionOutcome.Err and
// the others go on; the error returned is then nil.
//
// The run's requests: table.json is read once for all partitions (not by
// each Begin), and one delimited listing of the partitions' state (a page
// per 1,000 partitions) finds those that have none, whose Begin then
// reads no pointer: their commit creates the pointer only if it is still
// absent, so a partition another writer created meanwhile is a lost race
// like any other (ErrConflict under the default policy). A new partition
// of a local folder thus costs its data files' PUTs, its manifest and its
// pointer, and, with Publish, one GET of its pointer. A table this run
// creates is created by the first partition's commit, alone, before the
// others start.
//
// The audit's attempt records: the run writes one record for all its
// partitions (a batch record, one PUT per 1,000 partitions, sent beside
// the first partition's work), naming each partition's generation,
// allocated before it begins, with the run id RUN/<partition>,
// Write.Commit.Identity and the run's start; it is written again at the
// end only when some partition was a no-op. A partition whose attempt
// fails writes its own record. PartitionedResult.AttemptErr is the batch
// record's error, which fails nothing.
func (t *Table) CommitPartitioned(ctx context.Context, source string, opts PartitionedOptions) (PartitionedResult, error) {
	if opts.Parallel <= 0 {
		opts.Parallel = defaultPartitionedParallel
	}
	if err := manifest.ValidateRunID(opts.Write.Commit.RunID); err != nil {
		return PartitionedResult{}, err
	}
	base := strings.TrimRight(source, "/")
	remote := IsStoreURI(base)
	var (
		parts map[string]string // key -> local folder or store prefix
		err   error
	)
	if remote {
		parts, err = remotePartitions(ctx, t, base)
	} else {
		parts, err = localPartitions(base)
	}
	if err != nil {
		return PartitionedResult{}, err
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range parts {
			if !yield(k) {
				return
			}
		}
	})
	tr := readTable(ctx, t.st, opts.Write.swapOptions())
	existing, err := checkPartitionLayout(ctx, t, keys, tr)
	if err != nil {
		return PartitionedResult{}, err
	}
	var absent map[string]bool
	switch {
	case remote:
	case errors.Is(tr.err, store.ErrNotFound):
		// No table.json: the listing of the layout's check found every
		// committed partition, of either layout.
		absent = absentFrom(keys, existing)
	case tr.err == nil && tr.t.Layout == tablemeta.LayoutTable:
		// No legacy partitions: a partition whose folder under
		// _pswap/p/ does not exist has no pointer.
		if absent, err = absentPartitions(ctx, t.st, keys); err != nil {
			absent = nil // read each pointer, as Begin does
		}
	}
	wo := opts.Write
	if !remote && (tr.err == nil || errors.Is(tr.err, store.ErrNotFound)) {
		wo.table = &tr
	}
	var gens map[string]string
	var batch *batchRecord
	if !wo.noAttempt {
		// One attempt record for every partition of the run, sent beside
		// the first partition's work (batchRecord).
		batch, gens = startBatch(ctx, t.st, keys, wo)
		wo.batchStart = batch.startedAt()
	}
	out := make([]PartitionOutcome, len(keys))
	rest := keys
	if errors.Is(tr.err, store.ErrNotFound) && !remote {
		// The first commit creates table.json (the table's layout and
		// schema): made alone, and its document serves the others, which
		// would otherwise race to create it.
		o := wo
		o.absent, o.generation = absent[keys[0]], gens[keys[0]]
		var doc tableRead
		out[0], doc = t.commitPartition(ctx, keys[0], parts[keys[0]], remote, o)
		if doc.t == nil {
			doc = readTable(ctx, t.st, opts.Write.swapOptions())
		}
		wo.table = nil
		if doc.err == nil {
			wo.table = &doc
		}
		rest = keys[1:]
	}
	off := len(keys) - len(rest)
	var wg sync.WaitGroup
	sem := make(chan struct{}, opts.Parallel)
	for i, key := range rest {
		sem <- struct{}{}
		batch.refresh(ctx) // once per audit.BatchRefresh of a long run
		wg.Go(func() {
			defer func() { <-sem }()
			o := wo
			o.absent, o.generation = absent[key], gens[key]
			out[off+i], _ = t.commitPartition(ctx, key, parts[key], remote, o)
		})
	}
	wg.Wait()
	res := PartitionedResult{Partitions: out}
	var (
		written []*manifest.Manifest
		swapped []lakehouse.Commit
	)
	for _, p := range out {
		switch {
		case p.Err != nil:
			res.Failed++
		case p.Result.Changed:
			res.Committed++
			if p.Result.Manifest != nil {
				written = append(written, p.Result.Manifest)
			}
			if !p.Result.SwappedAt.IsZero() {
				swapped = append(swapped, lakehouse.Commit{Partition: p.Partition, Generation: p.Result.Generation, Seq: p.Result.Seq, SwappedAt: p.Result.SwappedAt})
			}
		default:
			res.Unchanged++
		}
	}
	// The no-ops' end in the batch record, at the same time as the
	// publish. A run that was to create the table and committed nothing
	// leaves nothing, if the table is still not there.
	ended := overlap.Start(ctx, func() {
		if errors.Is(tr.err, store.ErrNotFound) && res.Committed == 0 && res.Unchanged == 0 {
			batch.removeUnlessTable(ctx)
		} else {
			batch.end(ctx, out)
		}
	})
	if opts.Publish != nil {
		po := *opts.Publish
		po.manifests, po.commits = written, swapped
		r, err := t.Publish(ctx, po)
		res.Published, res.PublishErr = &r, err
	}
	ended()
	res.AttemptErr = batch.errorOf()
	return res, nil
}

// commitPartition commits one partition's folder (local) or prefix (S3)
// with the run id RUN/<partition>. It also returns table.json as the
// commit left it, when it knows it (a local partition's commit).
func (t *Table) commitPartition(ctx context.Context, key, src string, remote bool, wo WriteOptions) (PartitionOutcome, tableRead) {
	if wo.Commit.RunID != "" {
		wo.Commit.RunID += "/" + key
	}
	out := PartitionOutcome{Partition: key, Source: src, RunID: wo.Commit.RunID, started: env.From(ctx).Now()}
	if !wo.batchStart.IsZero() {
		// The partition's own start, for a record of its own (a failure)
		// and the batch record's end (a no-op).
		wo.batchStart = out.started
	}
	var doc tableRead
	out.Result, doc, out.Err = t.commitOne(ctx, key, src, remote, wo)
	out.ended = env.From(ctx).Now()
	return out, doc
}

func (t *Table) commitOne(ctx context.Context, key, src string, remote bool, wo WriteOptions) (Result, tableRead, error) {
	part, err := t.Partition(key)
	if err != nil {
		return Result{}, tableRead{}, err
	}
	if remote {
		res, err := part.CommitObjects(ctx, []string{src + "/"}, wo)
		return res, tableRead{}, err
	}
	w, err := part.Begin(ctx, wo)
	if err != nil {
		return Result{}, tableRead{}, err
	}
	if !w.AlreadyCommitted() {
		if err := w.AddPath(ctx, src, FormatAuto); err != nil {
			w.Abort(context.WithoutCancel(ctx))
			return Result{}, tableRead{}, err
		}
	} // else our run id committed here before: nothing to upload, and the
	// commit is the SameRun no-op describing the current generation.
	res, err := w.Commit(ctx)
	var doc tableRead
	if d, tag := w.schema.document(); err == nil && d != nil && tag != "" {
		doc = tableRead{t: d, etag: tag}
	}
	return res, doc, err
}

// absentPartitions lists the table's partition folders (_pswap/p/, one
// delimited listing: a page per 1,000 folders) and returns the keys whose
// first segment's folder is not there: they have no pointer.
func absentPartitions(ctx context.Context, st store.Store, keys []string) (map[string]bool, error) {
	present := map[string]bool{}
	for e, err := range store.ListDelimited(ctx, st, layout.PartitionsRoot, "/") {
		if err != nil {
			return nil, err
		}
		if e.IsPrefix {
			present[strings.TrimSuffix(strings.TrimPrefix(e.Key, layout.PartitionsRoot), "/")] = true
		}
	}
	absent := make(map[string]bool, len(keys))
	for _, k := range keys {
		first, _, _ := strings.Cut(k, "/")
		if !present[first] {
			absent[k] = true
		}
	}
	return absent, nil
}

// absentFrom returns the keys whose first segment is no committed
// partition's of existing.
func absentFrom(keys, existing []string) map[string]bool {
	present := map[string]bool{}
	for _, k := range existing {
		first, _, _ := strings.Cut(k, "/")
		present[first] = true
	}
	absent := make(map[string]bool, len(keys))
	for _, k := range keys {
		if first, _, _ := strings.Cut(k, "/"); !present[first] {
			absent[k] = true
		}
	}
	return absent
}

// hiveNullPartition is the folder value Spark and Hive write the rows of a
// null partition key under.
const hiveNullPartition = "__HIVE_DEFAULT_PARTITION__"

// partitionKeyOf turns a folder path relative to a partitioned output's
// root ("dt=2026-11-29", "dt=2026-11-29/hr=07") into a partition key: every
// segment must be key=value. Values are read with their %XX escapes
// decoded, as the engines that wrote them escape (Spark and Hive escape
// ':' and '=', others also a space, a comma or in lower case hex), and the
// key is their canonical form. Spark's folder of null values is refused.
func partitionKeyOf(rel string) (string, error) {
	for _, seg := range strings.Split(rel, "/") {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" || v == "" {
			return "", fmt.Errorf("%w: folder %s is not a key=value partition folder (%q)", ErrBadInput, rel, seg)
		}
		if v == hiveNullPartition {
			return "", fmt.Errorf("%w: folder %s holds the rows whose %s is null (%s is Spark's and Hive's folder for a null partition value), and a partition key cannot be null: "+
				"fill or filter the nulls before writing (Spark: df.na.fill or df.where(\"%s IS NOT NULL\")), or remove the folder to commit the others; nothing was committed",
				ErrBadInput, rel, k, hiveNullPartition, k)
		}
	}
	k, err := partition.Parse(rel)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", rel, err)
	}
	return k.String(), nil
}

// addPartition records that folder holds partition key, refusing a second
// folder of the same partition (two spellings of one value, such as a%3Ab
// and a%3ab): committing one would drop the other's rows.
func addPartition(parts map[string]string, key, folder string) error {
	if prev, ok := parts[key]; ok && prev != folder {
		return fmt.Errorf("%w: folders %s and %s are the same partition %s (their values differ only in how they are escaped): merge them, nothing was committed",
			ErrBadInput, prev, folder, key)
	}
	parts[key] = folder
	return nil
}

// localPartitions finds the partition folders of a local folder: the
// folders that directly hold data files (hidden and _-prefixed entries
// skipped, as the engines' markers are).
func localPartitions(root string) (map[string]string, error) {
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: partitioned source %s: not a folder", ErrBadInput, root)
	}
	parts := map[string]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if _, ferr := inputfiles.FormatOf(name); ferr != nil {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		if dir == "." {
			return fmt.Errorf("%w: %s lies directly in %s, outside any key=value partition folder", ErrBadInput, p, root)
		}
		key, err := partitionKeyOf(filepath.ToSlash(dir))
		if err != nil {
			return err
		}
		return addPartition(parts, key, filepath.Dir(p))
	})
	if err != nil {
		if !errors.Is(err, ErrBadInput) && !errors.Is(err, partition.ErrInvalidKey) {
			err = fmt.Errorf("%w: %v", ErrBadInput, err)
		}
		return nil, err
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: partitioned source %s holds no key=value folder with data files", ErrBadInput, root)
	}
	return parts, nil
}

// remotePartitions lists a prefix of the table's object store once and
// groups its data objects by folder. The source's scheme, bucket and
// container are checked as CommitObjects checks them.
func remotePartitions(ctx context.Context, t *Table, base string) (map[string]string, error) {
	cp, err := copierOf(t.st)
	if err != nil {
		return nil, fmt.Errorf("partitioned source %s: %w", base, err)
	}
	src, key, err := cp.resolve(base + "/")
	if err != nil {
		return nil, fmt.Errorf("partitioned source: %w", err)
	}
	prefix := strings.TrimSuffix(key, "/")
	if prefix != "" {
		prefix += "/"
	}
	parts := map[string]string{}
	for a, err := range src.List(ctx, prefix) {
		if err != nil {
			return nil, fmt.Errorf("partitioned source %s: %w", src.URI(prefix), err)
		}
		rel := strings.TrimPrefix(a.Key, prefix)
		if IsEngineMarker(rel) {
			continue
		}
		i := strings.LastIndexByte(rel, '/')
		if i < 0 {
			return nil, fmt.Errorf("%w: %s lies directly under %s, outside any key=value partition folder", ErrBadInput, src.URI(a.Key), src.URI(prefix))
		}
		k, err := partitionKeyOf(rel[:i])
		if err != nil {
			return nil, err
		}
		if err := addPartition(parts, k, base+"/"+rel[:i]); err != nil {
			return nil, err
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: partitioned source %s holds no key=value folder with data objects", ErrBadInput, src.URI(prefix))
	}
	return parts, nil
}

// checkPartitionLayout checks the partition folders against each other
// (the same columns, in the same order) and against the table's layout
// (tr: its table.json as read) when it has one, before anything is
// committed. A table without table.json is checked against its committed
// partitions (one listing).
func checkPartitionLayout(ctx context.Context, t *Table, keys []string, tr tableRead) (existing []string, err error) {
	cols := func(k string) string {
		var names []string
		for _, seg := range strings.Split(k, "/") {
			n, _, _ := strings.Cut(seg, "=")
			names = append(names, n)
		}
		return strings.Join(names, "/")
	}
	for _, k := range keys[1:] {
		if cols(k) != cols(keys[0]) {
			return nil, fmt.Errorf("%w: partition folders %s and %s have different columns", ErrBadInput, keys[0], k)
		}
	}
	switch {
	case errors.Is(tr.err, store.ErrNotFound):
		// No table document yet: the committed partitions show the layout.
		existing, err := t.partitionsNoTableJSON(ctx, "")
		if err != nil {
			return nil, err
		}
		if len(existing) > 0 && cols(existing[0]) != cols(keys[0]) {
			return nil, fmt.Errorf("%w: partition folder %s does not fit the table's layout (it has partitions such as %s)", ErrBadInput, keys[0], existing[0])
		}
		return existing, nil
	case errors.Is(tr.err, tablemeta.ErrInvalid):
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, tr.err)
	case tr.err != nil:
		return nil, fmt.Errorf("read table metadata: %w", tr.err)
	}
	for _, k := range keys {
		if err := tr.t.CheckKey(k); err != nil {
			return nil, fmt.Errorf("%w: partition folder %s: %w", ErrBadInput, k, err)
		}
	}
	return nil, nil
}
