// Package catalog opens the Iceberg catalog a publish commits to
// (lakehouse.Options.Catalog) from a URL, the form of pswap's --catalog
// flag and $PSWAP_CATALOG:
//
//	sql+sqlite:///path/to/catalog.db?catalog=lake&namespace=db&table=sales
//	sql+postgres://user@host:5432/dbname?catalog=lake&namespace=db&table=sales
//
// Each protocol has its own package (sqlcat: the JDBC layout shared by
// Java's JdbcCatalog, PyIceberg's SqlCatalog and iceberg-go). REST and
// Glue catalogs are not supported yet: their URLs are refused with
// ErrBadURL, as is any other scheme.
package catalog
