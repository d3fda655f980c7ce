package swap

import "github.com/pswap/pswap/manifest"

// decision is what a read-back of the pointer says about a pointer swap
// whose PUT did not cleanly succeed (412, or an unknown outcome) and whose
// pointer is no longer the base.
type decision int

const (
	// decidedConflict: another run's generation is current and ours never
	// was (within what the pointer's history proves).
	decidedConflict decision = iota
	// decidedCommitted: our generation is current.
	decidedCommitted
	// decidedSuperseded: ours was current and a later commit replaced it.
	decidedSuperseded
	// decidedSameRun: another attempt of our run id committed since our base.
	decidedSameRun
	// decidedWalk: the pointer's history does not reach back to our base
	// (a pointer without history, or more than manifest.MaxHistory commits
	// since): only the manifests' parent chain can tell superseded from
	// conflict.
	decidedWalk
)

func (d decision) String() string {
	return [...]string{"conflict", "committed", "superseded", "same-run", "walk"}[d]
}

// decide resolves a read-back without any I/O. cur is the pointer read
// back (nil: none), ours the generation we tried to swap in, baseGen the
// generation our swap was conditional on ("" for none), runID ours. Only
// commits newer than the base count: a run id that committed before our
// base was already checked (and overridden, under Force) before the PUT.
func decide(cur *manifest.Pointer, ours, baseGen, runID string) decision {
	if cur == nil {
		return decidedConflict
	}
	if cur.Generation == ours {
		return decidedCommitted
	}
	if !cur.HasHistory() {
		if runID != "" && cur.RunID == runID {
			return decidedSameRun
		}
		return decidedWalk
	}
	since, reached := cur.Since(baseGen)
	for _, e := range since {
		if e.Generation == ours {
			return decidedSuperseded
		}
	}
	if runID != "" {
		for _, e := range since {
			if e.RunID == runID {
				return decidedSameRun
			}
		}
	}
	if reached || (baseGen == "" && !cur.HistoryTruncated) {
		return decidedConflict
	}
	return decidedWalk
}

// skip decides, before anything is written, whether a commit of content c
// on base (nil: none) is a no-op: SameRun when base's history shows runID
// committed, Identical when c equals base's content (unless restore, a
// rollback's deliberate restore; c's Equivalent checksums count, so that a
// base staged with an older checksum algorithm compares too); "" to go on. Force skips neither check's
// I/O, it just commits.
func skip(base *manifest.Pointer, c manifest.Content, runID string, force, restore bool) Outcome {
	if base == nil || force {
		return ""
	}
	if _, ok := base.FindRun(runID); ok {
		return SameRun
	}
	if !restore && c.SameContent(base.ContentChecksum, base.Rows) {
		return Identical
	}
	return ""
}
