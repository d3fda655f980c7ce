package catalog

import (
	"context"
	"errors"
	"io"

	"github.com/pswap/pswap/internal/errkind"
)

// Catalog is a table's entry in an Iceberg catalog: what a publish commits
// to (pswap.PublishOptions.Catalog). A publish that wrote a version, or
// found the metadata up to date, points the catalog's table at the latest
// version with the catalog's compare-and-swap:
//
//	Current → ErrNotRegistered: Register(latest)
//	Current → prev, a version before latest: Swap(prev, latest)
//
// The versions' create-if-absent PUTs stay what orders pswap's publishers,
// and the pointers stay the truth: the catalog only ever moves forward
// along the table's chain of versions, and a catalog that lagged (it was
// down, its swap lost a race) is brought to the latest version by the
// next publish.
//
// A Catalog of one's own (a catalog pswap has no driver for) implements
// these four methods and returns the errors below where they say: a
// publish tells the cases apart with errors.Is, and a plain error where
// ErrNotRegistered is due fails every first publish. Safe for concurrent
// use by the publishes of one process.
type Catalog interface {
	// Current is the metadata location the catalog's table names, or an
	// error matching ErrNotRegistered when the catalog has no such table.
	Current(ctx context.Context) (string, error)
	// Register creates the table naming loc (and its namespace, if the
	// catalog was asked to; else ErrNoNamespace). ErrCatalogConflict: it
	// exists by now.
	Register(ctx context.Context, loc string) error
	// Swap points the table at loc if it still names prev.
	// ErrCatalogConflict: it names something else by now.
	Swap(ctx context.Context, prev, loc string) error
	// String names the catalog and the table, never a secret.
	String() string
}

// DocumentCatalog is a Catalog that moves its table by the new version's
// metadata document rather than its location: an Iceberg REST catalog,
// which commits the difference as updates and writes a metadata file of
// its own. A publish calls SwapDocument instead of Swap, with the document
// of version loc as it reads it back from the store.
type DocumentCatalog interface {
	Catalog
	// SwapDocument moves the table from the version prev to loc (whose
	// metadata document is doc), if it still reflects prev.
	// ErrCatalogConflict: it reflects something else by now.
	SwapDocument(ctx context.Context, prev, loc string, doc []byte) error
}

// Conn is a catalog Open opened: the table's Catalog, and the connections
// (a database pool, an HTTP client's) that Close releases.
type Conn interface {
	Catalog
	io.Closer
}

// Errors of a catalog, checked with errors.Is. A publish whose version the
// catalog did not take returns an error that matches ErrCatalog, with the
// result of the version it wrote: the metadata files are published, the
// name lags until the next publish.
var (
	// ErrCatalog: the catalog did not take the version (unreachable,
	// refused, or one of the errors below).
	ErrCatalog = errors.New("the Iceberg catalog was not updated")
	// ErrNotRegistered: the catalog has no table of that name. It is
	// errkind.ErrNotFound (pswap.ErrNotFound).
	ErrNotRegistered = errkind.New("no such table in the catalog", errkind.ErrNotFound)
	// ErrCatalogConflict: the catalog's table changed between the read
	// and the compare-and-swap. It is errkind.ErrConflict.
	ErrCatalogConflict = errkind.New("the catalog's table changed meanwhile", errkind.ErrConflict)
	// ErrCatalogForeign: the catalog's table of that name is not this
	// pswap table (it names metadata elsewhere, or a file of another
	// table's uuid): nothing is overwritten. It is errkind.ErrBadInput.
	ErrCatalogForeign = errkind.New("the catalog's table of that name is another table", errkind.ErrBadInput)
	// ErrNoNamespace: the catalog has no such namespace and was not asked
	// to create it. It is errkind.ErrBadInput.
	ErrNoNamespace = errkind.New("no such namespace in the catalog", errkind.ErrBadInput)
)
