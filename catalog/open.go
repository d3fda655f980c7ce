package catalog

import (
	"io"

	"github.com/pswap/pswap/catalog/sqlcat"
	"github.com/pswap/pswap/lakehouse"
)

// Catalog is an opened catalog's table: what a publish commits to, and the
// connection to close after.
type Catalog interface {
	lakehouse.Catalog
	io.Closer
}

// Open parses a catalog URL (Parse) and opens the catalog. It does no I/O:
// the first publish reaches the catalog.
func Open(raw string) (Catalog, error) {
	cfg, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	return sqlcat.Open(cfg)
}
