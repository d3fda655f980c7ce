package lakehouse

import (
	"context"
	"fmt"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/store"
)

// CommitVersion points cat at version v of the table's metadata (one a
// publish just wrote or found latest) and returns its location, unless
// the catalog already names v or a later version of this table. It is
// the catalog step of a publish, for a catalog beside Options.Catalog
// (internal/views publishes every catalog a table has this way).
func CommitVersion(ctx context.Context, st store.Store, cat catalog.Catalog, v int) (string, error) {
	if v <= 0 {
		return "", fmt.Errorf("lakehouse: CommitVersion needs a published version, not %d", v)
	}
	p := newLoader(ctx, st, Options{Catalog: cat})
	loc := p.loc(MetadataKey(v))
	return loc, p.commitCatalog(ctx, v, loc, nil)
}
