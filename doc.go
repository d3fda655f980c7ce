// Package pswap makes a batch task's write of one table partition to an
// object store idempotent and atomic.
//
// A task writes its output for one interval (a partition such as
// dt=2026-11-29) as Parquet files under a fresh, uniquely named generation
// prefix, then swaps the partition's small pointer object with a conditional
// PUT (If-Match / If-None-Match). Readers resolve pointer -> manifest ->
// files, so they see exactly one complete generation or none; retries,
// replays, backfills and interrupted runs never leave a half-written or
// doubled partition. Old generations are garbage-collected later
// (Table.GC).
//
// This package is the small facade for embedding:
//
//	t, _ := pswap.Open(ctx, "s3://lake/sales", pswap.Options{}) // or file:///data/lake/sales, or a path
//	p, _ := t.Partition("dt=2026-11-29")
//	w, _ := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: runID}})
//	if !w.AlreadyCommitted() {                          // this run committed here before: a no-op
//		pswap.Write(w, rows...)                         // Go structs, or w.WriteRecord, w.AddPath
//	}
//	res, err := w.Commit(ctx)                           // res.Changed: fire side effects only then
//
// Errors are checked with errors.Is against this package's kinds
// (ErrBadInput, ErrCorrupt, ErrNotFound, ErrConflict, ErrOutcomeUnknown),
// which every layer's sentinels match; IsRetryable tells transient failures.
//
// Files that an engine (Spark, Trino, DuckDB, Polars) writes are committed
// where they lie: Partition.Reserve reserves a generation and its data
// prefix, the engine writes there, and Partition.CommitStaged adopts the
// files by their footers (ranged GETs, no download; see AdoptOptions).
// Partition.CommitObjects commits objects already in the table's object
// store (an S3 bucket, the table's GCS bucket or Azure container) by
// server-side copies.
//
// Every commit is published for lakehouse engines: Writer.Publish (or
// Partition.Publish, Table.Publish) brings every view the table has up to
// date, with a result per view: its Iceberg metadata, its Delta Lake log
// and the Iceberg catalogs it is registered in. The views belong to the
// table (its table.json records them; Views, Table.SetViews,
// Table.ViewStates), so every writer publishes the same views with the
// zero PublishOptions; PublishOptions.Enable turns views on.
// Table.Merge upserts and deletes rows by key; Table.Audit lists every
// attempt; Table.GC deletes what no reader can still reach.
//
// The pswap command uses this package and the public ones below only, so
// whatever it does a program can do: Partition.DryRun is `commit
// --dry-run`, Table.Schema `show --json`'s columns, AuditRows.WriteCSV and
// WriteParquet `audit --format`, MergeOptions.Validate `merge`'s checks
// of its flags, InputFiles the listing of a commit's local inputs.
//
// The packages below it, for what this one does not cover: store (object
// stores with conditional writes, and the memstore, filestore, s3store and
// gcsstore backends), partition (Hive-style keys, layouts and intervals), manifest
// (the on-store JSON documents), staging (Parquet writing), swap (the
// commit protocol and its readers) and catalog (Iceberg catalogs by URL).
package pswap
