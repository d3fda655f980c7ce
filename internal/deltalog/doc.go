// Package deltalog writes and reads a pswap table's Delta Lake log, so
// that delta-rs, DuckDB's delta extension, Polars and Spark's delta-spark
// read exactly the current generation of every partition. It is the one
// owner of the documents under <table>/_delta_log/.
//
// The per-partition pointers stay the truth; the log is a view of them, as
// the Iceberg metadata is (package lakehouse). Layout:
//
//	<table>/_delta_log/<20-digit version>.json             one per published change, write-once
//	<table>/_delta_log/<20-digit version>.checkpoint.parquet a checkpoint every delta.checkpointInterval versions
//	<table>/_delta_log/_last_checkpoint                    the newest checkpoint (a hint)
//	<table>/_delta_log/_pswap/checkpoint-<20 digits>.json.gz  pswap's summary of a checkpoint it wrote
//
// Version 0 holds the protocol (reader 1 / writer 2, or reader 3 / writer
// 7 with timestampNtz when a column is a timestamp without zone: the
// lowest that suffice), the metaData (the schema from table.json with the
// partition columns last, the partition columns, and the configuration:
// checkpoint interval, file and log retention) and the files of every
// partition. Each later version is one published change: a commitInfo, a
// txn per run id (appId the run id, version the pointer's sequence
// number), the removes of the partition's previous files and the adds of
// the new generation's, each with its partition values, size,
// modification time (the manifest's commit time), dataChange and stats
// ({"numRecords":N}), and tags naming the pswap partition, generation and
// pointer sequence number (pswap.partition, pswap.generation, pswap.seq).
// A schema evolution adds a metaData action with the new schema. A
// version of one partition's change says in its commitInfo's
// operationParameters the partition, the generation, and the files and
// bytes the generation holds (pswap.files, pswap.bytes).
//
// The publish of an append is flat in the number of earlier appends
// (tail.go): its version adds the run's files alone, and it reads
// neither a checkpoint nor an expanded manifest, only the log's tail:
// _last_checkpoint, the checkpoint's summary (the protocol, the metaData
// and each partition's generation, sequence number, file count and bytes:
// summary.go, written beside every checkpoint pswap writes, before
// _last_checkpoint names it), the entries after the checkpoint,
// table.json and the append's manifest head. The run's files are the
// head's beyond the files the log holds of the partition, when its
// newest files are tagged with the append's parent and the bytes agree;
// anything else the tail cannot place (no summary, another writer's
// version, a rollback to fewer of its files) replays the checkpoint, as every
// other publish does. The checkpoint due every tenth version still
// writes every file: Delta's own trade-off.
//
// Paths are relative to the table root, each segment percent-encoded:
// _pswap/p/dt=2026-11-29/gen/<generation>/part-00000.parquet (a generation
// of the legacy layout: dt=2026-11-29/_pswap/gen/...). Delta's
// hidden-folder rule is about what VACUUM lists, not what a log may name:
// readers open any path an add names, and VACUUM never lists a folder
// whose name starts with "_", so the generations, pointers and manifests
// under _pswap/ are beyond its reach (see the README for what each
// reader does, measured).
//
// The commit point is the create-if-absent PUT of the next version's
// entry, as in Delta's own writers on S3: a publish that loses the race
// reads the versions that won and table.json again, and plans again on
// them (bounded by Options.MaxAttempts). A metaData is never written
// whose schema is older than the log's (its columns a strict subset of
// the log's: a table's schema only gains columns): a table.json read
// before an evolution that the log already has is read again, and the
// log's metaData stays if it still lags. Every request follows the retry
// rule of all view publishes (retry.Request): a transient failure is
// retried after a backoff, bounded by Options.RequestAttempts, and a
// version PUT whose reply was lost is settled by reading it back
// (retry.CreateOnce), never sent again blindly. A partition the log holds at the pointer's
// sequence number or a later one is left as it is, so a slow publisher
// never brings back older data. A file without pswap's tags (another
// writer's INSERT, OPTIMIZE or DELETE) or a protocol pswap does not
// write makes a publish refuse with ErrForeign, writing nothing.
//
// The decoder is strict where pswap relies on a field (UTF-8, one action
// per line, no duplicate keys, typed required fields, bounded sizes, the
// shared internal/strictjson reader) and lenient where the protocol asks
// readers to be: fields it does not know are ignored, and another
// writer's commitInfo is kept as it is. Checkpoints are read and written
// with parquet-go.
//
// Referenced names the files garbage collection keeps (the current files
// and those removed within delta.deletedFileRetentionDuration); Expire
// deletes log entries, checkpoints and their summaries older than
// delta.logRetentionDuration before the newest checkpoint older than it,
// so every version within the retention still replays.
package deltalog
