package swap

import (
	"fmt"
	"strings"

	"github.com/pswap/pswap/internal/errkind"
)

// Sentinel errors, checked with errors.Is. Each also matches one of pswap's
// error kinds, which package pswap re-exports (pswap.ErrConflict,
// pswap.ErrOutcomeUnknown, pswap.ErrNotFound, pswap.ErrCorrupt,
// pswap.ErrBadInput), so a caller of the facade needs no import of swap.
var (
	// ErrConflict: another run committed a different generation since this
	// attempt began, and the policy is to fail (a stale attempt must never
	// overwrite newer data). Nothing visible was changed. Kind: conflict.
	ErrConflict = errkind.New("conflict: the partition was committed by another run since this attempt began", errkind.ErrConflict)
	// ErrOutcomeUnknown: the pointer swap may or may not have landed and the
	// retry bounds ran out before it could be read back. Re-running the same
	// command with the same run id resolves it. Kind: outcome unknown.
	ErrOutcomeUnknown = errkind.New("outcome unknown; re-run the same command with the same run id", errkind.ErrOutcomeUnknown)
	// ErrStaleGeneration: the generation was staged longer ago than the grace
	// period, so garbage collection may already be removing it; it is never
	// committed.
	ErrStaleGeneration = errkind.New("generation staged longer ago than the grace period", errkind.ErrPermanent)
	// ErrNoData: the partition has never been committed (a read found no
	// pointer). It is not about empty commits: see ErrEmptyCommit. Kind: not
	// found.
	ErrNoData = errkind.New("partition has no committed generation", errkind.ErrNotFound)
	// ErrEmptyCommit: a commit of no rows was refused because
	// Options.AllowEmpty was not set; nothing was changed. (ErrNoData, the
	// older name, already meant "never committed" and keeps that meaning.)
	// Kind: bad input.
	ErrEmptyCommit = errkind.New("nothing to commit: no rows were written (set AllowEmpty to make the partition empty)", errkind.ErrBadInput)
	// ErrGenerationNotFound: a generation named by the caller does not exist
	// (or has been garbage-collected). Kind: not found.
	ErrGenerationNotFound = errkind.New("generation not found", errkind.ErrNotFound)
	// ErrCorrupt: a pointer or manifest on the store is malformed or does not
	// match what refers to it (tampering, or a bug). Kind: corrupt.
	ErrCorrupt = errkind.New("corrupt partition metadata", errkind.ErrCorrupt)
	// ErrCorruptPointer: a partition's pointer cannot be read (it does not
	// decode, or does not name its partition). It matches ErrCorrupt; the
	// error names the partition. Kind: corrupt.
	ErrCorruptPointer = errkind.New("corrupt partition metadata: the pointer cannot be read", ErrCorrupt)
)

// CorruptPointer is one partition whose pointer cannot be read, and why
// (an error matching ErrCorruptPointer).
type CorruptPointer struct {
	Partition string
	Err       error
}

// maxCorruptNamed bounds the partitions CorruptPointersError names.
const maxCorruptNamed = 10

// CorruptPointersError is the one error of a listing (ls, status, the
// audit) that met partitions whose pointer cannot be read and carried on
// past them: it matches ErrCorruptPointer (so ErrCorrupt), counts them
// and names the first ten, each with what is wrong. others says what
// became of the other partitions ("every other partition was read"). It is
// nil when bad is empty.
func CorruptPointersError(bad []CorruptPointer, others string) error {
	if len(bad) == 0 {
		return nil
	}
	lines := make([]string, 0, min(len(bad), maxCorruptNamed+1))
	for i, c := range bad {
		if i == maxCorruptNamed {
			lines = append(lines, fmt.Sprintf("  and %d more", len(bad)-i))
			break
		}
		lines = append(lines, "  "+c.Partition+": "+c.Err.Error())
	}
	return &corruptPointers{fmt.Sprintf("corrupt metadata: %d partition(s) with a pointer that cannot be read (%s):\n%s",
		len(bad), others, strings.Join(lines, "\n"))}
}

// corruptPointers is CorruptPointersError's error: its message starts with
// what it is ("corrupt metadata", as every corrupt document's error does)
// and it matches ErrCorruptPointer.
type corruptPointers struct{ msg string }

func (e *corruptPointers) Error() string { return e.msg }
func (e *corruptPointers) Unwrap() error { return ErrCorruptPointer }
