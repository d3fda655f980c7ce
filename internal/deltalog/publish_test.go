package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

type sale struct {
	OrderID int64   `parquet:"order_id"`
	City    string  `parquet:"city"`
	Amount  float64 `parquet:"amount"`
}

// commit writes rows to a partition and returns the commit's result.
func commit(t *testing.T, tbl *pswap.Table, part, run string, rows ...sale) pswap.Result {
	t.Helper()
	ctx := context.Background()
	p, err := tbl.Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: run}})
	if err != nil {
		t.Fatal(err)
	}
	if err := pswap.Write(w, rows...); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pub := publishDelta(ctx, tbl.Store(), res, deltalog.Options{})
	if pub.Err != nil || !pub.Published {
		t.Fatalf("publish %s: %+v", part, pub)
	}
	return res
}

// current is the state's files by partition: generation and rows.
func current(t *testing.T, st store.Store) (*deltalog.State, map[string]string) {
	t.Helper()
	s, err := deltalog.Load(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range s.Files {
		p := a.Tags[deltalog.TagPartition]
		out[p] += fmt.Sprintf("%s/%s;", a.Tags[deltalog.TagGeneration], a.Stats)
	}
	return s, out
}

func TestPublishCommitsAndReplaces(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	r1 := commit(t, tbl, "dt=2026-11-28", "run-28", sale{1, "Lisbon", 1}, sale{2, "Porto", 2})
	r2 := commit(t, tbl, "dt=2026-11-29", "run-29", sale{3, "Faro", 3})
	r3 := commit(t, tbl, "dt=2026-11-28", "fix-28", sale{4, "Braga", 4})
	s, got := current(t, st)
	if s.Version != 2 {
		t.Fatalf("version %d, want 2", s.Version)
	}
	want := map[string]string{
		"dt=2026-11-28": r3.Generation + `/{"numRecords":1};`,
		"dt=2026-11-29": r2.Generation + `/{"numRecords":1};`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	if len(s.Tombstones) != 1 {
		t.Fatalf("%d tombstones, want the one of %s", len(s.Tombstones), r1.Generation)
	}
	for p := range s.Tombstones {
		if !strings.Contains(p, r1.Generation) {
			t.Fatalf("tombstone %s is not of %s", p, r1.Generation)
		}
	}
	if s.Txns["fix-28"].Version != r3.Seq || s.Txns["run-29"].Version != r2.Seq {
		t.Fatalf("txns %v", s.Txns)
	}
	// A publish of an older commit changes nothing: the log has a newer
	// generation of the partition.
	if pub := publishDelta(ctx, tbl.Store(), r1, deltalog.Options{}); pub.Err != nil || pub.Version != 2 {
		t.Fatalf("stale publish: %+v", pub)
	}
	// The reconcile is a no-op.
	if r, err := deltalog.Publish(ctx, tbl.Store(), deltalog.Options{}); err != nil || r.Changed || r.Version != 2 || r.Partitions != 2 {
		t.Fatalf("reconcile: %+v %v", r, err)
	}
}

func TestCheckpointReplaysTheSameState(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	for i := range 12 {
		commit(t, tbl, fmt.Sprintf("dt=2026-11-%02d", 1+i%4), fmt.Sprintf("run-%d", i), sale{int64(i), "x", float64(i)})
	}
	if _, _, err := store.ReadAll(ctx, st, deltalog.CheckpointKey(10)); err != nil {
		t.Fatalf("no checkpoint of version 10: %v", err)
	}
	s, got := current(t, st)
	if s.Checkpoint != 10 || s.Version != 11 {
		t.Fatalf("checkpoint %d version %d", s.Checkpoint, s.Version)
	}
	// The same state replayed from version 0, without the checkpoint.
	if err := st.Delete(ctx, deltalog.LogDir+"_last_checkpoint"); err != nil {
		t.Fatal(err)
	}
	s0, got0 := current(t, st)
	if s0.Checkpoint != -1 || fmt.Sprint(got) != fmt.Sprint(got0) || fmt.Sprint(s.Txns) != fmt.Sprint(s0.Txns) || len(s.Tombstones) != len(s0.Tombstones) {
		t.Fatalf("checkpoint state %v %v, replay %v %v", got, s.Txns, got0, s0.Txns)
	}
	if s.Metadata.Configuration["delta.checkpointInterval"] != "10" || s.Metadata.SchemaString != s0.Metadata.SchemaString {
		t.Fatal("metadata differs")
	}
}

func TestConcurrentPublishersEveryPartitionVisible(t *testing.T) {
	st := memstore.New()
	tbl := pswap.NewTable(st)
	commit(t, tbl, "dt=2026-11-01", "first", sale{0, "x", 0})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			commit(t, tbl, fmt.Sprintf("dt=2026-11-%02d", 2+i), fmt.Sprintf("run-%d", i), sale{int64(i), "x", 1})
		})
	}
	wg.Wait()
	s, got := current(t, st)
	if len(got) != 9 || s.Version != 8 {
		t.Fatalf("version %d with %d partitions, want 8 and 9: %v", s.Version, len(got), got)
	}
}

func TestForeignAddIsRefused(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	commit(t, tbl, "dt=2026-11-01", "first", sale{0, "x", 0})
	foreign := `{"commitInfo":{"operation":"WRITE"}}` + "\n" +
		`{"add":{"path":"dt=2026-11-01/part-0.parquet","partitionValues":{"dt":"2026-11-01"},"size":1,"modificationTime":1,"dataChange":true}}` + "\n"
	if _, err := st.Put(ctx, deltalog.CommitKey(1), []byte(foreign), store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	_, err := deltalog.Publish(ctx, tbl.Store(), deltalog.Options{})
	if !errors.Is(err, deltalog.ErrForeign) || !strings.Contains(err.Error(), "dt=2026-11-01/part-0.parquet") {
		t.Fatalf("err %v, want ErrForeign naming the file", err)
	}
	if _, _, err := store.ReadAll(ctx, st, deltalog.CommitKey(2)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a version was written: %v", err)
	}
}

func TestReferencedAndExpire(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	r1 := commit(t, tbl, "dt=2026-11-01", "a", sale{0, "x", 0})
	r2 := commit(t, tbl, "dt=2026-11-01", "b", sale{1, "x", 0})
	keys, err := deltalog.Referenced(ctx, st, time.Now())
	if err != nil || len(keys) != 2 || !strings.Contains(strings.Join(keys, " "), r1.Generation) || !strings.Contains(strings.Join(keys, " "), r2.Generation) {
		t.Fatalf("referenced %v %v: want the files of both generations", keys, err)
	}
	keys, err = deltalog.Referenced(ctx, st, time.Now().Add(8*24*time.Hour))
	if err != nil || len(keys) != 1 || !strings.Contains(keys[0], r2.Generation) {
		t.Fatalf("after the retention: %v %v, want only %s", keys, err, r2.Generation)
	}
}
