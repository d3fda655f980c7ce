package lakehouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/pswap/pswap/catalog"

	"github.com/pswap/pswap/store"
)

// The catalog step of a publish (Options.Catalog): the contract and its
// errors are package catalog's (catalog.Catalog, catalog.DocumentCatalog,
// catalog.ErrCatalog, ...), which also opens one from a URL.
//
// The versions' create-if-absent PUTs stay what orders pswap's publishers
// (their vN.metadata.json chain is linear), and the pointers stay the
// truth; the catalog only ever moves forward along that chain, so its
// history is linear too, and a catalog that lagged (it was down, its
// commit lost a race) is brought to the latest version by the next
// publish.

// maxCatalogTries bounds the compare-and-swaps a publish makes on a
// catalog whose table keeps changing (other publishers advancing it).
const maxCatalogTries = 20

// commitCatalog points the catalog at version v (location loc, document
// meta when the caller has it), unless it already names v or a later
// version of this table: one whose file exists and carries this table's
// uuid (laterVersion). A version of this location that does not exist is
// repaired (the catalog is moved to v); a file of another table's uuid is
// refused (catalog.ErrCatalogForeign). A lost swap is read again; a swap whose
// reply was lost is settled by reading the table back, never sent blindly
// again.
func (p *publisher) commitCatalog(ctx context.Context, v int, loc string, meta *tableMetadata) error {
	c := p.opts.Catalog
	fail := func(err error) error {
		return fmt.Errorf("%w: %s: %w", catalog.ErrCatalog, c, err)
	}
	var doc []byte // version v's document, for a DocumentCatalog
	for try := 0; try < maxCatalogTries; try++ {
		cur, err := c.Current(ctx)
		if errors.Is(err, catalog.ErrNotRegistered) {
			err = c.Register(ctx, loc)
			if errors.Is(err, catalog.ErrCatalogConflict) {
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
					catalog.ErrCatalogForeign, cur, p.tableURI))
			}
			curV, maintained = base, true
		}
		if curV == v || curV > v && maintained {
			return nil // the same rows as version v, or a later publish's
		}
		if curV > v {
			// A later publish's version, or a row that names a version
			// this table does not have (set by hand, or left by a table
			// deleted and created again here): only the file tells.
			later, err := p.laterVersion(ctx, v, meta, curV)
			if err != nil {
				return fail(err)
			}
			if later {
				return nil
			}
			// Missing: repaired below, moved to version v.
		}
		if dc, ok := c.(catalog.DocumentCatalog); ok {
			if doc == nil {
				if doc, err = p.readBack(ctx, MetadataKey(v)); err != nil {
					return fail(err)
				}
			}
			err = dc.SwapDocument(ctx, cur, loc, doc)
		} else {
			err = c.Swap(ctx, cur, loc)
		}
		if errors.Is(err, catalog.ErrCatalogConflict) {
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
	return fail(fmt.Errorf("%w %d times", catalog.ErrCatalogConflict, maxCatalogTries))
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

// withCatalog commits r's version (whose document is meta, nil when the
// caller has none) to Options.Catalog, if there is one: the error
// (catalog.ErrCatalog) comes with r, whose metadata files are published.
func (p *publisher) withCatalog(ctx context.Context, r Result, meta *tableMetadata) (Result, error) {
	if p.opts.Catalog == nil || r.Version == 0 {
		return r, nil
	}
	return r, p.commitCatalog(ctx, r.Version, r.MetadataLocation, meta)
}

// CommitLatest points cat at the table's latest published version (as a
// publish that finds the metadata up to date does) and returns its
// location ("" when nothing is published). Garbage collection calls it
// before it expires anything: the version the catalog names is then the
// latest, which an expiry keeps with everything it names, instead of an
// older one that a catalog lagging since an outage would still name.
func CommitLatest(ctx context.Context, st store.Store, cat catalog.Catalog) (string, error) {
	p := newLoader(ctx, st, Options{Catalog: cat})
	v, _, _, err := p.latestVersion(ctx, true)
	if err != nil || v == 0 {
		return "", err
	}
	return p.commitAt(ctx, v)
}

// CommitVersion points cat at version v of the table's metadata (one a
// publish just wrote or found latest) and returns its location, unless
// the catalog already names v or a later version of this table. It is
// the catalog step of a publish, for a catalog beside Options.Catalog
// (internal/views publishes every catalog a table has this way).
func CommitVersion(ctx context.Context, st store.Store, cat catalog.Catalog, v int) (string, error) {
	if v <= 0 {
		return "", fmt.Errorf("lakehouse: CommitVersion needs a published version, not %d", v)
	}
	return newLoader(ctx, st, Options{Catalog: cat}).commitAt(ctx, v)
}

// commitAt commits version v to Options.Catalog and returns its location.
func (p *publisher) commitAt(ctx context.Context, v int) (string, error) {
	loc := p.loc(MetadataKey(v))
	return loc, p.commitCatalog(ctx, v, loc, nil)
}

// laterVersion reports whether version curV, which a catalog names while
// the publish found v latest, is a later version of this table: its file
// exists (false: it does not, and the catalog is to be repaired) and
// carries the uuid of version v (whose document is meta, read when nil).
// A file of another uuid is catalog.ErrCatalogForeign. It costs one GET (two
// without meta), and only when a catalog is ahead of the publish.
func (p *publisher) laterVersion(ctx context.Context, v int, meta *tableMetadata, curV int) (bool, error) {
	data, err := p.readBack(ctx, MetadataKey(curV))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the version the catalog names: %w", err)
	}
	theirs, err := metadataUUID(data)
	if err != nil {
		return false, fmt.Errorf("%s, which the catalog names: %w", p.st.URI(MetadataKey(curV)), err)
	}
	var ours string
	if meta != nil {
		ours = meta.TableUUID.String()
	} else {
		own, err := p.readBack(ctx, MetadataKey(v))
		if err != nil {
			return false, fmt.Errorf("read %s: %w", MetadataKey(v), err)
		}
		if ours, err = metadataUUID(own); err != nil {
			return false, fmt.Errorf("%s: %w", p.st.URI(MetadataKey(v)), err)
		}
	}
	if theirs != ours {
		return false, fmt.Errorf("%w: it names %s, a metadata file of another table (uuid %s, this table's is %s) at this table's location (drop the row, or point it at %s)",
			catalog.ErrCatalogForeign, p.st.URI(MetadataKey(curV)), theirs, ours, p.loc(MetadataKey(v)))
	}
	return true, nil
}

// metadataUUID reads a metadata document's table-uuid, in canonical form.
func metadataUUID(data []byte) (string, error) {
	var doc struct {
		UUID string `json:"table-uuid"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	id, err := uuid.Parse(doc.UUID)
	if err != nil {
		return "", fmt.Errorf("%w: table-uuid %q: %v", ErrCorrupt, doc.UUID, err)
	}
	return id.String(), nil
}
