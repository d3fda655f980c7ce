package pswap

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/partition"
)

// GCNone, as GCOptions.Keep, MinAge, OrphanAge or CommitWindow, turns that
// rule off (keep no retired generation; no age or window), where 0 means
// its default.
const GCNone = -1

// GCNone is gc.None: the index is out of range, a compile error, otherwise.
var _ = [1]struct{}{}[GCNone-gc.None]

// GCOptions tune Table.GC. The zero value works: keep one retired
// generation, everything retired in the last 6 hours, and whatever the
// Iceberg snapshots of the last 6 hours name; delete uncommitted
// generations older than a day; four partitions at once.
type GCOptions struct {
	// Keep is the number of most recently retired generations kept for
	// rollback, besides the current one (default 1).
	Keep int
	// MinAge keeps every generation retired less than MinAge ago: a reader
	// that resolved it while it was current may still be reading its files
	// (default 6h).
	MinAge time.Duration
	// OrphanAge: the objects of generations never committed (a crashed or
	// refused writer's) are deleted once all of them are older than
	// OrphanAge plus CommitWindow (default 24h). It must be at least the
	// writers' CommitOptions.GracePeriod.
	OrphanAge time.Duration
	// CommitWindow is the longest time between a writer's grace-period
	// check and its pointer swap, or a publisher's pointer read and its
	// version (default 15m); it must exceed CommitOptions.MaxElapsed and
	// PublishOptions.MaxElapsed.
	CommitWindow time.Duration
	// SnapshotRetention: the files of the current Iceberg snapshot and of
	// every snapshot younger than this are never deleted, and a run over
	// the whole table expires the older snapshots (default: MinAge).
	SnapshotRetention time.Duration
	// MetadataMinAge: Iceberg metadata files younger than this are never
	// deleted by the expiry (default 1h).
	MetadataMinAge time.Duration
	// Prefix collects the partitions whose key starts with it ("dt=2026-").
	Prefix string
	// Partitions, when not empty, collects exactly these partitions;
	// Prefix must then be "".
	Partitions []string
	// DryRun reports exactly what would be deleted, and deletes nothing.
	DryRun bool
	// Concurrency is the number of partitions collected at once (default 4).
	Concurrency int
	// Catalog, when not nil, is an Iceberg catalog beside the ones the
	// table records (its views): GC brings every one of them to the
	// latest version before it deletes anything, and the expiry commits
	// its version to the first before it deletes any metadata.
	Catalog Catalog
	// OpenCatalog opens the catalogs the table records (default: package
	// catalog's registry). One that cannot be opened deletes nothing.
	OpenCatalog func(ctx context.Context, url string) (Catalog, error)
	// MaxAttempts bounds the attempts of each read of the Iceberg metadata
	// and of each request of the expiry (default 5): 1 for a store that
	// retries each request itself, so that retries happen in one layer.
	MaxAttempts int
	// OnPartition, when not nil, is called with each partition's report as
	// soon as it is done (from several goroutines at once), for progress
	// output.
	OnPartition func(GCPartition)
}

// Defaults of GCOptions: what its zero fields mean.
const (
	DefaultGCKeep         = gc.DefaultKeep
	DefaultGCMinAge       = gc.DefaultMinAge
	DefaultGCOrphanAge    = gc.DefaultOrphanAge
	DefaultGCCommitWindow = gc.DefaultCommitWindow
	DefaultGCConcurrency  = gc.DefaultConcurrency
	// DefaultMetadataMinAge is MetadataMinAge's: the snapshot expiry never
	// deletes an Iceberg metadata file younger than this.
	DefaultMetadataMinAge = lakehouse.DefaultMetadataMinAge
	// DefaultPublishMaxElapsed is PublishOptions.MaxElapsed's default, the
	// longest an Iceberg publish takes from its pointer reads to its
	// version: CommitWindow must exceed it.
	DefaultPublishMaxElapsed = lakehouse.DefaultMaxElapsed
)

// Why GC kept a generation (GCPartition.KeptReasons): the first rule that
// keeps it, in this order.
const (
	// GCKeptCurrent: the partition's pointer names it.
	GCKeptCurrent = gc.KeptCurrent
	// GCKeptForRollback: among the Keep most recently retired.
	GCKeptForRollback = gc.KeptForRollback
	// GCKeptUnknownAge: when it was retired cannot be told (a newer
	// generation's manifest is gone), so it is taken to be young.
	GCKeptUnknownAge = gc.KeptUnknownAge
	// GCKeptMinAge: retired less than MinAge ago; readers that resolved it
	// may still be reading it.
	GCKeptMinAge = gc.KeptMinAge
	// GCKeptCommitWindow: retired less than CommitWindow before GC read
	// which files the views name, or since: a publish may be naming it.
	GCKeptCommitWindow = gc.KeptCommitWindow
	// GCKeptClockSlack: retired within the resolution of the store's clock
	// (a couple of seconds) of now, which counts as not yet retired.
	GCKeptClockSlack = gc.KeptClockSlack
	// GCKeptSnapshot: an Iceberg snapshot younger than SnapshotRetention
	// (or the current one), or the Delta log, names its files.
	GCKeptSnapshot = gc.KeptSnapshot
)

// GCReport is what Table.GC did (in a dry run: would do).
type GCReport struct {
	Partitions []GCPartition
	Totals     GCTotals
	// BatchRecordKeys are the backfills' batch attempt records
	// (_pswap/batches/) deleted, in a dry run exactly those that would be:
	// a record goes once nothing of any of its partitions' attempts is
	// left, by the rule of the attempt records it stands for (a run over
	// the whole table, or a prefix covering its partitions).
	BatchRecordKeys []string
	// ExpiredSnapshots are the ids of the Iceberg snapshots expired.
	ExpiredSnapshots []int64
	// ExpireErr is why the snapshot expiry failed: a warning, not a
	// failure of the collection (the files the snapshots name stay
	// protected either way).
	ExpireErr error
}

// GCPartition is what Table.GC did to one partition (in a dry run: would
// do). Its JSON is `pswap gc --json`'s.
type GCPartition struct {
	Partition string `json:"partition"`
	// Current is the generation current when the run planned the
	// partition ("" for a partition never committed).
	Current string `json:"current,omitempty"`
	// Kept are the committed generations kept, current first.
	Kept []string `json:"kept"`
	// KeptReasons says why each generation of Kept was kept: one of the
	// GCKept* reasons.
	KeptReasons map[string]string `json:"kept_reasons"`
	// Collected are the retired generations deleted, Orphans the
	// uncommitted ones.
	Collected []string `json:"collected"`
	Orphans   []string `json:"orphans"`
	// OrphansKept are uncommitted generations left alone because some of
	// their objects are younger than the orphan age: a writer may still
	// commit them.
	OrphansKept []string `json:"orphans_kept"`
	// Objects and Bytes count what was deleted.
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Keys are the deleted keys, relative to the table's root (in a dry
	// run: exactly the keys that would be deleted).
	Keys []string `json:"keys,omitempty"`
	// Uploads counts the abandoned multipart uploads aborted, or on a
	// file system the temporary files of interrupted writes removed;
	// UploadKeys names their keys, UploadBytes sums their sizes where the
	// store knows them (a temporary file's), and UploadKind names them
	// (GCUploadMultipart, GCUploadTempFile).
	Uploads     int      `json:"uploads_aborted"`
	UploadKeys  []string `json:"upload_keys,omitempty"`
	UploadBytes int64    `json:"upload_bytes"`
	UploadKind  string   `json:"upload_kind,omitempty"`
	// EmptyFolders are the empty generation folders removed, on a file
	// system, where an interrupted write leaves one.
	EmptyFolders []string `json:"empty_folders,omitempty"`
	// Recomputed counts the plans thrown away because the pointer changed
	// between reading it and deleting.
	Recomputed int  `json:"recomputed"`
	DryRun     bool `json:"dry_run"`
	// Error is this partition's failure, if any.
	Error string `json:"error,omitempty"`
}

// GCTotals sum a GC run's partitions.
type GCTotals struct {
	Partitions int   `json:"partitions"`
	Kept       int   `json:"kept"`      // generations kept
	Collected  int   `json:"collected"` // retired generations deleted
	Orphans    int   `json:"orphans"`   // uncommitted generations deleted
	Objects    int   `json:"objects"`
	Bytes      int64 `json:"bytes"`
	Uploads    int   `json:"uploads_aborted"` // abandoned uploads aborted (multipart uploads, temporary files)
	// UploadBytes sums the partitions' UploadBytes.
	UploadBytes int64 `json:"upload_bytes"`
	Errors      int   `json:"errors"` // partitions that failed
	// BatchRecords counts the batch attempt records deleted
	// (GCReport.BatchRecordKeys), which Objects and Bytes include.
	BatchRecords int `json:"batch_records"`
}

// What GCPartition.UploadKind names.
const (
	// GCUploadMultipart: abandoned multipart uploads (S3).
	GCUploadMultipart = gc.UploadMultipart
	// GCUploadTempFile: temporary files that interrupted writes left on a
	// file system.
	GCUploadTempFile = gc.UploadTempFile
)

// Validate checks the options as GC does before its first request: a
// prefix and partitions at once, a prefix that reaches inside a
// partition's _pswap folder, a key that is no partition key, a negative
// OrphanAge, CommitWindow (other than GCNone) or Concurrency.
func (o GCOptions) Validate() error {
	if o.Prefix != "" && len(o.Partitions) > 0 {
		return fmt.Errorf("%w: a prefix and a list of partitions are mutually exclusive", gc.ErrInvalidOptions)
	}
	if err := gc.ValidatePrefix(o.Prefix); err != nil {
		return err
	}
	for _, p := range o.Partitions {
		if err := partition.Validate(p); err != nil {
			return err
		}
	}
	return o.lib().Options.Validate()
}

// lib is the collector's options.
func (o GCOptions) lib() gc.CollectOptions {
	co := gc.CollectOptions{
		Options: gc.Options{Keep: o.Keep, MinAge: o.MinAge, OrphanAge: o.OrphanAge,
			CommitWindow: o.CommitWindow, DryRun: o.DryRun, Concurrency: o.Concurrency},
		Prefix: o.Prefix, Partitions: o.Partitions, SnapshotRetention: o.SnapshotRetention,
		Iceberg: lakehouse.ExpireOptions{MinAge: o.MetadataMinAge, MaxAttempts: o.MaxAttempts},
	}
	if o.Catalog != nil {
		co.Iceberg.Catalog = o.Catalog
	}
	if o.OnPartition != nil {
		co.OnPartition = func(r gc.Report) { o.OnPartition(GCPartition(r)) }
	}
	return co
}

// GC collects garbage the way `pswap gc` does:
//
//   - with a Catalog, it first brings the catalog to the table's latest
//     Iceberg version (as a publish that finds the metadata up to date
//     does), so that the catalog never names an older version whose files
//     the run may delete; if that fails, nothing is deleted and the error
//     says so (this step runs in a dry run too: it deletes nothing);
//   - it deletes the retired generations no rule keeps and the generations
//     never committed, keeping whatever the table's Iceberg snapshots and
//     Delta log still name, and says per partition why each generation was
//     kept (GCPartition.KeptReasons);
//   - a run over the whole table that succeeded then expires the Iceberg
//     snapshots older than the retention, and the Delta log's old entries.
//
// Damaged Iceberg metadata (the files its snapshots name are unknown)
// deletes nothing, with an error saying how to repair it; a partition that
// fails does not stop the others, and the error counts them.
func (t *Table) GC(ctx context.Context, opts GCOptions) (GCReport, error) {
	if err := opts.Validate(); err != nil {
		return GCReport{}, err
	}
	cats, closeAll, err := t.gcCatalogs(ctx, opts)
	if err != nil {
		return GCReport{}, err
	}
	defer closeAll()
	for _, c := range cats {
		if err := t.gcCatalogFirst(ctx, c); err != nil {
			return GCReport{}, err
		}
	}
	if len(cats) > 0 {
		opts.Catalog = cats[0]
	}
	r, err := gc.Collect(ctx, t.st, opts.lib())
	rep := GCReport{Totals: GCTotals(r.Totals), BatchRecordKeys: r.BatchKeys, ExpiredSnapshots: r.Expired.Expired, ExpireErr: r.ExpireErr}
	for _, p := range r.Partitions {
		rep.Partitions = append(rep.Partitions, GCPartition(p))
	}
	switch {
	case err != nil && errors.Is(err, lakehouse.ErrCorrupt) && rep.Totals.Objects == 0:
		return rep, fmt.Errorf("nothing was deleted: the table's Iceberg metadata is damaged, so the files its snapshots name are unknown "+
			"(run 'pswap publish' to repair it, or Table.Publish, then gc again): %w", err)
	case err != nil:
		return rep, fmt.Errorf("%d of %d partitions failed: %w", max(rep.Totals.Errors, 1), rep.Totals.Partitions, err)
	}
	return rep, nil
}

// gcCatalogs opens the catalogs GC brings forward first: the table's
// recorded ones (its views), then opts.Catalog. One that cannot be opened
// is an error: a catalog left naming an older version could lose files
// it names.
func (t *Table) gcCatalogs(ctx context.Context, opts GCOptions) ([]Catalog, func(), error) {
	v, err := t.Views(ctx)
	if err != nil {
		return nil, func() {}, fmt.Errorf("nothing was deleted: %w", err)
	}
	cats, errs, closeAll := openCatalogs(ctx, v.Catalogs, opts.OpenCatalog)
	for i, err := range errs {
		if err != nil {
			closeAll()
			return nil, func() {}, fmt.Errorf("nothing was deleted: the table's catalog %s could not be opened: %w", v.Catalogs[i], err)
		}
	}
	if opts.Catalog != nil {
		cats = append(cats, opts.Catalog)
	}
	return cats, closeAll, nil
}

// gcCatalogFirst points the catalog at the latest version before GC
// deletes anything: the version the catalog names is then the latest,
// which GC and the expiry keep with everything it names, instead of an
// older one that a catalog lagging since an outage would still name.
func (t *Table) gcCatalogFirst(ctx context.Context, cat Catalog) error {
	if _, err := lakehouse.CommitLatest(ctx, t.st, cat); err != nil {
		return fmt.Errorf("nothing was deleted: the catalog could not be brought to the latest version: %w", err)
	}
	return nil
}
