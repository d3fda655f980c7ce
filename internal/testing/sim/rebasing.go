package sim

import (
	"errors"
	"slices"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/manifest"
)

// The bookkeeping that the appenders and the mergers share: each runs a
// rebase loop of its own (a lost swap is rebased onto the new current
// generation and tried again), and the checker judges both the same way.

// ownSwaps returns the swaps actor a made in part, flagging more than one
// (I3: one append or one merge is at most one swap). what names the
// action ("append", "merge").
func (w *World) ownSwaps(a *actor, part, what string) []histEntry {
	mine := w.entriesBy(a, part)
	if len(mine) > 1 {
		w.fail("I3", "%s swapped %d times in one %s (%s at step %d, %s at step %d)", a, len(mine), what, mine[0].gen, mine[0].step, mine[1].gen, mine[1].step)
	}
	return mine
}

// failedReport is the report of an append or a merge that ended in err:
// an unknown outcome may have swapped, any other failure must not have
// (I3).
func (w *World) failedReport(a *actor, mine []histEntry, err error) string {
	if errors.Is(err, pswap.ErrOutcomeUnknown) {
		return "outcome unknown: " + errSummary(err)
	}
	if len(mine) > 0 {
		w.fail("I3", "%s reported a failure (%v) but its swap to %s landed at step %d", a, err, mine[0].gen, mine[0].step)
	}
	return "failed: " + errSummary(err)
}

// rebasedRows is what an append's or a merge's swap must hold, given the
// rows of the generation it replaces (nil for none): the rows and "", or a
// violation.
type rebasedRows func(parent []Row) (want []Row, violation string)

// observeRows checks the rows of a generation m that an append or a merge
// swapped in over prev (nil: none), as the store applies the swap: they
// must be exactly want's of prev's rows (I9-append, I9-merge: under code
// inv). onto names the action against its parent ("appended to",
// "merged into"), what the action ("append", "merge"), and lost what a
// mismatch is ("a duplicate or a loss", "a lost update"). The lock is
// held.
func (w *World) observeRows(inv, onto, what, lost, part string, prev *histEntry, m *manifest.Manifest, want rebasedRows) {
	var parent []Row
	if prev != nil {
		var err error
		if parent, err = w.rowsOf(part, prev.gen); err != nil {
			w.fail(inv, "%s %s %s, whose rows cannot be read: %v", w.curName(), onto, prev.gen, err)
			return
		}
	}
	rows, bad := want(parent)
	if bad != "" {
		w.fail(inv, "%s %s", w.curName(), bad)
		return
	}
	got, err := w.rowsOf(part, m.Generation)
	if err != nil {
		w.fail(inv, "%s swapped in %s %s, whose rows cannot be read: %v", w.curName(), what, m.Generation, err)
		return
	}
	sortRows(rows)
	sortRows(got)
	if !slices.Equal(got, rows) {
		over := "no generation"
		if prev != nil {
			over = prev.gen
		}
		w.fail(inv, "%s swapped in %s %s over %s: rows %v, want %v (%s)", w.curName(), what, m.Generation, over, got, rows, lost)
	}
}
