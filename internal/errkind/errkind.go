// Package errkind is pswap's one code space of errors, shared by every
// layer (store, partition, manifest, staging, swap, gc, the facade), in the
// spirit of go-cloud's gcerrors: each package keeps its own sentinels with
// their own messages, and each sentinel also matches one or more of the few
// kinds below with errors.Is. The facade (package pswap) re-exports the
// kinds, so a caller checks errors.Is(err, pswap.ErrBadInput) whichever
// layer failed.
//
// Retryable is the one meaning of "worth retrying after a backoff" that
// every retry loop of pswap uses.
package errkind

import (
	"context"
	"errors"
)

// The kinds. Each is itself an error (its message is the kind's name), so a
// package may use a kind directly as its sentinel.
var (
	// ErrBadInput: the caller's input is wrong (a malformed row, an invalid
	// key, an unknown option); retrying the same input fails again.
	ErrBadInput = errors.New("bad input")
	// ErrCorrupt: metadata on the store is malformed or does not match what
	// refers to it (tampering, or a bug).
	ErrCorrupt = errors.New("corrupt metadata")
	// ErrNotFound: what was asked for does not exist (an object, a bucket, a
	// partition never committed, a generation collected).
	ErrNotFound = errors.New("not found")
	// ErrConflict: another run committed since this attempt began.
	ErrConflict = errors.New("conflict")
	// ErrOutcomeUnknown: a write may or may not have landed; re-running the
	// same operation with the same run id resolves it.
	ErrOutcomeUnknown = errors.New("outcome unknown")
	// ErrInvalidKey: a key that could escape the table root or is otherwise
	// malformed; it is also ErrBadInput.
	ErrInvalidKey = New("invalid key", ErrBadInput)
	// ErrAccessDenied: the credentials are wrong or lack permission.
	ErrAccessDenied = errors.New("access denied")
	// ErrTransient: a failure worth retrying after a backoff (a throttled or
	// failed request, a reset connection).
	ErrTransient = errors.New("transient failure")
	// ErrPermanent marks a sentinel that is not worth retrying but has no
	// other kind (a lost precondition, an invalid document, a generation
	// too old to commit). It is not part of the facade.
	ErrPermanent = errors.New("permanent failure")
)

// sentinel is a package's own sentinel error that also matches its kinds.
type sentinel struct {
	msg   string
	kinds []error
}

func (s *sentinel) Error() string { return s.msg }

func (s *sentinel) Is(target error) bool {
	for _, k := range s.kinds {
		if errors.Is(k, target) {
			return true
		}
	}
	return false
}

// New returns a sentinel error with message msg that matches each of kinds
// (and whatever they match) with errors.Is.
func New(msg string, kinds ...error) error {
	return &sentinel{msg: msg, kinds: kinds}
}

// permanentKinds are the kinds that retrying cannot fix.
var permanentKinds = []error{ErrBadInput, ErrCorrupt, ErrNotFound, ErrConflict, ErrAccessDenied, ErrPermanent,
	context.Canceled, context.DeadlineExceeded}

// Retryable reports whether err is worth retrying after a backoff: a
// Transient failure, or an unclassified one (a reset connection, a body
// cut short: the store layer maps what it recognises, and what it does not
// recognise is presumed transient). Errors of a permanent kind (bad input,
// corrupt, not found, conflict, access denied, cancelled) are not; nor is
// nil. ErrOutcomeUnknown is retryable: re-running resolves it.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrTransient) {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	for _, k := range permanentKinds {
		if errors.Is(err, k) {
			return false
		}
	}
	return true
}

// marked is an error that also matches kinds, keeping its own message.
type marked struct {
	err   error
	kinds []error
}

func (m *marked) Error() string { return m.err.Error() }
func (m *marked) Unwrap() error { return m.err }
func (m *marked) Is(target error) bool {
	for _, k := range m.kinds {
		if errors.Is(k, target) {
			return true
		}
	}
	return false
}

// Mark returns err, unchanged in message and chain, so that it also matches
// each of kinds with errors.Is (nil stays nil).
func Mark(err error, kinds ...error) error {
	if err == nil {
		return nil
	}
	return &marked{err: err, kinds: kinds}
}
