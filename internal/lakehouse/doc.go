// Package lakehouse publishes Apache Iceberg v2 metadata for a pswap table,
// so that Spark, Trino, DuckDB, pyiceberg, iceberg-go and other Iceberg
// readers see exactly the current generation of every partition.
//
// The per-partition pointers stay the truth; the Iceberg metadata is a view
// of them that a publish brings up to date. The layout is the standard
// file-system table, next to the partitions:
//
//	<table>/metadata/v<N>.metadata.json           one per published version, write-once
//	<table>/metadata/version-hint.text            the latest N (a hint: readers probe past it)
//	<table>/metadata/snap-<id>-<attempt>-<u>.avro manifest lists, write-once
//	<table>/metadata/pswap-g<g>-<n>-<id>-<d>.avro  one manifest per group of partitions, write-once
//	<table>/metadata/pswap-c<c>-<w>-<n>-<id>-<d>.avro a cold manifest (segment) of the groups before the newest, write-once
//	<table>/metadata/pswap-ap<g>-<p>-<seq>-<gen>-<n>-<f>-<id>-<d>.avro an append manifest: a partition's newest appends, write-once
//
// The commit point of a publish is a create-if-absent PUT of the next
// version's metadata file (the same primitive as pswap's manifests), never
// a rename. A publish that loses the race re-reads the newer version and
// rebases on it, reusing the manifests it already wrote. Concurrent
// PublishCommits group their commits under the publish lease
// (_pswap/publish.lease, lease.go), taken only in contention: a publisher
// writes its version optimistically, and one that lost the race (or sees
// in the version it starts from a burst in progress, or was asked to,
// Options.LeaseFirst) takes the lease's path: it announces its commit (a
// fold marker, _pswap/fold/<partition>/<seq>) and reads the lease; the
// publisher that holds it publishes its own commit and then folds every
// commit announced to it into the versions it writes, until none is
// left; a publisher that finds it held by a live holder returns at once
// (Result.Pending), its commit held by the holder's next version. With Options.WaitForView a PublishCommit
// publishes in line instead: one that lost a race announces its commit,
// one of a burst of such publishers leads and folds every announced
// commit into the version it writes, and the others wait for that version
// and report it (Result.Folded), so a burst of N commits writes a few
// versions, not N (fold.go). A failed publish
// never touches a partition's pointer, so it never fails or undoes the
// commit it follows: the metadata lags until the next publish converges it.
//
// The partitions of one month (of one day, for a table partitioned finer
// than by day; a partition without a date column alone) share a manifest,
// named after the group (a hash of it), its number of members, the
// snapshot and a digest of what it replaced, so that an engine's plan of
// the whole table opens a few manifests, not one per partition, and a plan
// of one partition still skips the others by the manifest list's
// partition summaries. What pswap knows of each member, the pointer's
// sequence number and generation it reflects, is in the manifest's Avro
// header (pswap.members; readers ignore it). A publish after a commit
// reads the previous version and the commit's group's manifest (beside the
// pointer: no round trip more), writes that group's manifest anew (the
// other members' entries carried as existing, the replaced files as
// deleted), keeps every other manifest of the previous manifest list as
// it is, and writes a new manifest list and metadata file: its cost
// depends on the size of a group, not on the number of partitions. A
// partition whose record carries a sequence number at least the commit's
// is already as new, so a slow publisher never brings back older data.
// Manifests of one partition each, which pswap wrote before grouping, are
// read as they are; a partition moves into its group's manifest at its
// next publish. The groups older than the newest of each prefix (the
// partition columns before the date) are merged into the cold manifests of
// the prefix, segments of at most 16,384 files cut between groups, whose
// names hold their watermarks, the newest group each holds: a partition is
// the segment's with the smallest watermark at or after it (cold.go;
// pswap-m... names a prefix's single cold manifest of before segments). A
// reconcile merges, and so does the publish of a commit that starts a new
// group (the first commit of a month): a table of daily partitions is the
// newest month's manifest and one cold manifest per 16,384 files.
// The publish of an append (a generation of kind append whose parent is
// what the view records of its hot partition) writes no group manifest:
// an append manifest of the run's files alone (added), named after the
// partition, the append's sequence number and generation, and the
// partition's file count, whose header lists the partition as its one
// member; the manifest list carries every other manifest as it was. The
// run's files are the last of the generation's head (manifest 2.0) past
// its parent's count, read from its tail and at most its newest segments,
// never the whole list. A partition's append manifests merge as a counter
// of base 4 (at most 3 per level: 10 after 1,000 appends), and any
// publish that writes their group's manifest anew (another partition's
// commit, a replace, a merge into the cold manifest) folds them into it,
// so append manifests exist for the hot groups only (appends.go). The
// publish of an append costs what the 2nd append's did, whatever the
// number of earlier appends.
// A publish reads the pointer of what it writes (the partition's, after a
// commit) right before it writes, and publishes what the pointer names if
// that is newer, except a commit's own publish (Commit.SwappedAt), which
// times its attempt from the commit's pointer PUT instead and writes
// nothing over a version that already records the partition as new; an
// attempt whose version it would PUT more than Options.MaxElapsed after
// those reads (or that PUT) is planned again, and manifests
// written more than MaxElapsed ago are written anew: garbage collection
// keeps what was retired less than its commit window before it asked what
// the snapshots name, and metadata younger than the expiry's MinAge, which
// is what a slow publisher relies on.
// The publish of a commit writes the partition's new manifest and the
// manifest list at once, then the version (only once both are written:
// nothing reaches them before), then the hint. Its first three reads (the
// hint, the version and its manifest list) depend on nothing the commit
// does: a [Prefetch] makes them while the commit runs, and
// Options.Prefetch hands them to the publish, which starts from them if
// they are at most MaxElapsed/2 old (the expiry's MinAge, which exceeds
// twice MaxElapsed, must cover the time from those reads to the version's
// PUT); an overtaken prefetch is a lost race like any other.
// [Publish] reconciles every partition against its pointer (one GET per
// partition, no listing of data; none for the caller's own commits,
// Options.Commits), for `pswap publish` and for repairs; it
// too leaves a partition whose manifest is newer than the pointer it read
// (a later commit's publish landed meanwhile) as it is. It repairs what it
// finds damaged and says so (Result.Repairs, HintFixed): a manifest that is
// missing or truncated (one listing of the manifests) is written anew, and
// a latest version that does not parse or whose manifest list is lost is
// followed by one rebuilt from the pointers and the newest version that
// parses. Without a hint, or with a hint naming a version that does not
// exist, every publish finds the latest version by listing the metadata
// folder, never by probing from v1; a lagging hint is brought up to date
// even when nothing else changed. A current snapshot that another writer
// made (its manifests are not pswap's) is refused with [ErrForeign].
//
// The metadata files are pswap's own model of the v2 format (metadata.go):
// ParseMetadata checks a version strictly (ErrCorrupt names what is wrong;
// one whose property pswap.format is newer than pswap/1 was written by a
// newer pswap: strictjson.ErrNewerFormat, which no publish repairs),
// and a publish or an expiry builds the next version from it, writing what
// iceberg-go 0.7.0's table.MetadataBuilder wrote for the same change (the
// tests rebuild every version with it). Schemas, partition specs, manifests
// and manifest lists are iceberg-go's root package; its table package is
// not imported, as its initialisation cost every pswap process a tenth of
// a second and 32 MB.
//
// Every published version adds one snapshot whose summary names the
// partition, generation, run id and rows (pswap.partition,
// pswap.generation, pswap.run-id, pswap.rows, pswap.seq), so the snapshot
// log is the table's audit trail. Data files carry no Iceberg field ids:
// the metadata has a name mapping (schema.name-mapping.default) of every
// column and every nested field (a list's element, a map's key and value,
// a struct's fields), whose ids the table assigns and keeps by name. The
// schema is table.json's (its types and, in tables first published since,
// its ids: a field the metadata already has keeps its published id), or,
// for a table without table.json, its data files' footers'. Each data
// file's entry carries its column statistics (stats.go): those its
// manifest records (manifest version 1.2: the writer had the footer in
// hand), else, for a generation written before, its footer's, read with a
// ranged GET; so the publish of a commit reads no data file. A publish
// that finds table.json's ids other than the published ones (a table
// published before table.json held ids) writes the published ids back into
// table.json once, and marks it (published_ids) once the version it
// publishes has every column of table.json, so that a commit checks
// Parquet field ids against table.json alone (writeBackIDs). The
// locations it writes are paths as they are on the store, never
// percent-encoded (Java Iceberg, PyIceberg and DuckDB open them as
// written); older percent-encoded ones are still read.
//
// Partition columns (dt, hr, ...) are identity partitions of the types
// table.json declares (a 2006-01-02 column is a date, an hour an int) in
// tables first published since; older tables keep string columns. Readers
// that fill identity-partition columns from the manifest (Spark, Trino,
// PyIceberg, DuckDB) return them for every file; readers that read them
// from the data files (iceberg-go 0.7.0, icebird) return NULL for files
// that lack the column. See the README ("Iceberg") for how pswap handles it.
//
// # Catalogs
//
// With Options.Catalog (package catalog opens one from a URL), a publish
// that wrote or found the latest version also points the table's name in
// an Iceberg catalog at it, with the catalog's compare-and-swap (the
// contract is catalog.Catalog; the step is catalog.go): the version's
// create-if-absent PUT still orders the publishers, the catalog only moves
// forward along their versions, and a catalog that fails costs the
// publication (catalog.ErrCatalog), never the commit. A catalog that names
// a version past the publish's counts as up to date only if that file
// exists and carries the table's uuid: a missing one is repaired, another
// table's refused (catalog.ErrCatalogForeign). CommitLatest brings a
// lagging catalog to the latest version.
//
// # Repeatable publishes
//
// The context's environment (internal/env: its clock for snapshot
// timestamps, its random source for snapshot ids, the table UUID, the
// unique part of manifest list names, retry jitter and the Avro files' sync
// markers, its timer for the waits between retries), with
// ExpireOptions.Now, makes a publish repeatable byte for byte: the
// deterministic simulation (internal/testing/sim) runs the publisher with
// the simulated store's clock, a seeded source and scheduling points for
// sleeps. A context without one is the real world, what production uses.
// Requests never depend on a map's order.
package lakehouse
