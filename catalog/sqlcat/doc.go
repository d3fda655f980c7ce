// Package sqlcat is an Iceberg SQL catalog in the JDBC layout: the tables
// iceberg_tables and iceberg_namespace_properties that Java's JdbcCatalog,
// PyIceberg's SqlCatalog and iceberg-go's sql catalog share, in SQLite
// (modernc.org/sqlite, no cgo) or PostgreSQL (pgx). Importing it registers
// the URL schemes sql+sqlite, sql+postgres and sql+postgresql with
// catalog.Open (ParseURL reads them):
//
//	import _ "github.com/pswap/pswap/catalog/sqlcat"
//
// It implements catalog.Catalog with plain statements: a publish reads
// the table's row (one SELECT) and moves it with
//
//	UPDATE iceberg_tables SET metadata_location = $new, previous_metadata_location = $prev
//	WHERE catalog_name = $c AND table_namespace = $ns AND table_name = $t AND metadata_location = $prev
//
// which changes no row when another writer moved it first
// (catalog.ErrCatalogConflict). The first publish registers the table,
// in one transaction with the namespace when asked to create it, and
// creates the two tables if the database has none (as the JDBC catalog
// does when it starts).
//
// iceberg-go's catalog/sql is not used: its commits write a metadata file
// of their own (through iceberg-go's table package, whose initialisation
// alone costs every process a tenth of a second), while pswap's publish
// has written the version the catalog must name.
package sqlcat
