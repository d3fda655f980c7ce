package pswap

import (
	"context"
	"time"

	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/swap"
)

// DeltaOptions tune the Delta Lake log a Delta publish writes beside the
// Iceberg metadata (<table>/_delta_log/). The zero value works.
type DeltaOptions struct {
	// CheckpointInterval: a Parquet checkpoint every this many versions
	// (default: the table's delta.checkpointInterval, 10 for a new log).
	CheckpointInterval int
	// FileRetention and LogRetention go into a new log's configuration
	// (delta.deletedFileRetentionDuration, default 7 days: how long a
	// removed file stays for time travel and VACUUM, which `pswap gc`
	// respects; delta.logRetentionDuration, default 30 days).
	FileRetention, LogRetention time.Duration
}

func (o DeltaOptions) lib() deltalog.Options {
	return deltalog.Options{CheckpointInterval: o.CheckpointInterval, FileRetention: o.FileRetention,
		LogRetention: o.LogRetention, EngineInfo: swap.WriterVersion}
}

// DeltaPublication says whether a commit's Delta log was published. A
// failed publish never fails the commit it follows: the log lags, and the
// next Delta publish converges it.
type DeltaPublication struct {
	// Published: the Delta log's Version reflects this commit (or a later
	// generation of the partition).
	Published bool
	// Version is the table's current Delta version (-1: none).
	Version int64
	// Rebases counts the versions lost to concurrent publishers.
	Rebases int
	// Checkpoint: this publish wrote a checkpoint of Version.
	Checkpoint bool
	// Err is why it was not published (nil when Published).
	Err error
}

// DeltaResult is what a Table.PublishDelta did.
type DeltaResult struct {
	Version    int64 // the current Delta version (-1: nothing to publish)
	Changed    bool  // a version was written (false: the log was up to date)
	Rebases    int
	Partitions int // partitions with files in the log
	Checkpoint bool
}

// PublishDelta reconciles the table's Delta log with every partition's
// pointer (`pswap publish --delta`): idempotent, one GET per partition.
// A table without a log gets one.
func (t *Table) PublishDelta(ctx context.Context, opts DeltaOptions) (DeltaResult, error) {
	r, err := deltalog.Publish(ctx, t.st, opts.lib())
	return DeltaResult{Version: r.Version, Changed: r.Changed, Rebases: r.Rebases, Partitions: r.Partitions, Checkpoint: r.Checkpoint}, err
}

// PublishDelta brings the table's Delta log up to date with a commit or
// rollback of this partition (its Result): one version that removes the
// partition's previous files and adds the generation's.
func (p *Partition) PublishDelta(ctx context.Context, res Result, opts DeltaOptions) DeltaPublication {
	return publishDelta(ctx, p, res, res.Manifest, opts)
}

// PublishDelta is Partition.PublishDelta for the commit this writer made:
// it has the generation's files, so it reads no manifest.
func (w *Writer) PublishDelta(ctx context.Context, opts DeltaOptions) DeltaPublication {
	m := w.committed.Manifest
	if w.committed.Changed && w.committed.Staged == w.committed.Generation {
		m = &manifest.Manifest{Partition: w.p.key, Generation: w.committed.Generation, RunID: w.committed.RunID, Content: w.content}
	}
	return publishDelta(ctx, w.p, w.committed, m, opts)
}

func publishDelta(ctx context.Context, p *Partition, res Result, m *manifest.Manifest, opts DeltaOptions) DeltaPublication {
	r, err := deltalog.PublishCommit(ctx, p.t.st, deltalog.Commit{Partition: p.key, Generation: res.Generation, Seq: res.Seq, Manifest: m}, opts.lib())
	if err != nil {
		return DeltaPublication{Version: r.Version, Rebases: r.Rebases, Err: err}
	}
	return DeltaPublication{Published: true, Version: r.Version, Rebases: r.Rebases, Checkpoint: r.Checkpoint}
}
