// Package gc is pswap's garbage collector. It deletes what no reader can
// still be reading and no writer can still commit: retired generations
// beyond the retention rules, orphans (generations staged but never
// committed), and abandoned multipart uploads. It never deletes a pointer.
//
// # What is kept
//
// Per partition, GC lists the partition's folder of each layout once
// (package layout: _pswap/p/<partition>/, and <partition>/_pswap/ of a
// table written before; a partition found in the legacy layout alone is
// first moved, swap.Migrate, then listed again), reads the
// pointer and walks the generation chain (current -> parent -> ...): through
// the pointer's history (format 1.1: its recent generations with their
// parents and data generations) for every listed manifest it names, and
// through the manifests beyond it. It keeps
//   - the current generation;
//   - the Options.Keep most recently retired generations (for rollback);
//   - every generation retired less than Options.MinAge ago (for readers);
//   - every data generation that a kept manifest names (Manifest.DataGen: a
//     rollback or a rebase makes a manifest whose files live under another
//     generation's prefix, so data liveness goes by DataGen, never by id);
//   - every data generation named by an uncommitted manifest that is not
//     yet old (a rollback or a rebase whose pointer swap may be in flight);
//   - every uncommitted object (data file, manifest, `pswap stage` record,
//     attempt record) of a generation any object of which is younger than
//     Options.OrphanAge plus Options.CommitWindow;
//   - the attempt record (layout.AttemptKey: the audit's run id, identity
//     and start of an attempt) of every kept committed generation: it goes
//     with its manifest;
//   - a backfill's batch record (layout.BatchKey: one record standing for
//     the attempt records of all its partitions) while any of its
//     entries would keep the record it stands for: while its partition
//     holds anything of the entry's generation, or the record is younger
//     than the orphan cutoff less audit.BatchRefresh (a running backfill
//     writes it again within that); and whenever it cannot be read. Table
//     judges them after the partitions (batches.go), with one more
//     listing; a run with a prefix judges only the records whose every
//     partition it covers, Partition none;
//   - every data file that Options.Protect names (the Iceberg snapshots),
//     its generation's `pswap stage` record, and a manifest that names it,
//     so that it stays a generation: a kept one (a rollback's), else the
//     newest one of the chain that does, else the generation's own (a
//     collected younger generation ended the chain before it).
//
// Everything else of the partition that follows either layout
// (layout.Classify: GC spells no key of its own) is deleted, in batches of 1,000 keys (DeleteObjects):
// manifests first, then the other objects. Keys that do not follow the layout
// are never touched. Multipart uploads initiated before the same orphan
// cutoff are aborted (on a file system, the temporary files of writes that
// never finished: Report.UploadKind says which, UploadBytes their size where
// the store knows it), and on a store whose folders exist apart from their
// objects (store.FolderPruner: a file system) the empty generation folders
// older than it are removed (Report.EmptyFolders). In a moved partition,
// the legacy copies of manifests and staged records whose copy at the new
// key was listed are deleted too: every reader reads the new key first.
//
// # Ages come from the store
//
// Every age is the store's clock (store.Clock: the S3 server's Date header)
// minus a store timestamp (ModTime, Initiated): a worker with a wrong clock
// can make GC neither early nor late. Timestamps are compared with a slack
// of two seconds for their one-second resolution, always towards "younger".
//
// When a generation was retired is not recorded anywhere; GC uses an upper
// bound, so that it can only overestimate how recently that happened. The
// parent of the current generation was retired by the write of the pointer
// (its timestamp). Any older generation G was retired when its child C
// became current, which happened before the manifest of C's child was
// written (that writer read a pointer naming C) and at most CommitWindow
// after C's own manifest was written (see below): the earlier of the two.
//
// # Why GC and a slow writer can never race
//
// There is no conditional DELETE to lean on (MinIO ignores If-Match on
// DELETE), so safety comes from time and from the pointer.
//
// A writer (package swap) reads the store's clock when it begins (began),
// before it writes any file, and refuses to commit (swap.ErrStaleGeneration)
// when, right before writing its manifest, more than its grace period has
// passed since began. Its pointer swap then lands within its retry bound
// (swap.Options.MaxElapsed), which Options.CommitWindow must exceed. So a
// generation whose objects all have timestamps before
// now - OrphanAge - CommitWindow, with OrphanAge >= the grace period, has
// began before that, and its writer
//   - either checked before now - CommitWindow, so its swap landed before
//     now: then GC sees that swap in the pointer, which it reads after the
//     clock (below), and the generation is current, not an orphan;
//   - or checks after that and is refused, because more than the grace
//     period has passed since began. Nothing it staged becomes current.
//
// A generation with any younger object is kept, whoever wrote it.
//
// # Why a plan may outlive its pointer
//
// A plan is computed from one pointer, read after the store's clock (so a
// swap that landed before now is in it: the argument above). A swap may land
// after that read, before or while GC deletes. A commit only puts a new
// generation in front of the chain: the plan's current generation becomes
// the first retired one, so the plan keeps one more retired generation than
// a plan from the new pointer would, its retirement bounds still hold, and
// the new generation's objects are young (its writer passed the grace check
// within CommitWindow of landing after now), so they are kept. A rollback
// makes an old generation's data live again: the second listing below
// catches it. So the first batch of deletions needs no second look at the
// pointer. Before every later batch (a partition with more than 1,000 keys
// to delete) the pointer is read again; if it changed, the plan is thrown
// away and recomputed from the new pointer, at most Options.MaxAttempts
// times (then ErrBusy). A generation that became current in between is
// never deleted.
//
// # Why manifests go first, and are listed again
//
// A rollback makes an old generation's data live again by writing a new
// manifest that names it, then swapping the pointer. If its swap lands after
// GC's look at the pointer, the plan cannot know. So GC
// deletes the manifests of its plan first, lists the partition's manifests
// again, and spares the data of every generation that a manifest missing
// from its first listing names (every commit and rollback writes its
// manifest before its swap: this look is stronger than a re-read of the
// pointer). swap.Rollback in turn reads its target's manifest again after
// writing its own, before swapping, and refuses if it is gone (see
// recheckTarget in swap/rollback.go). Either the rollback's second read comes
// before GC deleted the target's manifest; then the rollback's manifest was
// written before GC listed again, which sees it; or it comes after, and the
// rollback refuses (swap.ErrGenerationNotFound) and changes nothing. So a
// rollback racing GC never loses its data, whichever generation it targets.
//
// # Cost
//
// Table lists the table once (ListObjectsV2 pages of 1,000 keys) and lists
// multipart uploads once. Each partition then costs one GET of the pointer;
// a manifest is read only where the pointer's history does not reach (a
// chain longer than its 100 entries, a pointer written by an older version,
// a commit that landed after the listing), and a manifest listed before the
// listing began whose parent is missing ends the walk without a request.
// Deleting costs one DeleteObjects for the manifests, one LIST of the
// manifests, and one DeleteObjects per 1,000 other keys (the second and
// later after a GET of the pointer): 4 requests for a partition with
// something to delete, 1 (its pointer) for one with nothing, plus the shared
// listing pages, plus one listing of the batch records (a GET of each one
// old enough, one DeleteObjects per 1,000 deleted). 1,000 partitions x 10
// generations cost 4,022 requests (they
// cost 15,021 when the chain was walked through the manifests and the
// pointer read again before deleting).
//
// # Readers
//
// A reader resolves pointer -> manifest -> files. The generation it
// resolved was current when it read the pointer, so it was retired after
// that; GC keeps it until MinAge after (an upper bound of) its retirement.
// A reader that finishes within MinAge of reading the pointer never finds a
// file missing.
package gc
