// Package viewtest is the conformance suite that every view driver runs
// (the Iceberg metadata, the Delta log), each supplying only an adapter,
// in the style of store/storetest: the same faults against every view.
//
//   - Transient: one 503 (store.ErrTransient) on the first request of
//     every key a publish reads, and on its first listing of every prefix.
//   - LostReply: the PUT of each view version is applied and its reply
//     lost (a 503 after the write).
//   - HeldRaceCommit, HeldRaceReconcile: a commit's publish (a reconcile)
//     is held at the PUT of its version until a rival has published a
//     commit of a new partition that evolved the schema (deterministic).
//   - RacingEvolveCommits, RacingEvolve: publishers of plain commits (and
//     reconciles) race one commit that evolves the schema, round after
//     round.
//   - Foreign: another writer changed the view (a file without pswap's
//     tags, another engine's snapshot): a publish refuses with the
//     driver's ErrForeign and writes nothing.
//   - Kill: the publish's context is cancelled at each of its requests in
//     turn; a fresh publish then converges.
//   - DeleteNewest: the newest view version is deleted from outside; the
//     next publish regenerates it.
//
// After each, the view equals the pointers (every partition's files, no
// other, and every column of table.json), or the publish returned an
// error (the view lags) and the next publish converges.
//
// The driver interface here is the suite's own, small one; the adapters
// live in the tests that run it.
package viewtest
