package catalog_test

import (
	// The tests open pswap's catalogs by URL: the program links their
	// drivers, as cmd/pswap does.
	_ "github.com/pswap/pswap/catalog/restcat"
	_ "github.com/pswap/pswap/catalog/sqlcat"
)
