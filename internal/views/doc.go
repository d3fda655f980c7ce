// Package views is the one publish pipeline of a pswap table's views: the
// Iceberg metadata (internal/lakehouse), the Delta Lake log
// (internal/deltalog) and the Iceberg catalogs the table is registered in.
//
// The pointers are the truth; each view is derived from them. Which views
// a table has is recorded in its table.json (tablemeta.Views), so every
// writer, the CLI's and a Go program's alike, publishes the same views
// with no flag. Each view is published by a Driver (a small interface,
// in the manner of go-cloud's portable types over drivers); the pipeline
// owns what used to be written once per view, or not at all:
//
//   - one retry rule around every view's publish (Options.Retry): a
//     transient failure the store recovers from within its attempts never
//     leaves a view behind;
//   - the rule that a publish never fails the commit it follows: each view
//     has its own Result, with Err saying why it lags;
//   - the views run at the same time (none reads what another writes),
//     and a catalog follows the Iceberg version the publish wrote or found;
//   - a table whose table.json records no views (one written before views
//     were recorded) has the default (Iceberg) plus a Delta log if one is
//     on the store (Resolve).
package views
