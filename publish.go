package pswap

import (
	"context"
	"time"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
)

// PublishOptions tune an Iceberg publish. The zero value works.
type PublishOptions struct {
	// Catalog, when not nil, is the table's entry in an Iceberg catalog
	// (package catalog opens one from a URL): the publish points it at the
	// version it wrote or found latest. Its failure leaves the metadata
	// files published and is reported as the publish's error.
	Catalog Catalog
	// Concurrency bounds the requests a publish runs at once (default 16).
	Concurrency int
	// MaxAttempts bounds how often a publish rebases after losing the race
	// for the next version to another publisher (default 100).
	MaxAttempts int
	// MaxElapsed bounds the time from reading the pointers a publish
	// reflects to the PUT of its version (default 5m): an attempt past it
	// starts again. The garbage collector's commit window must exceed it.
	MaxElapsed time.Duration
	// Prefetch, when not nil, is the publish's first reads made ahead of
	// it (Table.StartPrefetch); Writer.Publish uses its writer's own
	// (WriteOptions.Prefetch) when this is nil.
	Prefetch *Prefetch
}

func (o PublishOptions) lib() lakehouse.Options {
	lo := lakehouse.Options{Concurrency: o.Concurrency, MaxAttempts: o.MaxAttempts, MaxElapsed: o.MaxElapsed}
	if o.Catalog != nil {
		lo.Catalog = o.Catalog
	}
	if o.Prefetch != nil {
		lo.Prefetch = o.Prefetch.pf
	}
	return lo
}

// Catalog is a table's entry in an Iceberg catalog, package catalog's
// contract: a publish that brought the metadata files up to date points
// the catalog's table at the latest version with the catalog's
// compare-and-swap, so that the catalog only ever moves forward along
// pswap's version chain. catalog.Open opens one from a URL (SQL catalogs
// and Iceberg REST catalogs, with their driver packages linked); a program
// may implement its own, returning the contract's errors
// (catalog.ErrNotRegistered, catalog.ErrCatalogConflict, ...).
type Catalog = catalog.Catalog

// Prefetch is the first reads of a publish (the version hint, the
// metadata file, its manifest list, the partitions' manifests), started
// ahead of it so that they overlap with other work, such as the commit the
// publish follows.
type Prefetch struct{ pf *lakehouse.Prefetch }

// StartPrefetch starts the reads of a publish of partitions in the
// background; pass it as PublishOptions.Prefetch. Reads older than half
// the publish's MaxElapsed when the publish starts are made again.
func (t *Table) StartPrefetch(ctx context.Context, opts PublishOptions, partitions ...string) *Prefetch {
	return &Prefetch{lakehouse.StartPrefetch(ctx, t.st, opts.lib(), partitions...)}
}

// Stop ends the prefetch's reads: no publish follows. A nil Prefetch is a
// no-op.
func (p *Prefetch) Stop() {
	if p != nil {
		p.pf.Stop()
	}
}

// PublishResult is what a publish of the whole table did.
type PublishResult struct {
	// MetadataLocation is the URI of the current vN.metadata.json ("" when
	// the table has no published metadata and nothing to publish).
	MetadataLocation string
	Version          int   // N of MetadataLocation
	SnapshotID       int64 // the current snapshot (0: none)
	// Changed: this publish wrote a new version (false: the metadata
	// already reflected the pointers, an idempotent no-op).
	Changed bool
	// Rebases counts the versions this publish lost to another publisher
	// and rebased on.
	Rebases int
	// Partitions is the number of partitions with files in the metadata.
	Partitions int
	// Repairs says what the publish found damaged and rebuilt from the
	// pointers (a version that does not parse, a lost manifest list).
	Repairs []string
	// HintFixed: the metadata was up to date but version-hint.text lagged
	// (it named HintWas, 0 for a missing or unreadable hint), and this
	// publish pointed it at Version.
	HintFixed bool
	HintWas   int
}

// Publication says whether a commit's Iceberg metadata was published. A
// failed publish never fails the commit it follows: the metadata lags, and
// the next publish (of any commit, or Table.Publish) converges it.
type Publication struct {
	// Published: the table's Iceberg metadata now reflects this commit (or
	// a later generation of the partition).
	Published bool
	// MetadataLocation is the URI of the current vN.metadata.json (also
	// when only the catalog failed).
	MetadataLocation string
	Version          int
	// Rebases counts the versions lost to concurrent publishers.
	Rebases int
	// Err is why it was not published (nil when Published).
	Err error
}

// Publish reconciles the table's Iceberg metadata with every partition's
// pointer (`pswap publish`): idempotent, one GET per partition.
func (t *Table) Publish(ctx context.Context, opts PublishOptions) (PublishResult, error) {
	r, err := lakehouse.Publish(ctx, t.st, opts.lib())
	return PublishResult(r), err
}

// Publish brings the table's Iceberg metadata up to date with a commit or
// rollback of this partition (its Result). It replaces only this
// partition's manifest, so its cost does not grow with the table; the
// generation's manifest comes from res (Result.Manifest), not the store.
func (p *Partition) Publish(ctx context.Context, res Result, opts PublishOptions) Publication {
	return publish(ctx, p, res, nil, nil, opts.lib())
}

// Publish is Partition.Publish for the commit this writer made: it already
// has the generation's files, so it reads no manifest, and with
// WriteOptions.Prefetch it starts from the metadata read while the data
// uploaded (unless opts.Prefetch names another prefetch).
func (w *Writer) Publish(ctx context.Context, opts PublishOptions) Publication {
	var m *manifest.Manifest
	if w.committed.Changed && w.committed.Staged == w.committed.Generation {
		m = &manifest.Manifest{Partition: w.p.key, Generation: w.committed.Generation, RunID: w.committed.RunID, Content: w.content}
	}
	lo := opts.lib()
	if lo.Prefetch == nil {
		lo.Prefetch = w.prefetch
	} else if lo.Prefetch != w.prefetch {
		w.prefetch.Stop()
	}
	w.prefetch = nil // it serves one publish
	return publish(ctx, w.p, w.committed, m, w.schema.stored(), lo)
}

// publish publishes a commit's result; m is its manifest and table the
// table's metadata it was committed with, when the caller has them.
func publish(ctx context.Context, p *Partition, res Result, m *manifest.Manifest, table *tablemeta.Table, opts lakehouse.Options) Publication {
	if m == nil {
		m = res.Manifest // the one the commit or rollback wrote: no GET
	}
	r, err := lakehouse.PublishCommit(ctx, p.t.st, lakehouse.Commit{Partition: p.key, Generation: res.Generation, Seq: res.Seq, Manifest: m, Table: table}, opts)
	if err != nil {
		// When only the catalog failed, the metadata files were published
		// (r names them), but the catalog's name lags.
		return Publication{MetadataLocation: r.MetadataLocation, Version: r.Version, Rebases: r.Rebases, Err: err}
	}
	return Publication{Published: true, MetadataLocation: r.MetadataLocation, Version: r.Version, Rebases: r.Rebases}
}
