package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/pswap/pswap/store/filestore"
)

// TestDiskFullError: a full local disk is its own error (code disk_full,
// exit 1), with a hint that says what to do and that nothing was
// half-written; never "outcome unknown; re-run" (issue 40 item 5).
func TestDiskFullError(t *testing.T) {
	err := &cmdError{fmt.Errorf("commit dt=2026-11-29: swap pointer: write file:///t/p: %w (%v)", filestore.ErrNoSpace, syscall.ENOSPC)}
	if got := errorCode(err); got != "disk_full" {
		t.Errorf("code %q, want disk_full", got)
	}
	if got := exitCode(err); got != exitFailure {
		t.Errorf("exit %d, want %d", got, exitFailure)
	}
	text := errorText(err, storeLocal)
	for _, want := range []string{"no space left on the local disk", "hint: the disk that holds the table is full", "nothing was half-written"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q does not say %q", text, want)
		}
	}
	if strings.Contains(text, "unknown") {
		t.Errorf("%q calls the outcome unknown", text)
	}
}
