package swap

import (
	"testing"
	"time"

	"github.com/pswap/pswap/manifest"
)

// decide is a pure function of the pointer read back: every outcome without
// a store.
func TestDecide(t *testing.T) {
	g := make([]string, 6)
	for i := range g {
		g[i] = manifest.NewGenerationID()
	}
	at := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	// chain builds a pointer whose history is gens[0] (current), gens[1]...
	// with the given run ids.
	chain := func(truncated bool, gens []string, runs ...string) *manifest.Pointer {
		var p *manifest.Pointer
		for i := len(gens) - 1; i >= 0; i-- {
			m := &manifest.Manifest{Partition: "dt=1", Generation: gens[i], RunID: runs[i], Content: manifest.Content{ContentChecksum: "t:00000000000000000000000000000000"}, CommittedAt: at.Add(time.Duration(-i) * time.Minute)}
			if i+1 < len(gens) {
				m.Parent = gens[i+1]
			}
			p = m.PointerAfter(p)
		}
		p.HistoryTruncated = p.HistoryTruncated || truncated
		return p
	}
	legacy := func(gen, run string) *manifest.Pointer {
		return &manifest.Pointer{Partition: "dt=1", Generation: gen, RunID: run, Seq: 1, ContentChecksum: "t:00000000000000000000000000000000", CommittedAt: at}
	}
	for _, tc := range []struct {
		name          string
		cur           *manifest.Pointer
		ours, base, r string
		want          decision
	}{
		{"no pointer", nil, g[0], "", "r", decidedConflict},
		{"ours current", chain(false, g[:2], "r", "x"), g[0], g[1], "r", decidedCommitted},
		{"ours replaced", chain(false, g[:3], "y", "r", "x"), g[1], g[2], "r", decidedSuperseded},
		{"same run since base", chain(false, g[:3], "y", "r", "x"), g[5], g[2], "r", decidedSameRun},
		{"same run current", chain(false, g[:2], "r", "x"), g[5], g[1], "r", decidedSameRun},
		{"run before base only", chain(false, g[:3], "y", "x", "r"), g[5], g[2], "r", decidedConflict},
		{"other run since base", chain(false, g[:3], "y", "z", "x"), g[5], g[2], "r", decidedConflict},
		{"no run id", chain(false, g[:2], "", ""), g[5], g[1], "", decidedConflict},
		{"first commit, full history", chain(false, g[:2], "y", "z"), g[5], "", "r", decidedConflict},
		{"first commit, truncated", chain(true, g[:2], "y", "z"), g[5], "", "r", decidedWalk},
		{"base beyond history", chain(true, g[:2], "y", "z"), g[5], g[4], "r", decidedWalk},
		{"legacy same run", legacy(g[0], "r"), g[5], g[4], "r", decidedSameRun},
		{"legacy other", legacy(g[0], "y"), g[5], g[4], "r", decidedWalk},
		{"legacy ours", legacy(g[5], "r"), g[5], g[4], "r", decidedCommitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cur != nil {
				if err := tc.cur.Validate(); err != nil {
					t.Fatal(err)
				}
			}
			if got := decide(tc.cur, tc.ours, tc.base, tc.r); got != tc.want {
				t.Fatalf("decide = %v, want %v", got, tc.want)
			}
		})
	}
}

// skip decides the no-ops before anything is written, without a store.
func TestSkip(t *testing.T) {
	at := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	sum := "t:00000000000000000000000000000000"
	first := (&manifest.Manifest{Partition: "dt=1", Generation: manifest.NewGenerationID(), RunID: "daily",
		Content: manifest.Content{ContentChecksum: sum, Rows: 0}, CommittedAt: at}).PointerAfter(nil)
	base := (&manifest.Manifest{Partition: "dt=1", Generation: manifest.NewGenerationID(), Parent: first.Generation, RunID: "backfill",
		Content: manifest.Content{ContentChecksum: sum, Rows: 0}, CommittedAt: at}).PointerAfter(first)
	same := manifest.Content{ContentChecksum: sum}
	other := manifest.Content{ContentChecksum: "t:11111111111111111111111111111111"}
	for _, tc := range []struct {
		name           string
		base           *manifest.Pointer
		c              manifest.Content
		run            string
		force, restore bool
		want           Outcome
	}{
		{"first commit", nil, same, "daily", false, false, ""},
		{"current run", base, other, "backfill", false, false, SameRun},
		{"earlier run", base, other, "daily", false, false, SameRun},
		{"forced", base, same, "daily", true, false, ""},
		{"identical", base, same, "new", false, false, Identical},
		{"identical restore", base, same, "", false, true, ""},
		{"same run restore", base, same, "daily", false, true, SameRun},
		{"new content", base, other, "new", false, false, ""},
		{"no run id", base, other, "", false, false, ""},
	} {
		if got := skip(tc.base, tc.c, tc.run, tc.force, tc.restore); got != tc.want {
			t.Errorf("%s: skip = %q, want %q", tc.name, got, tc.want)
		}
	}
}
