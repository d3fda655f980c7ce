package views

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

// The views' names, as Result.View and the CLI print them.
const (
	Iceberg = "iceberg"
	Delta   = "delta"
	Catalog = "catalog"
)

// ErrNotPublished: a view that could not be published because another
// view it follows was not (a catalog follows the Iceberg metadata).
var ErrNotPublished = errors.New("not published")

// Commit is a committed generation (or a rollback's) to publish.
type Commit struct {
	Partition  string
	Generation string
	Seq        int64 // the pointer's sequence number (0: read the pointer)
	// Manifest is the generation's, when the caller has it (nil: read).
	Manifest *manifest.Manifest
	// Table is the table.json the commit was checked against, when the
	// caller has it (nil: read when needed).
	Table *tablemeta.Table
	// SwappedAt is the commit's swap.Result.SwappedAt (zero: unknown).
	SwappedAt time.Time
}

// Result is what a publish did to one view. A publish never fails the
// commit it follows: a view it could not bring up to date has Err, and
// the next publish (of any commit, or a reconcile) converges it.
type Result struct {
	// View is Iceberg, Delta or Catalog.
	View string
	// Name names a catalog view's catalog and table (its String, never a
	// secret); it is the View for the others.
	Name string
	// Published: the view reflects the commit (or, for a reconcile, every
	// pointer).
	Published bool
	// Changed: this publish wrote a new version of the view.
	Changed bool
	// Version is the view's current version (Iceberg's N of vN, Delta's
	// log version, the Iceberg version a catalog names); -1: none.
	Version int64
	// Location is the Iceberg metadata location (Iceberg and catalogs).
	Location string
	// From is, for a catalog this publish moved (Changed), the version it
	// named before (0: the publish registered the table).
	From int64
	// Rebases counts the versions lost to concurrent publishers.
	Rebases int
	// Attempts is how many times the pipeline ran the view's publish (more
	// than 1 after transient failures).
	Attempts int
	// Err is why the view is not published (nil when Published).
	Err error
	// Pending: the view's publish announced the commit to the publisher
	// that holds the Iceberg publish lease, whose next version after
	// Version holds it (Published is false, Err nil); a catalog follows
	// that publisher's version.
	Pending bool
	// Iceberg and Delta are the drivers' own results, when they ran.
	Iceberg *lakehouse.Result
	Delta   *deltalog.Result
}

// Driver publishes one kind of view from the pointers. Both methods are
// idempotent: run again after any failure, they converge.
type Driver interface {
	// Name is the view's name (Iceberg, Delta).
	Name() string
	// PublishCommit brings the view up to date with one commit.
	PublishCommit(ctx context.Context, st store.Store, c Commit) (Result, error)
	// Reconcile brings the view up to date with every pointer.
	Reconcile(ctx context.Context, st store.Store) (Result, error)
	// Reflected reads what the view's latest version reflects of the
	// partitions parts (Status).
	Reflected(ctx context.Context, st store.Store, parts []string) (Reflection, error)
}

// Reflection is what a view's latest version reflects of the pointers.
type Reflection struct {
	// Version is the view's latest version (-1: none).
	Version int64
	// Location is the Iceberg metadata location ("" for Delta).
	Location string
	// Seqs is the pointer sequence number the version reflects of each
	// partition it has.
	Seqs map[string]int64
}

// Set is the views one publish brings up to date: the drivers of the
// table's views, and its catalogs opened (Unavailable for one that could
// not be opened).
type Set struct {
	Drivers  []Driver
	Catalogs []catalog.Catalog
}

// Options tune the pipeline. The zero value works.
type Options struct {
	// Retry is the one retry rule around every view's publish: a view
	// whose publish failed with a retryable error (errkind.Retryable) is
	// published again, with backoff (default 4 attempts, 50ms to 2s).
	Retry retry.Policy
}

func (o Options) policy() retry.Policy {
	p := o.Retry
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 2 * time.Second
	}
	return p
}

// PublishCommit brings every view of set up to date with commit c. Views
// run at the same time; a catalog follows the Iceberg version. The results
// are in the order of set's drivers, then its catalogs.
func PublishCommit(ctx context.Context, st store.Store, set Set, c Commit, o Options) []Result {
	return run(ctx, set, o, func(ctx context.Context, d Driver) (Result, error) {
		return d.PublishCommit(ctx, st, c)
	}, st)
}

// Reconcile brings every view of set up to date with every pointer.
func Reconcile(ctx context.Context, st store.Store, set Set, o Options) []Result {
	return run(ctx, set, o, func(ctx context.Context, d Driver) (Result, error) {
		return d.Reconcile(ctx, st)
	}, st)
}

func run(ctx context.Context, set Set, o Options, publish func(context.Context, Driver) (Result, error), st store.Store) []Result {
	out := make([]Result, len(set.Drivers)+len(set.Catalogs))
	fns := make([]func(), len(set.Drivers))
	for i, d := range set.Drivers {
		fns[i] = func() {
			out[i] = retried(ctx, o, d.Name(), d.Name(), func(ctx context.Context) (Result, error) { return publish(ctx, d) })
		}
	}
	if len(fns) > 0 {
		overlap.Do(ctx, fns...) // one at a time under internal/env's Order
	}

	var ice *Result
	for i := range set.Drivers {
		if out[i].View == Iceberg {
			ice = &out[i]
		}
	}
	for j, cat := range set.Catalogs {
		out[len(set.Drivers)+j] = publishCatalog(ctx, st, cat, ice, o)
	}
	return out
}

// retried runs a view's publish under the retry rule.
func retried(ctx context.Context, o Options, view, name string, f func(context.Context) (Result, error)) Result {
	var (
		r        Result
		attempts int
	)
	err := o.policy().Do(ctx, errkind.Retryable, func(int) error {
		attempts++
		var err error
		r, err = f(ctx)
		return err
	})
	r.View, r.Name, r.Attempts, r.Err = view, name, attempts, err
	r.Published = err == nil && !r.Pending
	return r
}

// publishCatalog points a catalog at the Iceberg version ice published
// (or found latest).
func publishCatalog(ctx context.Context, st store.Store, cat catalog.Catalog, ice *Result, o Options) Result {
	name := cat.String()
	if ice != nil && ice.Pending {
		// The lease holder's publish moves the catalog to its version.
		return Result{View: Catalog, Name: name, Version: -1, Pending: true}
	}
	if ice == nil || !ice.Published || ice.Version <= 0 {
		why := "the table's Iceberg view is off"
		if ice != nil && ice.Err != nil {
			why = "the Iceberg metadata was not published"
		} else if ice != nil {
			why = "the table has no Iceberg metadata yet"
		}
		return Result{View: Catalog, Name: name, Version: -1, Err: fmt.Errorf("%w: %s", ErrNotPublished, why)}
	}
	r := retried(ctx, o, Catalog, name, func(ctx context.Context) (Result, error) {
		loc, from, err := lakehouse.CommitVersion(ctx, st, cat, int(ice.Version))
		return Result{Version: ice.Version, Location: loc, Changed: from != lakehouse.NotMoved, From: int64(from)}, err
	})
	if r.Err != nil {
		r.Version = -1
	}
	return r
}

// unavailable is a catalog that could not be opened: every call fails
// with why it could not.
type unavailable struct {
	name string
	err  error
}

// Unavailable is a catalog named name that could not be opened (no driver
// linked, no credentials, a bad URL): its view's Result says err.
func Unavailable(name string, err error) catalog.Catalog { return unavailable{name, err} }

func (u unavailable) Current(context.Context) (string, error)    { return "", u.err }
func (u unavailable) Register(context.Context, string) error     { return u.err }
func (u unavailable) Swap(context.Context, string, string) error { return u.err }
func (u unavailable) String() string                             { return u.name }
