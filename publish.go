package pswap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/internal/views"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

// PublishOptions tune a publish of a table's views. The zero value works:
// every view the table has is brought up to date.
type PublishOptions struct {
	// Enable turns these views on for the table before publishing
	// (recorded in its table.json, so that every later writer publishes
	// them too): Delta, Catalogs (recorded without passwords), Iceberg.
	// A view already on stays on; Table.SetViews turns views off.
	Enable Views
	// OpenCatalog opens one of the table's catalogs from its recorded URL
	// (default: package catalog's registry, with credentials from the
	// environment). A catalog it cannot open is a view that is not
	// published, saying why.
	OpenCatalog func(ctx context.Context, url string) (Catalog, error)
	// Catalog, when not nil, is a catalog published beside the table's own
	// for this publish only (not recorded).
	Catalog Catalog
	// Delta tunes the Delta Lake log.
	Delta DeltaOptions
	// Retries bounds how often a view's publish is run again after a
	// transient failure, with backoff (default 3, so 4 attempts; below 0:
	// none).
	Retries int
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
	// WaitForView makes the publish after a commit return only once the
	// Iceberg metadata holds the commit, even while another publisher
	// holds the publish lease (`pswap commit --wait-view`). False (the
	// default): under a live lease holder the commit is announced to it and
	// the publish returns at once, its Iceberg view Pending; the holder's
	// next version holds it.
	WaitForView bool
	// LeaseFirst makes the publish after a commit take the table's
	// publish lease before it writes (`pswap commit --lease-first`), as a
	// writer that expects others at once should: in a burst that starts
	// all at once, the first holds the lease and the others are pending
	// after two requests (their marker, the lease's GET), where an
	// optimistic publish writes a version in vain first. A writer alone
	// pays seven requests more (lakehouse.Options.LeaseFirst). False (the
	// default): the publish writes its version optimistically, and takes
	// the lease's path only after losing the race for it, or when the
	// latest version shows a burst in progress.
	LeaseFirst bool

	// manifests: the manifests the commits before this publish wrote
	// (Table.CommitPartitioned), which the Iceberg publish then does not
	// read back (lakehouse.Options.Manifests).
	manifests []*manifest.Manifest
	// commits: the commits before this publish (Table.CommitPartitioned),
	// whose pointers the Iceberg publish then does not read back
	// (lakehouse.Options.Commits).
	commits []lakehouse.Commit
}

func (o PublishOptions) lib() lakehouse.Options {
	lo := lakehouse.Options{Concurrency: o.Concurrency, MaxAttempts: o.MaxAttempts, MaxElapsed: o.MaxElapsed, Manifests: o.manifests, Commits: o.commits, WaitForView: o.WaitForView, LeaseFirst: o.LeaseFirst}
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

// The names of the views, as ViewPublication.View says them.
const (
	ViewIceberg = views.Iceberg
	ViewDelta   = views.Delta
	ViewCatalog = views.Catalog
)

// ViewPublication is what a publish did to one view of the table.
type ViewPublication struct {
	// View is ViewIceberg, ViewDelta or ViewCatalog.
	View string
	// Name is a catalog's name and table (never a secret); the View for
	// the others.
	Name string
	// Published: the view reflects the commit (a table's publish: every
	// pointer).
	Published bool
	// Changed: this publish wrote a new version of the view (a catalog:
	// moved its table to Version, or registered it).
	Changed bool
	// Version is the view's version: Iceberg's N of vN.metadata.json,
	// the Delta log's version, the Iceberg version a catalog names; -1:
	// none.
	Version int64
	// From is the version a catalog named before this publish moved it
	// (Changed), 0 when the publish registered the table.
	From int64
	// Location is the Iceberg metadata location (Iceberg and catalogs).
	Location string
	// Rebases counts the versions lost to concurrent publishers.
	Rebases int
	// Attempts counts the runs of the view's publish (more than one after
	// a transient failure).
	Attempts int
	// Err is why the view was not published (nil when Published): the
	// view lags, and the next publish converges it.
	Err error
	// Pending: the Iceberg view (and a catalog, which follows it) does not
	// hold the commit yet: the publisher holding the table's publish lease
	// writes the version that holds it, the next after Version (the
	// latest it had written; -1 or 0: none known), within about 20 s
	// while it lives, else at the next commit or publish (`pswap status`
	// shows the view behind meanwhile). Published is false, Err nil.
	Pending bool
}

func viewPublications(rs []views.Result) []ViewPublication {
	out := make([]ViewPublication, len(rs))
	for i, r := range rs {
		out[i] = ViewPublication{View: r.View, Name: r.Name, Published: r.Published, Changed: r.Changed, Version: r.Version,
			From: r.From, Location: r.Location, Rebases: r.Rebases, Attempts: r.Attempts, Err: r.Err, Pending: r.Pending}
	}
	return out
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
	// Views is what the publish did to each of the table's views (the
	// fields above are the Iceberg view's).
	Views []ViewPublication
	// ViewsRecorded is why the views this publish enabled were not
	// recorded in table.json (nil: recorded, or nothing to record); they
	// were published all the same.
	ViewsRecorded error
}

// Publication says what a publish after a commit or rollback did to each
// view of the table. A failed publish never fails the commit it follows:
// the view lags, and the next publish (of any commit, or Table.Publish)
// converges it.
type Publication struct {
	// Published: every view of the table reflects this commit (or a later
	// generation of the partition).
	Published bool
	// Pending: the Iceberg view does not hold the commit yet, the holder
	// of the publish lease writes the version that does
	// (ViewPublication.Pending); Published is false, Err nil.
	Pending bool
	// MetadataLocation is the URI of the current vN.metadata.json (also
	// when only a catalog failed).
	MetadataLocation string
	Version          int
	// Rebases counts the Iceberg versions lost to concurrent publishers.
	Rebases int
	// Err is why a view was not published (nil when Published), every
	// failing view's error joined.
	Err error
	// Views is each view's outcome.
	Views []ViewPublication
	// ViewsRecorded: see PublishResult.ViewsRecorded.
	ViewsRecorded error
}

// View returns the outcome of the view named view (ViewIceberg,
// ViewDelta), or of a catalog by name; false if the table has no such
// view.
func (p Publication) View(view string) (ViewPublication, bool) { return findView(p.Views, view) }

// View is Publication.View.
func (r PublishResult) View(view string) (ViewPublication, bool) { return findView(r.Views, view) }

func findView(vs []ViewPublication, view string) (ViewPublication, bool) {
	for _, v := range vs {
		if v.View == view || v.Name == view {
			return v, true
		}
	}
	return ViewPublication{}, false
}

// Publish reconciles every view of the table with every partition's
// pointer (`pswap publish`): idempotent, one GET per partition. The error
// joins the errors of the views that were not published.
func (t *Table) Publish(ctx context.Context, opts PublishOptions) (PublishResult, error) {
	rs, recErr := t.publishViews(ctx, nil, "", opts, func(set views.Set, vo views.Options, _ *tablemeta.Table) []views.Result {
		return views.Reconcile(ctx, t.st, set, vo)
	})
	out := PublishResult{Views: viewPublications(rs), ViewsRecorded: recErr}
	var errs []error
	for _, r := range rs {
		if r.Iceberg != nil {
			ir := *r.Iceberg
			out.MetadataLocation, out.Version, out.SnapshotID, out.Changed, out.Rebases = ir.MetadataLocation, ir.Version, ir.SnapshotID, ir.Changed, ir.Rebases
			out.Partitions, out.Repairs, out.HintFixed, out.HintWas = ir.Partitions, ir.Repairs, ir.HintFixed, ir.HintWas
		}
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return out, errors.Join(errs...)
}

// Publish brings every view of the table up to date with a commit or
// rollback of this partition (its Result). The Iceberg metadata replaces
// only this partition's manifest, so its cost does not grow with the
// table; the generation's manifest comes from res (Result.Manifest), not
// the store.
func (p *Partition) Publish(ctx context.Context, res Result, opts PublishOptions) Publication {
	return publish(ctx, p, res, nil, nil, "", opts)
}

// Publish is Partition.Publish for the commit this writer made: it already
// has the generation's files and the table's metadata, so it reads
// neither, and with WriteOptions.Prefetch it starts from the Iceberg
// metadata read while the data uploaded (unless opts.Prefetch names
// another prefetch).
func (w *Writer) Publish(ctx context.Context, opts PublishOptions) Publication {
	var m *manifest.Manifest
	if w.committed.Changed && w.committed.Staged == w.committed.Generation && !w.opts.append {
		// (An append's generation holds more than it staged: its
		// manifest, Result.Manifest, is the one to publish.)
		m = &manifest.Manifest{Partition: w.p.key, Generation: w.committed.Generation, RunID: w.committed.RunID, Content: w.content,
			DataLayout: manifest.DataLayoutTable} // where the writer staged (swap.Txn.DataPrefix)
		if cm := w.committed.Manifest; cm != nil {
			m.DataLayout = cm.DataLayout
		}
	}
	if opts.Prefetch == nil {
		opts.Prefetch = &Prefetch{w.prefetch}
	} else if opts.Prefetch.pf != w.prefetch {
		w.prefetch.Stop()
	}
	w.prefetch = nil // it serves one publish
	doc, tag := w.schema.document()
	return publish(ctx, w.p, w.committed, m, doc, tag, opts)
}

// publish publishes a commit's result to every view; m is its manifest
// and doc (with its tag) the table's metadata it was committed with, when
// the caller has them.
func publish(ctx context.Context, p *Partition, res Result, m *manifest.Manifest, doc *tablemeta.Table, tag string, opts PublishOptions) Publication {
	if m == nil {
		m = res.Manifest // the one the commit or rollback wrote: no GET
	}
	rs, recErr := p.t.publishViews(ctx, doc, tag, opts, func(set views.Set, vo views.Options, doc *tablemeta.Table) []views.Result {
		c := views.Commit{Partition: p.key, Generation: res.Generation, Seq: res.Seq, Manifest: m, Table: doc, SwappedAt: res.SwappedAt}
		return views.PublishCommit(ctx, p.t.st, set, c, vo)
	})
	out := Publication{Published: true, Views: viewPublications(rs), ViewsRecorded: recErr}
	var errs []error
	for _, r := range rs {
		if r.View == views.Iceberg {
			out.MetadataLocation, out.Rebases = r.Location, r.Rebases
			if r.Version > 0 {
				out.Version = int(r.Version)
			}
		}
		if r.Pending {
			out.Published, out.Pending = false, true
		}
		if r.Err != nil {
			out.Published = false
			errs = append(errs, r.Err)
		}
	}
	out.Err = errors.Join(errs...)
	return out
}

// publishViews publishes the table's views with run: it reads table.json
// unless doc is given, records the views opts enables (and a table's
// views found on the store when it records none), opens its catalogs, and
// runs the pipeline, handing run the table.json it read (nil: none).
// recErr says why the views could not be recorded.
func (t *Table) publishViews(ctx context.Context, doc *tablemeta.Table, tag string, opts PublishOptions, run func(views.Set, views.Options, *tablemeta.Table) []views.Result) (rs []views.Result, recErr error) {
	if doc == nil {
		var err error
		if doc, tag, err = tablemeta.Read(ctx, t.st); err != nil {
			doc, tag = nil, ""
			if !errors.Is(err, store.ErrNotFound) {
				// The views are unknown: say so, and publish what the
				// store shows (Iceberg, and Delta if it has a log).
				recErr = fmt.Errorf("read the table's views: %w", corruptIfInvalid(err))
			}
		}
	}
	cur, recorded, err := views.Resolve(ctx, t.st, doc)
	if err != nil {
		recErr = err
	}
	enable, err := publicViews(opts.Enable.doc())
	if err != nil {
		recErr = err
	}
	want := union(cur, enable)
	if doc != nil && (!recorded || !want.Equal(cur)) {
		got, err := t.updateViews(ctx, doc, tag, func(v tablemeta.Views) tablemeta.Views {
			if !recorded {
				v = cur // found on the store: recorded from now on
			}
			return union(v, enable)
		})
		if err != nil {
			recErr = err
		} else {
			want = got
		}
	}
	set, closeAll := t.viewSet(ctx, want, opts)
	defer closeAll()
	return run(set, views.Options{Retry: retry.Policy{MaxAttempts: opts.attempts()}}, doc), recErr
}

// attempts is the runs of a view's publish that Retries allows.
func (o PublishOptions) attempts() int {
	switch {
	case o.Retries > 0:
		return o.Retries + 1
	case o.Retries < 0:
		return 1
	}
	return 4
}

// viewSet is the drivers and opened catalogs of the views v (one that
// cannot be opened is a view that says why), and what closes them.
func (t *Table) viewSet(ctx context.Context, v tablemeta.Views, opts PublishOptions) (views.Set, func()) {
	var set views.Set
	if v.Iceberg {
		set.Drivers = append(set.Drivers, &views.IcebergDriver{Options: opts.lib()})
	} else if opts.Prefetch != nil {
		opts.Prefetch.Stop()
	}
	if v.Delta {
		do := opts.Delta.lib()
		if opts.Retries > 0 {
			do.RequestAttempts = opts.attempts() // --max-attempts, per request
		}
		set.Drivers = append(set.Drivers, &views.DeltaDriver{Options: do})
	}
	cats, errs, closeAll := openCatalogs(ctx, v.Catalogs, opts.OpenCatalog)
	for i, c := range cats {
		if errs[i] != nil {
			c = views.Unavailable(v.Catalogs[i], errs[i])
		}
		set.Catalogs = append(set.Catalogs, c)
	}
	if opts.Catalog != nil {
		set.Catalogs = append(set.Catalogs, opts.Catalog)
	}
	return set, closeAll
}

// openCatalogs opens the catalogs of urls with open (nil: openCatalog):
// cats[i] is urls[i]'s (nil when errs[i] says why it could not be
// opened), and closeAll closes those that need it.
func openCatalogs(ctx context.Context, urls []string, open func(context.Context, string) (Catalog, error)) (cats []Catalog, errs []error, closeAll func()) {
	if open == nil {
		open = openCatalog
	}
	var closers []io.Closer
	cats, errs = make([]Catalog, len(urls)), make([]error, len(urls))
	for i, u := range urls {
		cats[i], errs[i] = open(ctx, u)
		if cl, ok := cats[i].(io.Closer); ok && errs[i] == nil {
			closers = append(closers, cl)
		}
	}
	return cats, errs, func() {
		for _, c := range closers {
			c.Close()
		}
	}
}

// openCatalog is PublishOptions.OpenCatalog's default: package catalog's
// registry, with the environment's credentials (a program links the
// drivers it needs, e.g. import _ "github.com/pswap/pswap/catalog/sqlcat";
// without one the view says which import is missing).
func openCatalog(_ context.Context, url string) (Catalog, error) {
	return catalog.Open(url)
}
