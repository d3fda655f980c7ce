package pswap

import (
	"context"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/manifest"
)

// Publication says whether a commit's Iceberg metadata was published. A
// failed publish never fails the commit it follows: the metadata lags, and
// the next publish (of any commit, or Table.Publish) converges it.
type Publication struct {
	// Published: the table's Iceberg metadata now reflects this commit (or
	// a later generation of the partition).
	Published bool
	// MetadataLocation is the URI of the current vN.metadata.json (also
	// when only the catalog failed: Err matches lakehouse.ErrCatalog).
	MetadataLocation string
	Version          int
	// Rebases counts the versions lost to concurrent publishers.
	Rebases int
	// Err is why it was not published (nil when Published).
	Err error
}

// Publish reconciles the table's Iceberg metadata with every partition's
// pointer (`pswap publish`): idempotent, one GET per partition.
func (t *Table) Publish(ctx context.Context, opts lakehouse.Options) (lakehouse.Result, error) {
	return lakehouse.Publish(ctx, t.st, opts)
}

// Publish brings the table's Iceberg metadata up to date with a commit or
// rollback of this partition (its Result). It replaces only this
// partition's manifest, so its cost does not grow with the table; the
// generation's manifest comes from res (Result.Manifest), not the store.
// opts.Prefetch may carry the metadata read while the commit ran.
func (p *Partition) Publish(ctx context.Context, res Result, opts lakehouse.Options) Publication {
	return publish(ctx, p, res, nil, opts)
}

// Publish is Partition.Publish for the commit this writer made: it already
// has the generation's files, so it reads no manifest, and with
// WriteOptions.Prefetch it starts from the metadata read while the data
// uploaded (unless opts.Prefetch names another prefetch).
func (w *Writer) Publish(ctx context.Context, opts lakehouse.Options) Publication {
	var m *manifest.Manifest
	if w.committed.Changed && w.committed.Staged == w.committed.Generation {
		m = &manifest.Manifest{Partition: w.p.key, Generation: w.committed.Generation, RunID: w.committed.RunID, Content: w.content}
	}
	if opts.Prefetch == nil {
		opts.Prefetch = w.prefetch
	} else if opts.Prefetch != w.prefetch {
		w.prefetch.Stop()
	}
	w.prefetch = nil // it serves one publish
	return publish(ctx, w.p, w.committed, m, opts)
}

func publish(ctx context.Context, p *Partition, res Result, m *manifest.Manifest, opts lakehouse.Options) Publication {
	if m == nil {
		m = res.Manifest // the one the commit or rollback wrote: no GET
	}
	r, err := lakehouse.PublishCommit(ctx, p.t.st, lakehouse.Commit{Partition: p.key, Generation: res.Generation, Seq: res.Seq, Manifest: m}, opts)
	if err != nil {
		// With lakehouse.ErrCatalog the metadata files were published
		// (r names them), but the catalog's name lags.
		return Publication{MetadataLocation: r.MetadataLocation, Version: r.Version, Rebases: r.Rebases, Err: err}
	}
	return Publication{Published: true, MetadataLocation: r.MetadataLocation, Version: r.Version, Rebases: r.Rebases}
}
