package audit

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

func batchOf(g []string) Batch {
	return Batch{ID: g[0], RunID: "backfill", Identity: Identity{Job: "sales_backfill", Task: "load"}, StartedAt: t0,
		Partitions: []BatchEntry{
			{Partition: "dt=2026-11-27", Generation: g[1], Status: StatusStarted},
			{Partition: part, Generation: g[2], Status: StatusStarted},
			{Partition: "dt=2026-11-29", Generation: g[3], Status: StatusNoOp, StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(time.Minute), Found: g[4], Why: "same-run"},
		}}
}

// TestBatchRecord: a batch record reads back as written, each entry as
// the attempt record of its partition (run id RUN/<partition>, the
// batch's identity and start); a record of a partition twice, of no
// partition or of a bad entry is refused; a record under another id's
// key, or not a record, is Bad, not an error.
func TestBatchRecord(t *testing.T) {
	ctx := context.Background()
	g := gens(6)
	st := memstore.New()
	if err := PutBatch(ctx, st, batchOf(g)); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBatches(ctx, st, CollectOptions{})
	if err != nil || len(b.Bad) != 0 {
		t.Fatal(err, b.Bad)
	}
	a := b.Attempts[part][g[2]]
	if a == nil || a.RunID != "backfill/"+part || a.Identity.Job != "sales_backfill" || !a.StartedAt.Equal(t0) || a.Status != StatusStarted {
		t.Fatalf("the entry of %s: %+v", part, a)
	}
	if n := b.Attempts["dt=2026-11-29"][g[3]]; n == nil || n.Status != StatusNoOp || n.Found != g[4] ||
		!n.StartedAt.Equal(t0.Add(time.Second)) || n.RunStart {
		t.Fatalf("the no-op entry, with its own start: %+v", n)
	}
	if !a.RunStart {
		t.Errorf("an entry without a start of its own has the run's, as a lower bound: %+v", a)
	}
	// A record of format 1.0 (no entry's own start) reads.
	v10 := []byte(`{"version":"1.0","id":"` + g[0] + `","run_id":"r","identity":{},"started_at":"2026-11-28T00:00:00Z",` +
		`"partitions":[{"partition":"` + part + `","generation":"` + g[1] + `","status":"started"}]}`)
	if b10, err := ParseBatch(v10); err != nil || !b10.Attempts()[0].RunStart {
		t.Errorf("a 1.0 record: %+v, %v", b10, err)
	}
	for name, edit := range map[string]func(*Batch){
		"twice":     func(b *Batch) { b.Partitions[1].Partition = b.Partitions[0].Partition },
		"none":      func(b *Batch) { b.Partitions = nil },
		"bad id":    func(b *Batch) { b.ID = "x" },
		"bad entry": func(b *Batch) { b.Partitions[2].Found = "" },
		"bad key":   func(b *Batch) { b.Partitions[0].Partition = "dt=" },
	} {
		bb := batchOf(g)
		edit(&bb)
		if _, err := MarshalBatch(bb); err == nil {
			t.Errorf("%s: written", name)
		}
	}
	other := batchOf(g)
	other.ID = g[5]
	data, err := MarshalBatch(other)
	if err != nil {
		t.Fatal(err)
	}
	for key, body := range map[string][]byte{layout.BatchKey(g[1]): data, layout.BatchKey(g[4]): []byte("{")} {
		if _, err := st.Put(ctx, key, body, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	b, err = ReadBatches(ctx, st, CollectOptions{})
	if err != nil || len(b.Bad) != 2 || b.Attempts[part][g[2]] == nil {
		t.Fatalf("with two bad records: %v, bad %v", err, b.Bad)
	}
}

// TestDeriveBatch: a batch entry stands for the attempt record of its
// generation: it names the run and identity of a commit, and of files
// left without a manifest (started); a partition's own record wins over
// it; an entry still started with nothing else on the store is no row
// (never reached), an ended one (no-op) is. An entry that knows only the
// run's start (RunStart) gives its row the partition's own: a commit's
// manifest's created_at, the first upload of files left behind; a
// partition's own record, its own.
func TestDeriveBatch(t *testing.T) {
	g := gens(6)
	m1 := man(g[1], "", "backfill/"+part, t0.Add(time.Minute), 10)
	ba := func(gen, status string) *Attempt {
		a := att(gen, "backfill/"+part, status, t0)
		a.RunStart = true
		if status == StatusNoOp {
			a.Found = g[1]
		}
		return a
	}
	own := att(g[3], "backfill/"+part, StatusFailed, t0)
	own.Why = "bad input"
	f := Facts{Partition: part, Pointer: m1.Pointer(1), Now: t0.Add(time.Hour),
		Manifests: map[string]*manifest.Manifest{g[1]: m1},
		Data:      map[string]DataFolder{g[2]: {Files: 1, Bytes: 5, Oldest: t0.Add(2 * time.Minute)}},
		Attempts:  map[string]*Attempt{g[3]: own}, BadAttempts: map[string]string{},
		Batch: map[string]*Attempt{g[1]: ba(g[1], StatusStarted), g[2]: ba(g[2], StatusStarted), g[3]: ba(g[3], StatusStarted),
			g[4]: ba(g[4], StatusStarted), g[5]: ba(g[5], StatusNoOp)},
	}
	var got strings.Builder
	for _, r := range Derive(f, Options{}) {
		got.WriteString(r.Generation[len(r.Generation)-2:] + " " + r.Status + " " + r.RunID + " " + r.Job + " " + r.NoOpOf + "\n")
		want := map[string]time.Time{g[1]: m1.CreatedAt, g[2]: t0.Add(2 * time.Minute), g[3]: t0, g[5]: t0}[r.Generation]
		if r.StartedAt == nil || !r.StartedAt.Equal(want) {
			t.Errorf("%s started at %v, want %s", r.Generation, r.StartedAt, want)
		}
	}
	sfx := func(i int) string { return g[i][len(g[i])-2:] }
	want := sfx(1) + " succeeded backfill/" + part + " backfill \n" +
		sfx(3) + " failed backfill/" + part + " backfill \n" +
		sfx(5) + " no-op backfill/" + part + " backfill " + g[1] + "\n" +
		sfx(2) + " started backfill/" + part + " backfill \n"
	if got.String() != want {
		t.Errorf("rows:\n%s\nwant\n%s", got.String(), want)
	}
}

// FuzzParseBatch: what parses is valid, and encodes to a record that
// parses the same.
func FuzzParseBatch(f *testing.F) {
	data, err := MarshalBatch(batchOf(gens(6)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"version":"1.0","id":"x","started_at":"2026-01-01T00:00:00Z","partitions":[]}`))
	f.Add([]byte(`{"version":"1.1","partitions":[{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBatch(data)
		if err != nil {
			return
		}
		if err := b.Validate(); err != nil {
			t.Fatalf("parsed a record Validate refuses: %v", err)
		}
		again, err := MarshalBatch(*b)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		b2, err := ParseBatch(again)
		if err != nil {
			t.Fatalf("re-parse %s: %v", again, err)
		}
		if again2, _ := MarshalBatch(*b2); !bytes.Equal(again, again2) {
			t.Fatalf("not stable:\n%s\n%s", again, again2)
		}
	})
}
