// Package audit derives the audit of a pswap table from what is on its
// store: one row per attempt pswap can know of, for each partition.
//
// The rows come from the store only, never from a log: a partition's
// pointer (its current generation and the history of its last commits),
// the manifests under manifests/ (one per generation that reached its
// commit), the staged records under staged/ (generations made by stage or
// stage --reserve) and the data folders under gen/ (every attempt that
// uploaded a file), in the partition's folder of either layout (package
// layout: _pswap/p/<partition>/, or <partition>/_pswap/ of a table
// written before; a moved partition's copies are read once), and the
// attempt records under attempts/ (Attempt, layout.AttemptKey): the one
// thing a writer writes for the audit, one small PUT issued beside its
// first upload (its run id, orchestrator identity and start), written
// again when the attempt ends without a commit (no-op, failed); and the
// batch records under _pswap/batches/ (Batch, layout.BatchKey), which a
// backfill writes in place of its partitions' attempt records: each entry
// stands for its partition's record (Facts.Batch), and an entry still
// started with nothing else of its generation on the store gives no row
// (the backfill never reached it). An entry that knows only the run's
// start (Attempt.RunStart) gives its row the partition's own: its
// manifest's created_at, else its first upload's time. A batch record
// that cannot be read is left out, and Table's error names it
// (ErrCorruptBatch).
//
//   - A committed generation (in the chain from the pointer through each
//     manifest's parent, as `pswap history` walks it, continued through the
//     pointer's history past a garbage-collected manifest) is a row of kind
//     commit, rollback or merge, state current, superseded or rolled-back
//     (replaced by a rollback), with the generation that replaced it and
//     when.
//   - A manifest outside that chain is an attempt that wrote its manifest
//     and never became current (killed between its manifest and its swap,
//     or a writer that lost a race and could not remove it): state failed.
//   - A staged record without a manifest is kind staged, state staged (it
//     may still be committed with commit --staged) or abandoned (older than
//     the writers' grace period: it can never be).
//   - A data folder without a manifest or staged record is an attempt that
//     uploaded files and died before its commit (killed, failed), or one
//     still running: kind staged, state uncommitted, then abandoned past
//     the grace period. Its rows are unknown; its run id and identity are
//     its attempt record's (unknown without one: a writer before them);
//     its files and bytes come from the listing.
//   - An attempt record alone is an attempt that ended without a commit
//     and removed its files (state no-op, with the generation it found;
//     state failed, with its error), or one that died (or runs) before its
//     first file landed (kind staged, state uncommitted or abandoned).
//
// Every row also has a status, the state in the orchestrator's words:
// started, succeeded, failed, abandoned or no-op. An attempt that never
// ended (started, abandoned) is failed once a later attempt of its run id
// ended: the orchestrator retried it, so it died. Its identity (job,
// task, logical date, the orchestrator's run id) and start are its
// attempt record's.
//
// A failed commit that ended normally (a conflict, bad input) removes what
// it wrote, so it leaves no row. A killed attempt that had not finished
// uploading its first file has only an unfinished upload (an S3 multipart
// upload, a local temporary file: store.UploadLister), which counts as one
// of its files (DataFolder.Unfinished): it is an uncommitted attempt too.
//
// Collect does the I/O for one partition (one listing of its folder in
// each layout, one GET per manifest, staged record and attempt record, the pointer's GET, and
// on a store with unfinished uploads one listing of them; Table lists
// those once for the whole table);
// Derive turns what it read into rows, a pure function.
package audit
