package audit

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/swap"
)

var t0 = time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)

const part = "dt=2026-11-28"

// gens returns n generation ids in time order.
func gens(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("01900000-0000-7000-8000-%012d", i+1)
	}
	return out
}

func man(gen, parent, run string, at time.Time, rows int64) *manifest.Manifest {
	return &manifest.Manifest{Partition: part, Generation: gen, Parent: parent, RunID: run, CreatedAt: at.Add(-time.Second),
		CommittedAt: at, Content: manifest.Content{Rows: rows, Bytes: 10 * rows, Files: []manifest.File{{Path: "part-00000.parquet", Size: 10 * rows, Rows: rows}}}}
}

func summary(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		n := "-"
		if r.Rows != nil {
			n = fmt.Sprint(*r.Rows)
		}
		fmt.Fprintf(&b, "%s %s %s %s rows=%s by=%s\n", r.Generation[len(r.Generation)-2:], r.Kind, r.State, r.RunID, n, strings.TrimPrefix(r.SupersededBy, "01900000-0000-7000-8000-0000000000"))
	}
	return b.String()
}

// TestDerive: every kind of attempt, from facts built by hand.
func TestDerive(t *testing.T) {
	g := gens(10)
	// g0 (collected) <- g1 <- g2 <- g3 (rollback to g1) current; g4 a manifest
	// never current; g5 staged; g6 reserved with files; g7 dead upload;
	// g8 dead upload past the grace; g9 a staged record of g2, committed.
	m1, m2, m3 := man(g[1], g[0], "daily", t0.Add(time.Hour), 10), man(g[2], g[1], "backfill", t0.Add(2*time.Hour), 12), man(g[3], g[2], "", t0.Add(3*time.Hour), 10)
	m3.RollbackOf, m3.DataGeneration = g[1], g[1]
	m4 := man(g[4], g[3], "late", t0.Add(4*time.Hour), 1)
	p := m3.Pointer(4)
	p.History = []manifest.HistoryEntry{{Generation: g[3], DataGeneration: g[1], CommittedAt: m3.CommittedAt, Rows: 10},
		{Generation: g[2], RunID: "backfill", CommittedAt: m2.CommittedAt, Rows: 12},
		{Generation: g[1], RunID: "daily", CommittedAt: m1.CommittedAt, Rows: 10},
		{Generation: g[0], RunID: "first", CommittedAt: t0, Rows: 7}}
	p.HistoryTruncated = false
	now := t0.Add(30 * time.Hour)
	f := Facts{Partition: part, Pointer: p, Now: now,
		Manifests: map[string]*manifest.Manifest{g[1]: m1, g[2]: m2, g[3]: m3, g[4]: m4},
		Staged: map[string]*swap.StagedRecord{
			g[5]: {Partition: part, Generation: g[5], StagedAt: now.Add(-time.Hour), Base: p, Content: &manifest.Content{Rows: 3, Bytes: 30, Files: []manifest.File{{}}}},
			g[6]: {Partition: part, Generation: g[6], StagedAt: now.Add(-2 * time.Hour), Reserved: true, Base: m1.Pointer(2)},
			g[2]: {Partition: part, Generation: g[2], StagedAt: t0},
		},
		Data: map[string]DataFolder{
			g[1]: {Files: 1, Bytes: 100, Oldest: t0, Newest: t0}, g[2]: {Files: 1}, g[6]: {Files: 2, Bytes: 5, Oldest: now.Add(-time.Hour)},
			g[7]: {Files: 3, Bytes: 9, Oldest: now.Add(-time.Minute)}, g[8]: {Files: 1, Bytes: 1, Oldest: now.Add(-25 * time.Hour)},
		}}
	got := summary(Derive(f, Options{}))
	want := `04 rollback current  rows=10 by=
03 commit rolled-back backfill rows=12 by=04
02 commit superseded daily rows=10 by=03
01 commit superseded first rows=7 by=02
05 commit failed late rows=1 by=
09 staged abandoned  rows=- by=
07 staged staged  rows=- by=
06 staged staged  rows=3 by=
08 staged uncommitted  rows=- by=
`
	if got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	rows := Derive(f, Options{})
	if r := rows[3]; r.Files != nil || r.CommittedAt == nil || !strings.Contains(r.Why, "garbage-collected") {
		t.Errorf("the collected generation: %+v", r)
	}
	for _, r := range rows {
		switch r.Generation {
		case g[6]:
			if *r.Files != 2 || *r.Bytes != 5 || !strings.Contains(r.Why, "another run committed since") {
				t.Errorf("the reservation: %+v", r)
			}
		case g[5]:
			if !strings.Contains(r.Why, "commit --staged "+g[5]) {
				t.Errorf("the staged generation: %q", r.Why)
			}
		case g[8]:
			if *r.Files != 1 || !strings.Contains(r.Why, "grace") {
				t.Errorf("the old dead upload: %+v", r)
			}
		}
	}
	if n := len(rows); n != 9 {
		t.Errorf("%d rows, want 9", n)
	}
	// Without a pointer: only the attempts, none of them committed.
	f.Pointer = nil
	for _, r := range Derive(f, Options{}) {
		if r.Kind != KindStaged && r.State != StateFailed {
			t.Errorf("without a pointer: %+v", r)
		}
	}
}

// FuzzDerive builds facts from the input (a chain, stray manifests, staged
// records, data folders, a pointer that may name anything) and checks
// what must hold whatever the store holds: no panic, one row per
// generation, every row a known kind and state, exactly one current row
// when there is a pointer, and times in microseconds.
func FuzzDerive(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 0, 4, 5, 6})
	f.Add([]byte{0, 9, 9, 9, 1, 1})
	f.Add([]byte{8, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := gens(16)
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			v := int(data[0])
			data = data[1:]
			return v
		}
		facts := Facts{Partition: part, Manifests: map[string]*manifest.Manifest{}, Staged: map[string]*swap.StagedRecord{},
			Data: map[string]DataFolder{}, Now: t0.Add(time.Duration(next()) * time.Hour)}
		for len(data) > 0 {
			op, i, j := next()%5, next()%16, next()%17
			at := t0.Add(time.Duration(binary.LittleEndian.Uint16(append([]byte{byte(i), byte(j)}, 0)[:2])) * time.Millisecond)
			parent := ""
			if j < 16 && j != i {
				parent = g[j]
			}
			switch op {
			case 0:
				m := man(g[i], parent, fmt.Sprint("run", j), at.Add(time.Nanosecond*7), int64(j))
				if j%3 == 0 && parent != "" {
					m.RollbackOf, m.DataGeneration = parent, parent
				}
				facts.Manifests[g[i]] = m
			case 1:
				facts.Staged[g[i]] = &swap.StagedRecord{Partition: part, Generation: g[i], StagedAt: at, Reserved: j%2 == 0}
			case 2:
				facts.Data[g[i]] = DataFolder{Files: int64(j), Bytes: int64(i), Oldest: at, Newest: at}
			case 3:
				m := man(g[i], parent, "", at, 1)
				facts.Pointer = m.Pointer(1)
				if j%2 == 0 && parent != "" {
					facts.Pointer.History = append(facts.Pointer.History, manifest.HistoryEntry{Generation: parent, CommittedAt: at})
				}
			case 4:
				delete(facts.Manifests, g[i])
			}
		}
		rows := Derive(facts, Options{})
		seen := map[string]bool{}
		current := 0
		for _, r := range rows {
			if seen[r.Generation] {
				t.Fatalf("generation %s twice: %s", r.Generation, summary(rows))
			}
			seen[r.Generation] = true
			switch r.Kind {
			case KindCommit, KindRollback, KindMerge, KindStaged:
			default:
				t.Fatalf("kind %q", r.Kind)
			}
			switch r.State {
			case StateCurrent:
				current++
			case StateSuperseded, StateRolledBack, StateFailed, StateStaged, StateUncommitted, StateAbandoned, StateUnknown:
			default:
				t.Fatalf("state %q", r.State)
			}
			for c, v := range r.Times() {
				if v != nil && !v.Equal(v.Truncate(time.Microsecond)) {
					t.Fatalf("%s %v is not in microseconds", c, v)
				}
			}
			if r.Partition != part {
				t.Fatalf("partition %q", r.Partition)
			}
		}
		if want := map[bool]int{true: 1, false: 0}[facts.Pointer != nil]; current != want {
			t.Fatalf("%d current rows, want %d:\n%s", current, want, summary(rows))
		}
		rec := Record(rows)
		if rec.NumRows() != int64(len(rows)) {
			t.Fatalf("record of %d rows for %d", rec.NumRows(), len(rows))
		}
		rec.Release()
	})
}
