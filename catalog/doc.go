// Package catalog opens the Iceberg catalog a publish commits to
// (pswap.PublishOptions.Catalog) from a URL, the form of pswap's --catalog
// flag and $PSWAP_CATALOG:
//
//	sql+sqlite:///path/to/catalog.db?catalog=lake&namespace=db&table=sales
//	sql+postgres://user@host:5432/dbname?catalog=lake&namespace=db&table=sales
//	rest+https://host:8181/api/catalog?warehouse=lake&namespace=db&table=sales
//
// Each protocol has its own package: sqlcat, the JDBC layout shared by
// Java's JdbcCatalog, PyIceberg's SqlCatalog and iceberg-go; restcat, the
// Iceberg REST catalog protocol, with a bearer token or OAuth2 client
// credentials from Options or the environment ($PSWAP_CATALOG_TOKEN,
// $PSWAP_CATALOG_CREDENTIAL), never from the URL. Glue is not supported:
// its URLs are refused with ErrBadURL, as is any other scheme.
package catalog
