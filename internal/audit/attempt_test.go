package audit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

func att(gen, run, status string, at time.Time) *Attempt {
	a := &Attempt{Version: AttemptVersion, Partition: part, Generation: gen, RunID: run, StartedAt: at, Status: status,
		Identity: Identity{Job: "backfill", Task: "load_sales", LogicalDate: "2026-11-28T00:00:00+00:00", JobRunID: "manual__1"}}
	if status != StatusStarted {
		a.FinishedAt = at.Add(time.Minute)
	}
	return a
}

// TestDeriveAttempts: what the attempt records add to the rows. g1 and g3
// committed (run daily, then backfill); g2, started before g3 by the same
// run, left files and no manifest: it died, and g3's commit says so
// (failed, not started). g4 is a record alone of a running attempt of another run
// (started), g5 one past the grace period (abandoned); g6 a no-op retry
// of daily pointing at g1; g7 an attempt that failed with an error.
func TestDeriveAttempts(t *testing.T) {
	g := gens(8)
	m1, m3 := man(g[1], "", "daily", t0.Add(time.Hour), 10), man(g[3], g[1], "backfill", t0.Add(3*time.Hour), 12)
	p := m3.Pointer(2)
	p.History = []manifest.HistoryEntry{{Generation: g[3], RunID: "backfill", CommittedAt: m3.CommittedAt, Rows: 12},
		{Generation: g[1], RunID: "daily", CommittedAt: m1.CommittedAt, Rows: 10}}
	now := t0.Add(20 * time.Hour)
	f := Facts{Partition: part, Pointer: p, Now: now,
		Manifests: map[string]*manifest.Manifest{g[1]: m1, g[3]: m3},
		Data:      map[string]DataFolder{g[2]: {Files: 2, Bytes: 20, Oldest: t0.Add(91 * time.Minute)}},
		Attempts: map[string]*Attempt{
			g[1]: att(g[1], "daily", StatusStarted, t0.Add(59*time.Minute)),
			g[2]: att(g[2], "backfill", StatusStarted, t0.Add(90*time.Minute)),
			g[3]: att(g[3], "backfill", StatusStarted, t0.Add(2*time.Hour)),
			g[4]: att(g[4], "other", StatusStarted, now.Add(-time.Hour)),
			g[5]: att(g[5], "stale", StatusStarted, now.Add(-25*time.Hour)),
			g[6]: att(g[6], "daily", StatusNoOp, t0.Add(5*time.Hour)),
			g[7]: att(g[7], "bad", StatusFailed, t0.Add(6*time.Hour)),
		},
		BadAttempts: map[string]string{},
	}
	f.Attempts[g[6]].Found, f.Attempts[g[6]].Why = g[1], "its run had committed (same-run): nothing to commit"
	f.Attempts[g[7]].Why = "conflict"
	rows := Derive(f, Options{})
	var got strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&got, "%s %s %s %s %s job=%s task=%s noop_of=%s finished=%v\n", r.Generation[len(r.Generation)-2:], r.Kind, r.State, r.Status, r.RunID,
			r.Job, r.Task, strings.TrimPrefix(r.NoOpOf, "01900000-0000-7000-8000-0000000000"), r.FinishedAt != nil)
	}
	want := `04 commit current succeeded backfill job=backfill task=load_sales noop_of= finished=true
02 commit superseded succeeded daily job=backfill task=load_sales noop_of= finished=true
06 staged abandoned abandoned stale job=backfill task=load_sales noop_of= finished=false
03 staged uncommitted failed backfill job=backfill task=load_sales noop_of= finished=false
07 commit no-op no-op daily job=backfill task=load_sales noop_of=02 finished=true
08 commit failed failed bad job=backfill task=load_sales noop_of= finished=true
05 staged uncommitted started other job=backfill task=load_sales noop_of= finished=false
`
	if got.String() != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got.String(), want)
	}
	for _, r := range rows {
		if r.StartedAt == nil || r.CreatedAt == nil {
			t.Errorf("%s: started_at %v, created_at %v: want both", r.Generation, r.StartedAt, r.CreatedAt)
		}
		if r.Generation == g[2] && !strings.Contains(r.Why, "a later attempt of its run ended ("+g[3]+", succeeded)") {
			t.Errorf("the dead attempt's why: %q", r.Why)
		}
	}
	// Without the records: the dead attempt is uncommitted and started,
	// its run id unknown (what the audit told before them).
	f.Attempts = nil
	for _, r := range Derive(f, Options{}) {
		if r.Generation == g[2] && (r.Status != StatusStarted || r.RunID != "") {
			t.Errorf("without records: %+v", r)
		}
	}
}

// TestAttemptRoundTrip: a record reads back as written, through the
// store; ParseAttempt refuses what Validate refuses, unknown fields and
// another major version; a record naming another generation is bad.
func TestAttemptRoundTrip(t *testing.T) {
	ctx := t.Context()
	g := gens(2)
	st := memstore.New()
	a := att(g[0], "daily/2026-11-28", StatusNoOp, t0)
	a.Found, a.Why = g[1], "same-run"
	if err := PutAttempt(ctx, st, *a); err != nil {
		t.Fatal(err)
	}
	back, err := ReadAttempt(ctx, st, part, g[0])
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(*back) != fmt.Sprint(*a) {
		t.Errorf("read back %+v, want %+v", *back, *a)
	}
	if _, err := ReadAttempt(ctx, st, part, g[1]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no record: %v, want not found", err)
	}
	data, _ := MarshalAttempt(*a)
	if _, err := st.Put(ctx, "_pswap/p/"+part+"/attempts/"+g[1]+".json", data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAttempt(ctx, st, part, g[1]); !errors.Is(err, errBadAttempt) {
		t.Errorf("a record of another generation: %v, want errBadAttempt", err)
	}
	for name, edit := range map[string]func([]byte) []byte{
		"unknown field":  func(b []byte) []byte { return bytes.Replace(b, []byte(`"status"`), []byte(`"x":1,"status"`), 1) },
		"major 2":        func(b []byte) []byte { return bytes.Replace(b, []byte(`"1.0"`), []byte(`"2.0"`), 1) },
		"bad status":     func(b []byte) []byte { return bytes.Replace(b, []byte(`"no-op"`), []byte(`"done"`), 1) },
		"no started_at":  func(b []byte) []byte { return bytes.Replace(b, []byte(`"started_at"`), []byte(`"startedat"`), 1) },
		"bad found":      func(b []byte) []byte { return bytes.Replace(b, []byte(g[1]), []byte("x"), 1) },
		"not an object":  func([]byte) []byte { return []byte(`[]`) },
		"identity typed": func(b []byte) []byte { return bytes.Replace(b, []byte(`"job":"backfill"`), []byte(`"job":1`), 1) },
	} {
		if _, err := ParseAttempt(edit(data)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	newer := bytes.Replace(bytes.Replace(data, []byte(`"1.0"`), []byte(`"1.3"`), 1), []byte(`"status"`), []byte(`"later":true,"status"`), 1)
	if _, err := ParseAttempt(newer); err != nil {
		t.Errorf("a record of a newer minor version: %v", err)
	}
}

// FuzzParseAttempt: any document parses to a record that passes Validate
// and encodes to a document that parses to the same record, or is refused;
// never a panic.
func FuzzParseAttempt(f *testing.F) {
	g := gens(2)
	for _, a := range []*Attempt{att(g[0], "r", StatusStarted, t0), att(g[1], "", StatusFailed, t0)} {
		data, err := MarshalAttempt(*a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"version":"1.0","partition":"dt=1","generation":"x","started_at":"2026-01-01T00:00:00Z","status":"started"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAttempt(data)
		if err != nil {
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("parsed a record Validate refuses: %v", err)
		}
		again, err := MarshalAttempt(*a)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		b, err := ParseAttempt(again)
		if err != nil {
			t.Fatalf("re-parse %s: %v", again, err)
		}
		if fmt.Sprint(*a) != fmt.Sprint(*b) {
			t.Fatalf("%+v became %+v", *a, *b)
		}
	})
}
