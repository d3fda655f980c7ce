package lakehouse

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/store"
)

// Catalog is the table's entry in an Iceberg catalog (Options.Catalog): a
// publish that brought the metadata files up to date, or found them up to
// date, points the catalog's table at the latest version with the
// catalog's compare-and-swap. Package catalog opens one from a URL.
//
// The versions' create-if-absent PUTs stay what orders pswap's publishers
// (their vN.metadata.json chain is linear), and the pointers stay the
// truth; the catalog only ever moves forward along that chain, so its
// history is linear too, and a catalog that lagged (it was down, its
// commit lost a race) is brought to the latest version by the next
// publish.
type Catalog interface {
	// Current is the metadata location the catalog's table names, or
	// ErrNotRegistered when the catalog has no such table.
	Current(ctx context.Context) (string, error)
	// Register creates the table naming loc (and its namespace, if the
	// catalog was asked to). ErrCatalogConflict: it exists by now.
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

// Errors of a catalog, checked with errors.Is. A publish whose version the
// catalog did not take returns an error that matches ErrCatalog, with the
// Result of the version it wrote: the metadata files are published, the
// name lags until the next publish.
var (
	// ErrCatalog: the catalog did not take the version (unreachable,
	// refused, or one of the errors below).
	ErrCatalog = errors.New("the Iceberg catalog was not updated")
	// ErrNotRegistered: the catalog has no table of that name.
	ErrNotRegistered = errkind.New("no such table in the catalog", errkind.ErrNotFound)
	// ErrCatalogConflict: the catalog's table changed between the read
	// and the compare-and-swap.
	ErrCatalogConflict = errkind.New("the catalog's table changed meanwhile", errkind.ErrConflict)
	// ErrCatalogForeign: the catalog's table of that name is not this
	// pswap table (it names metadata elsewhere): nothing is overwritten.
	ErrCatalogForeign = errkind.New("the catalog's table of that name is another table", errkind.ErrBadInput)
	// ErrNoNamespace: the catalog has no such namespace and was not asked
	// to create it.
	ErrNoNamespace = errkind.New("no such namespace in the catalog", errkind.ErrBadInput)
)

// maxCatalogTries bounds the compare-and-swaps a publish makes on a
// catalog whose table keeps changing (other publishers advancing it).
const maxCatalogTries = 20

// commitCatalog points the catalog at version v (location loc), unless it
// already names v or a later version of this table that the store has. A lost swap is read
// again; a swap whose reply was lost is settled by reading the table back,
// never sent blindly again.
func (p *publisher) commitCatalog(ctx context.Context, v int, loc string) error {
	c := p.opts.Catalog
	fail := func(err error) error {
		return fmt.Errorf("%w: %s: %w", ErrCatalog, c, err)
	}
	var doc []byte // version v's document, for a DocumentCatalog
	for try := 0; try < maxCatalogTries; try++ {
		cur, err := c.Current(ctx)
		if errors.Is(err, ErrNotRegistered) {
			err = c.Register(ctx, loc)
			if errors.Is(err, ErrCatalogConflict) {
				continue
			}
			if err != nil {
				return p.settle(ctx, loc, fail(err))
			}
			return nil
		}
		if err != nil {
			return fail(err)
		}
		curV, ours := p.catalogVersion(cur)
		maintained := false
		if !ours {
			base, ok, err := p.maintenanceOf(ctx, cur)
			if err != nil {
				return fail(err)
			}
			if !ok {
				return fail(fmt.Errorf("%w: it names %s, not a version of %s (drop or rename it, or pick another table name)",
					ErrCatalogForeign, cur, p.tableURI))
			}
			curV, maintained = base, true
		}
		if curV == v || curV > v && maintained {
			return nil // the same rows as version v, or a later publish's
		}
		if curV > v {
			// A later publish's version, unless the store no longer has
			// it: the metadata folder was deleted outside pswap (a peer's
			// VACUUM lists it as garbage) and the history started again
			// at v1, below the version the catalog still names. That
			// name reads nothing: it is moved to this version.
			gone, err := p.versionGone(ctx, curV)
			if err != nil {
				return fail(err)
			}
			if !gone {
				return nil
			}
		}
		if dc, ok := c.(DocumentCatalog); ok {
			if doc == nil {
				if doc, err = p.readBack(ctx, MetadataKey(v)); err != nil {
					return fail(err)
				}
			}
			err = dc.SwapDocument(ctx, cur, loc, doc)
		} else {
			err = c.Swap(ctx, cur, loc)
		}
		if errors.Is(err, ErrCatalogConflict) {
			if berr := p.backoff(ctx, min(try, 4)); berr != nil {
				return fail(berr)
			}
			continue
		}
		if err != nil {
			return p.settle(ctx, loc, fail(err))
		}
		return nil
	}
	return fail(fmt.Errorf("%w %d times", ErrCatalogConflict, maxCatalogTries))
}

// maintenanceOf decides whether loc, a metadata file the catalog names
// that is not one of pswap's versions, is a peer's maintenance commit on
// one of them: a file in this table's metadata folder (Spark's or
// PyIceberg's expire_snapshots through the catalog writes one) whose
// metadata log descends from pswap's version base, with base's table
// uuid and current snapshot and no snapshot base does not have. Its
// rows are base's, so the catalog may move on from it like from base; any
// other file (a foreign writer's snapshot, another table) is not, and
// false leaves it alone. Two GETs, only when the catalog names such a file.
func (p *publisher) maintenanceOf(ctx context.Context, loc string) (base int, ok bool, err error) {
	key, kerr := p.keyOf(loc)
	if kerr != nil || !strings.HasPrefix(key, MetadataPrefix) {
		return 0, false, nil
	}
	read := func(key string) (*tableMetadata, bool, error) {
		data, err := p.readBack(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		m, err := parseMetadata(data)
		return m, err == nil, nil
	}
	m, ok, err := read(key)
	if !ok || err != nil {
		return 0, false, err
	}
	for i := len(m.MetadataLog) - 1; i >= 0 && base == 0; i-- {
		if bv, ours := p.catalogVersion(fileLocation(m.MetadataLog[i].MetadataFile)); ours {
			base = bv
		}
	}
	if base == 0 {
		return 0, false, nil
	}
	bm, ok, err := read(MetadataKey(base))
	if !ok || err != nil {
		return 0, false, err
	}
	if m.TableUUID != bm.TableUUID || m.CurrentSnapshotID == nil || bm.CurrentSnapshotID == nil || *m.CurrentSnapshotID != *bm.CurrentSnapshotID {
		return 0, false, nil
	}
	have := map[int64]bool{}
	for _, s := range bm.Snapshots {
		have[s.SnapshotID] = true
	}
	for _, s := range m.Snapshots {
		if !have[s.SnapshotID] {
			return 0, false, nil
		}
	}
	return base, true, nil
}

// versionGone reports whether the store has no metadata file of version
// v (one Stat, retried as every read).
func (p *publisher) versionGone(ctx context.Context, v int) (bool, error) {
	err := p.retryRead(ctx, func() error {
		_, err := p.st.Stat(ctx, MetadataKey(v))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// settle decides a write whose outcome err leaves unknown (a lost reply):
// it landed (nil) if the catalog now names loc, else it failed with err.
func (p *publisher) settle(ctx context.Context, loc string, err error) error {
	if cur, rerr := p.opts.Catalog.Current(ctx); rerr == nil && cur == loc {
		return nil
	}
	return err
}

// catalogVersion returns the version of a metadata location the catalog
// names, and whether it is one of this table's.
func (p *publisher) catalogVersion(loc string) (int, bool) {
	for _, root := range []string{p.tableURI, p.escapedURI} {
		if len(loc) > len(root) && loc[:len(root)] == root && loc[len(root)] == '/' {
			return VersionOfKey(loc[len(root)+1:])
		}
	}
	return 0, false
}

// withCatalog commits r's version to Options.Catalog, if there is one:
// the error (ErrCatalog) comes with r, whose metadata files are published.
func (p *publisher) withCatalog(ctx context.Context, r Result) (Result, error) {
	if p.opts.Catalog == nil || r.Version == 0 {
		return r, nil
	}
	return r, p.commitCatalog(ctx, r.Version, r.MetadataLocation)
}

// CommitLatest points cat at the table's latest published version (as a
// publish that finds the metadata up to date does) and returns its
// location ("" when nothing is published). Garbage collection calls it
// before it expires anything: the version the catalog names is then the
// latest, which an expiry keeps with everything it names, instead of an
// older one that a catalog lagging since an outage would still name.
func CommitLatest(ctx context.Context, st store.Store, cat Catalog) (string, error) {
	p := newLoader(ctx, st, Options{Catalog: cat})
	v, _, _, err := p.latestVersion(ctx, true)
	if err != nil || v == 0 {
		return "", err
	}
	loc := p.loc(MetadataKey(v))
	return loc, p.commitCatalog(ctx, v, loc)
}
