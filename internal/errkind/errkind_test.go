package errkind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestSentinelsMatchTheirKinds(t *testing.T) {
	own := New("invalid partition key", ErrInvalidKey)
	err := fmt.Errorf("open: %w", own)
	for _, k := range []error{own, ErrInvalidKey, ErrBadInput} {
		if !errors.Is(err, k) {
			t.Errorf("errors.Is(%v, %v) = false", err, k)
		}
	}
	for _, k := range []error{ErrCorrupt, ErrNotFound, ErrConflict, ErrTransient} {
		if errors.Is(err, k) {
			t.Errorf("errors.Is(%v, %v) = true", err, k)
		}
	}
	if err.Error() != "open: invalid partition key" {
		t.Errorf("message %q", err)
	}
	other := New("invalid key", ErrInvalidKey)
	if errors.Is(other, own) || errors.Is(own, other) {
		t.Error("two sentinels of one kind match each other")
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{New("transient store failure", ErrTransient), true},
		{fmt.Errorf("get: %w", New("x", ErrTransient)), true},
		{io.ErrUnexpectedEOF, true}, // unclassified: presumed transient
		{New("object not found", ErrNotFound), false},
		{New("corrupt", ErrCorrupt), false},
		{ErrInvalidKey, false},
		{ErrAccessDenied, false},
		{New("precondition failed", ErrPermanent), false},
		{New("conflict", ErrConflict), false},
		{New("outcome unknown", ErrOutcomeUnknown), true},
		{context.Canceled, false},
		{fmt.Errorf("%w: %w", New("t", ErrTransient), context.DeadlineExceeded), false},
	} {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
