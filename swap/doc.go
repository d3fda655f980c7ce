// Package swap is pswap's commit protocol: it replaces one partition's data
// atomically by swapping a small pointer object with a conditional PUT.
//
// A transaction reads the pointer (Begin: one GET, whose ETag is the base),
// the caller stages files under the fresh generation's DataPrefix, and Commit
// writes the generation's manifest write-once (If-None-Match: *) and then
// replaces the pointer conditionally on the base (If-Match, or If-None-Match
// for the first generation): three requests beyond the data, however many
// files there are.
//
// Every outcome of the PUT is resolved by reading the pointer back:
//   - it names our generation: success (a lost response, or an SDK retry that
//     turned our own success into 412, is still success);
//   - its recent history (the pointer carries the last 100 commits) names our
//     generation: we committed and a later commit replaced us: still success
//     (Outcome Superseded); beyond what the history shows, the manifests'
//     parent chain is walked back to our base;
//   - a commit since our base carries our run id: another attempt of the same
//     run committed; ours is an idempotent no-op (Changed=false, Outcome
//     SameRun) and its staged files are removed;
//   - it is still the base: the PUT did not land and is retried with
//     exponential backoff and jitter, bounded in attempts and time; when the
//     bounds run out the error is ErrOutcomeUnknown, and re-running the same
//     run id resolves it;
//   - otherwise another run won: ErrConflict under the default policy (a
//     stale attempt never overwrites newer data), or, under Overwrite, a
//     rebase onto the new pointer and another try.
//
// Logic errors (access denied, missing bucket, invalid keys, corrupt
// metadata) fail at once. Content identical to the current generation's
// (same content checksum and rows), or a run id that the base pointer's
// history shows committed (current or replaced since: a retry after a
// backfill never undoes the backfill), makes Commit a no-op unless
// Options.Force; the check costs no request (Txn.AlreadyCommitted tells it
// before anything is staged). A commit of no rows fails with ErrEmptyCommit
// unless Options.AllowEmpty. A generation that began
// longer ago than Options.GracePeriod (by the store's clock) is never
// committed, so a slow writer cannot race garbage collection.
//
// Staged commits (staged.go): Txn.Stage records a generation and the pointer
// it was staged against; Reserve records an empty generation for an
// external engine to write into. CommitStaged commits either later, fenced
// on the recorded pointer (ErrConflict if another run committed since,
// unless Overwrite), adopting a reservation's files through an AdoptFunc;
// run again after it succeeded, it is a no-op (Outcome AlreadyCommitted).
// The check that every file of a manifest is still in place
// (one listing) is shared with rollback.
//
// Layouts (package layout; migrate.go): every key is under the table's
// top-level _pswap/p/<partition>/. A partition of a table written before
// that layout has them under <partition>/_pswap/: readers fall back to
// those keys (ReadPointer, ReadManifest, ReadStaged, ListPointers), and
// the first writer that swaps its pointer moves it first (Migrate:
// copies, a fence that older binaries refuse, the new pointer), crash-safe
// and idempotent. Data files never move: a manifest says where its data
// lies (manifest.Manifest.DataLayout).
//
// Appends (append.go, Options.Append): a commit that adds the staged
// files to the current generation's, fenced like any commit and rebased on
// a lost swap (racing appends all land). The current files are carried,
// never copied: an append stages into a folder of the base's data
// generation, and its manifest (kind append) lists the base's files and
// its own under that one data generation, which every reader and older
// version already resolves. A run id is required; beyond the pointer's
// 100-commit history a run record (runs/<sha256 of the run id>.json,
// created before the run's first swap, completed after) keeps a re-run a
// no-op (SameRun, RunGeneration naming the generation that took the run's
// files) at the cost of one GET, however many appends landed since.
//
// Readers resolve pointer -> manifest -> files (Resolve, two GETs) and never
// list data prefixes. History walks the manifests' parent chain; Rollback
// makes an older generation current again with a new, fenced swap.
package swap
