package pswap

import (
	"context"
	"time"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/lakehouse"
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
	// Catalog, when not nil, is the table's Iceberg catalog: the expiry
	// commits its version there before it deletes any metadata.
	Catalog Catalog
}

// GCReport is what Table.GC did (in a dry run: would do).
type GCReport struct {
	Partitions []GCPartition
	Totals     GCTotals
	// ExpiredSnapshots are the ids of the Iceberg snapshots expired.
	ExpiredSnapshots []int64
	// ExpireErr is why the snapshot expiry failed: a warning, not a
	// failure of the collection (the files the snapshots name stay
	// protected either way).
	ExpireErr error
}

// GCPartition is what Table.GC did to one partition.
type GCPartition struct {
	Partition string
	// Current is the generation current when the run planned the
	// partition; Kept are the committed generations kept, current first.
	Current string
	Kept    []string
	// Collected are the retired generations deleted, Orphans the
	// uncommitted ones.
	Collected []string
	Orphans   []string
	// Objects and Bytes count what was deleted; Keys are the deleted keys,
	// relative to the table's root.
	Objects int
	Bytes   int64
	Keys    []string
	// Error is this partition's failure, if any.
	Error string
}

// GCTotals sum a GC run's partitions.
type GCTotals struct {
	Partitions int
	Kept       int // generations kept
	Collected  int // retired generations deleted
	Orphans    int // uncommitted generations deleted
	Objects    int
	Bytes      int64
	Uploads    int // abandoned multipart uploads aborted
	Errors     int // partitions that failed
}

// GC collects garbage the way `pswap gc` does: it deletes the retired
// generations no rule keeps and the generations never committed, keeping
// whatever the table's Iceberg snapshots and Delta log still name; a run
// over the whole table that succeeded then expires the Iceberg snapshots
// older than the retention.
func (t *Table) GC(ctx context.Context, opts GCOptions) (GCReport, error) {
	o := gc.CollectOptions{
		Options: gc.Options{Keep: opts.Keep, MinAge: opts.MinAge, OrphanAge: opts.OrphanAge,
			CommitWindow: opts.CommitWindow, DryRun: opts.DryRun, Concurrency: opts.Concurrency},
		Prefix: opts.Prefix, Partitions: opts.Partitions, SnapshotRetention: opts.SnapshotRetention,
		Iceberg: lakehouse.ExpireOptions{MinAge: opts.MetadataMinAge},
	}
	if opts.Catalog != nil {
		o.Iceberg.Catalog = opts.Catalog
	}
	r, err := gc.Collect(ctx, t.st, o)
	rep := GCReport{Totals: GCTotals(r.Totals), ExpiredSnapshots: r.Expired.Expired, ExpireErr: r.ExpireErr}
	for _, p := range r.Partitions {
		rep.Partitions = append(rep.Partitions, GCPartition{Partition: p.Partition, Current: p.Current, Kept: p.Kept,
			Collected: p.Collected, Orphans: p.Orphans, Objects: p.Objects, Bytes: p.Bytes, Keys: p.Keys, Error: p.Error})
	}
	return rep, err
}
