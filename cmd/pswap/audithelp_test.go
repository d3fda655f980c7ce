package main

import (
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/audit"
)

// TestAuditHelpListsEveryKindAndState: audit --help names every kind and
// state audit can print (it listed only the kinds commit and rollback:
// issue 39, item 10).
func TestAuditHelpListsEveryKindAndState(t *testing.T) {
	cmd := newAuditCmd(&app{})
	help := cmd.Short + "\n" + cmd.Long
	for _, k := range []string{audit.KindCommit, audit.KindRollback, audit.KindMerge, audit.KindStaged, audit.KindPointer} {
		if !strings.Contains(help, "\n  "+k+" ") {
			t.Errorf("audit --help does not list the kind %q:\n%s", k, help)
		}
	}
	for _, s := range []string{audit.StateCurrent, audit.StateSuperseded, audit.StateRolledBack, audit.StateFailed,
		audit.StateStaged, audit.StateUncommitted, audit.StateAbandoned, audit.StateUnknown, audit.StateCorrupt} {
		if !strings.Contains(help, "\n  "+s+" ") {
			t.Errorf("audit --help does not list the state %q", s)
		}
	}
}
