package swap

import "errors"

var (
	// ErrConflict: another run committed a different generation since this
	// attempt began, and the policy is to fail (a stale attempt must never
	// overwrite newer data). Nothing visible was changed.
	ErrConflict = errors.New("conflict: the partition was committed by another run since this attempt began")
	// ErrOutcomeUnknown: the pointer swap may or may not have landed and the
	// retry bounds ran out before it could be read back. Re-running the same
	// command with the same run id resolves it.
	ErrOutcomeUnknown = errors.New("outcome unknown; re-run the same command with the same run id")
	// ErrStaleGeneration: the generation was staged longer ago than the grace
	// period, so garbage collection may already be removing it; it is never
	// committed.
	ErrStaleGeneration = errors.New("generation staged longer ago than the grace period")
	// ErrNoData: the partition has never been committed (a read found no
	// pointer). It is not about empty commits: see ErrEmptyCommit.
	ErrNoData = errors.New("partition has no committed generation")
	// ErrEmptyCommit: a commit of no rows was refused because
	// Options.AllowEmpty was not set; nothing was changed. (ErrNoData, the
	// older name, already meant "never committed" and keeps that meaning.)
	ErrEmptyCommit = errors.New("nothing to commit: no rows were written (set AllowEmpty to make the partition empty)")
	// ErrGenerationNotFound: a generation named by the caller does not exist
	// (or has been garbage-collected).
	ErrGenerationNotFound = errors.New("generation not found")
	// ErrCorrupt: a pointer or manifest on the store is malformed or does not
	// match what refers to it (tampering, or a bug).
	ErrCorrupt = errors.New("corrupt partition metadata")
)
