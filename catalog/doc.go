// Package catalog is pswap's contract with Iceberg catalogs, and opens
// them by URL.
//
// The contract is Catalog (and DocumentCatalog, for a catalog that takes
// the metadata document rather than its location) with the errors a
// catalog returns where it says: ErrNotRegistered, ErrCatalogConflict,
// ErrCatalogForeign, ErrNoNamespace; a publish whose version the catalog
// did not take fails with ErrCatalog. pswap.PublishOptions.Catalog takes
// any Catalog, including a program's own (see the example).
//
// Open and OpenWith open a catalog's table from a URL, the form of pswap's
// --catalog flag and $PSWAP_CATALOG, by the driver registered for its
// scheme (RegisterDriver):
//
//	sql+sqlite:///path/to/catalog.db?catalog=lake&namespace=db&table=sales
//	sql+postgres://user@host:5432/dbname?catalog=lake&namespace=db&table=sales
//	rest+https://host:8181/api/catalog?warehouse=lake&namespace=db&table=sales
//
// A program links the drivers it needs by importing them, as with
// database/sql:
//
//	import _ "github.com/pswap/pswap/catalog/sqlcat"  // sql+sqlite, sql+postgres, sql+postgresql
//	import _ "github.com/pswap/pswap/catalog/restcat" // rest+http, rest+https
//
// sqlcat is the JDBC layout shared by Java's JdbcCatalog, PyIceberg's
// SqlCatalog and iceberg-go (its database drivers, SQLite and pgx, come
// with it); restcat is the Iceberg REST catalog protocol, with a bearer
// token or OAuth2 client credentials from Options or the environment
// ($PSWAP_CATALOG_TOKEN, $PSWAP_CATALOG_CREDENTIAL), never from the URL.
// This package imports neither: a program that implements its own catalog,
// or opens none, links no database driver. One of these schemes without
// its driver linked is ErrNoDriver, naming the import to add; any other
// unknown scheme is ErrBadURL, as is Glue (not supported). Public gives a
// URL's canonical form without its secrets, to record or show.
package catalog
