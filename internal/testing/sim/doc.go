// Package sim is a deterministic simulation of pswap's actors racing on one
// object store: committing writers, staged commits, rollbacks, garbage
// collection, Iceberg publishers and readers, all of them pswap's real code
// (the facade's Writer with Parquet staging, swap.Txn, Writer.Stage/Txn.Stage
// and CommitStaged, Partition.Rollback, pswap.Table.GC, which runs gc.Table
// or gc.Partition with what the Iceberg snapshots name protected and then
// lakehouse.Expire, as `pswap gc` does; Writer.Publish and Partition.Publish,
// which run lakehouse.PublishCommit after a commit or rollback as `pswap
// commit --publish` does; lakehouse.Publish, the reconcile of `pswap
// publish`; swap.Resolve and Iceberg readers), driven through a simulated
// store.Store.
//
// # The store
//
// Store has the semantics that store/storetest defines, and runs that
// suite: conditional PUT (If-None-Match: *, If-Match with 412 on a stale
// version and 404+412 on a missing key), ETags that are the MD5 of the
// content (as S3's, so writing the same bytes again gives the same ETag),
// timestamps and a clock (store.Clock) of one-second resolution, lexical
// LIST order in pages that continue after the last key of the previous page
// (keys written or deleted between two pages are seen or missed as on S3),
// batch deletes (store.BatchDeleter, one request), ranged reads
// (store.RangeReader), server-side copies conditional on the source's ETag
// (store.Copier) and delimited listings (store.DelimiterLister, pages of
// objects and common prefixes), each one request. Streaming writes are
// buffered and become one PUT on Commit. Its clock is simulated: it starts at
// Epoch and moves only when the scheduler says so.
//
// # The scheduler
//
// Every request of every actor is a scheduling point. An actor's goroutine
// runs its own code until it makes a request, then blocks. The scheduler
// waits until every live actor is blocked in a request or finished, then
// picks one pending request with a seeded RNG, and applies it (or a fault)
// alone. So pswap's code between two requests runs while nothing else
// happens, and the order in which requests reach the store is the only
// nondeterminism there is, and the seed fixes it: the same seed gives the
// same run, step for step (TestDeterministic compares two runs' traces,
// generation ids, ETags and timestamps included).
//
// What would make runs differ is removed, through one environment per
// actor (internal/env, on its context: actorEnv), the only thing the
// simulation injects into pswap's code: the parts of one operation that
// pswap overlaps (internal/overlap: Begin's pointer and table.json reads, a
// rollback's pointer read and first check of its target, the prefetch of a
// publish) run one at a time, in an order drawn from a stream of the
// actor's own, and a prefetch runs before the call that starts it
// returns; generation ids come from the simulated clock and a counter;
// the backoff of the writers, GC and the publishers is a scheduling
// point, not a timer, and the retry bound of the writers (MaxElapsed)
// runs on the simulated clock; GC runs with Concurrency 1 (gc.Table on one
// partition, gc.Partition for each of several, so that only one goroutine
// of an actor makes requests at a time); actors start one at a time. The
// publishers get the simulated clock for snapshot timestamps, a seeded
// random source per actor (snapshot ids, table UUID, manifest list names,
// Avro sync markers, retry jitter), and Concurrency 1; TestDeterministic
// compares a digest of every Iceberg metadata object too. The store knows
// which actor sent a request by its environment.
//
// # Faults
//
// Per request, with the scenario's fault rate, the scheduler injects one of:
// a 503 before the request is applied; a 409 ConditionalRequestConflict on
// a conditional PUT (not applied); a lost reply after it was applied (the
// caller sees a transient error); a 412 after a conditional PUT was applied
// (the SDK's retry of our own write); a delay that moves the store's clock
// 1-3 s forward before it is applied. With the kill rate it kills the actor
// instead: the request is never sent, nor is any later one, and whatever it
// staged stays behind as orphans. Time also passes between requests (up to
// 400 ms each) and while slow writers and readers work.
//
// Operators damage the Iceberg metadata from outside pswap (faults.go,
// issue 25), as actors of their own whose requests the scheduler
// interleaves with the others': half the publishing seeds lose
// metadata/version-hint.text once or twice (an operator or a crashed tool
// deletes it); with one partition, the operator first lets the metadata
// age past the expiry's min-age (the store's clock moves that much) and
// runs the expiry as `pswap gc` ends, so that the first versions are gone
// as in the reproduction, and runs `pswap publish`
// (lakehouse.Publish) some steps after the loss, which must find the
// latest version by listing and point the hint at it again. A third of the
// publishing seeds with one partition lose one manifest
// (metadata/pswap-*.avro) that the current version names, found as a
// reader finds it; publishes of commits carry it on meanwhile, and some
// steps later the operator repairs with `pswap publish`, which must write
// it anew from the pointer. A quarter of the publishers that follow
// commits stall once between their attempt's pointer reads and its
// version PUT (before the PUT of their manifest list: 10-50 steps of the
// others, 2-6 s of the store's clock) while GC collects:
// lakehouse.Options.MaxElapsed must throw the attempt away, or its
// version PUT expires (CommitWindow, below), or the version would name a
// generation GC may have collected (the freshness check below).
//
// Writers bound their commits by MaxElapsed (3 s of simulated time here);
// Config.CommitWindow models what that bound, request timeouts and request
// expiry guarantee on a real store: a writer's or a rollback's request on a
// pointer or a manifest that arrives more than CommitWindow after its
// latest read of the store's clock is refused, not applied (fault
// "expired"): a request in flight too long. GC's CommitWindow is the same value, as its safety argument
// requires (gc/doc.go). A publisher's PUT of a metadata version (or the
// hint) that arrives more than CommitWindow after its attempt's first
// pointer read is refused the same way: what lakehouse.Options.MaxElapsed
// (3 s here) and request timeouts guarantee.
//
// # Invariants, checked on the store itself
//
// The simulation keeps the ground truth of every partition: each pointer
// swap the store applied, by which actor, with the time the previous
// generation was retired. It checks:
//   - after every step, that each partition's current generation is
//     complete: its manifest exists and agrees with the pointer, every file
//     it names is there with its size and SHA-256 (I1, I2);
//   - at every pointer swap, that the new pointer's parent is the
//     generation that was current (no lost update) and its manifest exists
//     (I2, I3), and that its run id did not commit already (I4: while it is
//     current, or across the whole history with StrictRunIDs);
//   - at every deletion, that it is not the pointer, nor the manifest or a
//     file of the current generation, of one of the Keep most recently
//     retired ones, of one retired less than MinAge ago, or of one a reader
//     resolved less than MinAge ago (I5);
//   - at every writer's and rollback's report, that a success (Committed,
//     Superseded) names the generation its own swap made current, that a
//     no-op (SameRun, Identical) and a failure (other than
//     ErrOutcomeUnknown) swapped nothing, that no attempt swapped twice,
//     and that a skip after AlreadyCommitted follows a commit of the run (I3,
//     I4);
//   - at every file a reader reads, that it has the size and checksum of
//     its manifest, and that no file is missing while the reader is within
//     MinAge of its pointer read (I1);
//   - after every step, that the latest Iceberg metadata version exists and
//     parses, and that the manifest list, the manifests and the data files
//     of its current snapshot and of every snapshot still within the
//     retention exist (I6-ice);
//   - at every new metadata version, that it names no older generation of
//     a partition than the version before it did, and that a generation it
//     adds was current less than CommitWindow before it landed (what GC's
//     protection assumes); at every publisher's report, that a publication
//     reported is in the latest version (this generation or a newer one);
//   - at every object an Iceberg reader reads (the latest version, its
//     current snapshot's manifest list, manifests and data files, across
//     scheduling points), that nothing is missing while the snapshot is
//     within the retention, nor a data file of a generation that was
//     current when it opened the snapshot, within MinAge of that;
//   - at every PUT of a metadata version, that it is above every version
//     written before (I8-versions): a publish never starts the history
//     again below versions that exist, where readers never look;
//   - at every reconcile that succeeds (`pswap publish`, the reconcilers'
//     and the operators' repairs), that the latest version as a reader
//     finds it (the hint, then a probe past it; the highest listed
//     without a hint) is at least the one the reconcile reported, that
//     everything its current snapshot names is there, and that it names
//     for every partition the generation current when the reconcile began
//     or a newer one (I7-repair). Damage an operator did after the
//     reconcile began is excused; from then on no version's current
//     snapshot may name a manifest lost before it (checked after every
//     step). Until a reconcile runs, the checks above excuse a manifest an
//     operator deleted (the view lags the damage until the repair);
//   - once every actor is done, after a reconcile with no faults, that the
//     metadata names exactly every partition's current generation: its
//     files and its rows.
//
// # Views
//
// The table's views (Iceberg, Delta, catalogs) are recorded in its
// table.json, which other writers replace too (the commit that creates the
// table, an evolving commit). WithViews adds to a Scenario, from a stream
// of its own, an actor of kind "views" that turns the Delta view on, and
// perhaps off and on again, with pswap.Table.SetViews at chosen steps
// (killable), 2-4 later facade writers (most of them published through
// Writer.Publish, which publishes every view the table records: the Delta
// log while it is on), and for half the seeds writers that evolve the
// schema (a column the table lacks, TableOptions.EvolveSchema) while the
// views change (views.go). Scenario leaves Config.Views empty, so its seeds
// run as before; TestSeedsWithViews runs the seeds with one partition so
// (a publish of a table without a Delta log lists the partitions, reading
// several pointers at once with more). It checks (I10-views), besides
// everything above: every table.json stored decodes, keeps every column
// (and id) of the one before it, and changes only the views when the views
// actor stores it and not the recorded views when another writer does (no
// lost update of a switch); no Delta log object is written once the Delta
// view is off, but by a publish whose writer started before the switch;
// each switch the actor reports done is what table.json records; and after
// a final `pswap publish` (Table.Publish, no faults), with the Delta view
// on, the log reflects every pointer (deltalog.Reflected) and names
// exactly the current generations' files, and with it off nothing was
// written under _delta_log/. A Delta publish's overlapped reads run one at
// a time (internal/overlap) and its metaData id comes from the actor's
// random source, so that these runs repeat too (TestDeterministicWithViews).
//
// # Runs, traces and planted bugs
//
// Scenario derives a run from a seed (partitions, actors, their timing and
// policies, fault and kill rates, LIST page size, GC's Keep; for three
// quarters of the seeds, which commits and rollbacks are published, some
// of them by slow publishers, which facade writers and publishers prefetch
// what their publish reads (pswap.WriteOptions.Prefetch,
// lakehouse.StartPrefetch before a slow publisher's wait), 0-2
// reconcilers, 0-2 Iceberg readers, and the expiry's metadata min-age); a
// third of
// the seeds focus on one race (rollbacks to what GC is collecting, slow
// tasks while GC collects orphans). In the first, each rollback looks
// for its target as a collection begins, up to nine times, and takes
// the oldest generation once GC may collect it (ActorSpec.WithGC):
// its rollback then races that collection's second listing of the
// manifests. FoldScenario (TestFoldSeeds) runs
// bursts of publishers of distinct partitions, the folding publisher of
// lakehouse's fold.go, with GC, readers, faults and kills. A failing
// run's Format prints its trace: every request with its actor, fault and
// outcome, generation ids shortened to g1, g2... in order of appearance.
// Failing seeds go into the regression table of the tests.
//
// Plant selects a deliberately broken protocol step, emulated by the
// simulated store answering one actor's request as if that step were
// skipped (GC not re-reading the pointer or not re-listing manifests before
// deleting, a rollback not re-reading its target, a writer whose grace
// check always passes, GC asking what the Iceberg snapshots name and
// finding no metadata), or by a publisher claiming a sequence number past
// the partition's latest (its check against the metadata and its switch to
// what the pointer names never happen), or by a publisher's listing of the
// metadata versions answering as if there were none (it probes from v1
// without a hint, as before issue 25: caught by I8-versions once the
// expiry deleted v1 and the hint is lost), or by a reconcile's listing of
// the manifests still showing those an operator deleted (it carries a
// lost manifest on: caught by I7-repair). It exists only in this package:
// production code never reaches it. TestPlantedCaught checks that each is still caught;
// TestPlantedFind (PSWAP_SIM_PLANT_SEEDS) measures how soon.
//
// The tests run a bounded number of seeds (PSWAP_SIM_SEEDS, default 200);
// scripts/sim.sh runs many more, from a random or given first seed.
package sim
