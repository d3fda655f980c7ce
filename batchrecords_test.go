package pswap_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// batchKeys lists the table's batch attempt records.
func batchKeys(t *testing.T, st store.Store) []string {
	t.Helper()
	var keys []string
	for a, err := range st.List(ctx, layout.BatchesPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, a.Key)
	}
	return keys
}

// TestAuditUnreadableBatchRecord: a backfill's batch record that cannot
// be read does not stop the audit, nor is it skipped in silence (it was):
// Audit returns every row, and an error matching ErrCorrupt and
// ErrCorruptBatchRecord that names the record; the rows of another
// backfill, whose record reads, keep its identity; PublishAudit publishes
// them all, counts the record and returns the same error.
func TestAuditUnreadableBatchRecord(t *testing.T) {
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	id := pswap.Identity{Job: "sales_backfill", Task: "load"}
	opts := pswap.PartitionedOptions{Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "first", Identity: id}}}
	if res, err := tb.CommitPartitioned(ctx, hiveFolder(t, 2, 0), opts); err != nil || res.Committed != 2 {
		t.Fatalf("the first backfill: %+v, %v", res, err)
	}
	good := batchKeys(t, mem)
	opts.Write.Commit.RunID = "second"
	if res, err := tb.CommitPartitioned(ctx, hiveFolder(t, 3, 100), opts); err != nil || res.Committed != 3 {
		t.Fatalf("the second backfill: %+v, %v", res, err)
	}
	var bad string
	for _, k := range batchKeys(t, mem) {
		if k != good[0] {
			bad = k
		}
	}
	if len(good) != 1 || bad == "" {
		t.Fatalf("batch records %v, then %v", good, batchKeys(t, mem))
	}
	if _, err := mem.Put(ctx, bad, []byte(`{"version":"1.0","id":`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	rows, err := tb.Audit(ctx, pswap.AuditOptions{})
	if !errors.Is(err, pswap.ErrCorrupt) || !errors.Is(err, pswap.ErrCorruptBatchRecord) || !strings.Contains(err.Error(), bad) ||
		!strings.HasPrefix(err.Error(), "corrupt") {
		t.Fatalf("the audit with an unreadable batch record: %v, want ErrCorruptBatchRecord naming %s", err, bad)
	}
	n := map[string]int{}
	for _, r := range rows {
		n[r.RunID]++
		if strings.HasPrefix(r.RunID, "first/") && r.Job != id.Job {
			t.Errorf("a row of the readable record without its identity: %+v", r)
		}
	}
	// Each commit's run id is its manifest's: only the unreadable
	// record's identity is lost.
	if len(rows) != 5 || n["first/dt=2026-09-01"] != 1 || n["second/dt=2026-09-03"] != 1 {
		t.Errorf("rows %+v, want every commit's", rows)
	}
	dst := pswap.NewTable(memstore.New())
	pub, err := tb.PublishAudit(ctx, dst, pswap.AuditPublishOptions{})
	if !errors.Is(err, pswap.ErrCorruptBatchRecord) || pub.Rows != 5 || pub.UnreadableRecords != 1 || pub.Corrupt != 0 {
		t.Errorf("PublishAudit: %+v, %v; want 5 rows published, 1 unreadable record and its error", pub, err)
	}
}

// steppingClock is a clock that moves one second at every reading, shared
// by a memory store and the writer's environment: every start, upload and
// commit of a run gets a time of its own.
func steppingClock() func() time.Time {
	var n atomic.Int64
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { return t0.Add(time.Duration(n.Add(1)) * time.Second) }
}

// clockedKill is a killSwitch with its store's clock.
type clockedKill struct {
	*killSwitch
	clock store.Clock
}

func (c clockedKill) Now(ctx context.Context) (time.Time, error) { return c.clock.Now(ctx) }

// TestAuditPartitionStartTimes: each partition of a backfill (one at a
// time, in key order) has the start of its own attempt, not the run's
// (every partition had the run's start): a commit's is its manifest's
// (when its attempt began), after the commit of the partition before it;
// a partition killed before its manifest has the time of its first
// upload, after the same; a no-op's and a failure's are their own, each
// after the partition before it ended; and no row starts after it ends.
// The batch record is still one PUT at the start (and one at the end for
// the no-ops): no write per partition.
func TestAuditPartitionStartTimes(t *testing.T) {
	clock := steppingClock()
	sctx := env.With(ctx, &env.Env{Order: env.InOrder, Clock: clock})
	mem := memstore.New(memstore.Options{Now: clock})
	const dying = "dt=2026-09-03"
	ks := newKillSwitch(mem, func(key string) bool { return strings.HasPrefix(key, layout.ManifestsPrefix(dying)) })
	root := hiveFolder(t, 4, 0)
	opts := pswap.PartitionedOptions{Parallel: 1, Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "bf"}}}
	done := make(chan error, 1)
	go func() {
		_, err := pswap.NewTable(clockedKill{ks, mem}).CommitPartitioned(sctx, root, opts)
		done <- err
	}()
	<-ks.killed
	live := pswap.NewTable(mem)
	by, err := auditBy(t, live)
	if err != nil {
		t.Fatal(err)
	}
	// ordered checks that each partition's row of run run started after
	// the row of the partition before it ended, and ended after it
	// started.
	ordered := func(when string, run string, want []string) {
		t.Helper()
		var prevEnd *time.Time
		for _, p := range want {
			var r *pswap.AuditRow
			for i := range by[p] {
				if by[p][i].RunID == run+"/"+p {
					r = &by[p][i]
				}
			}
			if r == nil || r.StartedAt == nil {
				t.Errorf("%s: %s has no row of run %s with a start: %+v", when, p, run, by[p])
				return
			}
			if prevEnd != nil && !r.StartedAt.After(*prevEnd) {
				t.Errorf("%s: %s started at %s, not after the partition before it ended (%s): %+v", when, p, r.StartedAt, prevEnd, r)
			}
			if r.FinishedAt != nil && r.FinishedAt.Before(*r.StartedAt) {
				t.Errorf("%s: %s ended before it started: %+v", when, p, r)
			}
			prevEnd = r.FinishedAt
			if prevEnd == nil {
				prevEnd = r.CreatedAt // the killed one: its first upload
			}
		}
	}
	ordered("after the kill", "bf", []string{"dt=2026-09-01", "dt=2026-09-02", dying})
	if r := by[dying]; len(r) != 1 || r[0].Status != "started" || r[0].CreatedAt == nil || !r[0].StartedAt.Equal(*r[0].CreatedAt) {
		t.Errorf("the killed partition: %+v, want started at its first upload", r)
	}
	close(ks.release)
	<-done

	// The run again: two no-ops, then two commits.
	if res, err := live.CommitPartitioned(sctx, root, opts); err != nil || res.Committed != 2 || res.Unchanged != 2 {
		t.Fatalf("the retry: %+v, %v", res, err)
	}
	by, err = auditBy(t, live)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"dt=2026-09-01", "dt=2026-09-02"} {
		var kept []pswap.AuditRow
		for _, r := range by[p] {
			if r.Status == "no-op" {
				kept = append(kept, r)
			}
		}
		by[p] = kept
	}
	by[dying] = by[dying][:1] // its commit (the dead attempt is failed, after it)
	if by[dying][0].Status != "succeeded" {
		t.Fatalf("%s after the retry: %+v", dying, by[dying])
	}
	ordered("the retry", "bf", []string{"dt=2026-09-01", "dt=2026-09-02", dying, "dt=2026-09-04"})

	// A run whose second partition fails: its own record has its start.
	bad := hiveFolder(t, 3, 100)
	if err := os.WriteFile(filepath.Join(bad, "dt=2026-09-02", "data.parquet"), []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := live.CommitPartitioned(sctx, bad, pswap.PartitionedOptions{Parallel: 1,
		Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "fix"}}}); err != nil || res.Failed != 1 {
		t.Fatalf("the run with a bad input: %+v, %v", res, err)
	}
	if by, err = auditBy(t, live); err != nil {
		t.Fatal(err)
	}
	ordered("a failed partition", "fix", []string{"dt=2026-09-01", "dt=2026-09-02", "dt=2026-09-03"})
}

// batchPuts counts the PUTs of batch records.
type batchPuts struct {
	store.Store
	n atomic.Int64
}

func (b *batchPuts) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	if _, ok := layout.ParseBatchKey(key); ok {
		b.n.Add(1)
	}
	return b.Store.Put(ctx, key, data, opts)
}

// TestBatchRecordRefresh: a backfill writes its batch record once (a run
// shorter than audit.BatchRefresh); a longer one writes it again before
// it begins a partition once the last write is that old (here: at once,
// so before every partition but the first, which creates the table), so
// that gc, which judges a record by its age, never deletes the record of
// an attempt that may still begin. The record stays whole.
func TestBatchRecordRefresh(t *testing.T) {
	for _, c := range []struct {
		refresh time.Duration
		want    int64
	}{{0, 3}, {time.Hour, 1}} {
		restore := pswap.SetBatchRefresh(c.refresh)
		st := &batchPuts{Store: memstore.New()}
		tb := pswap.NewTable(st)
		res, err := tb.CommitPartitioned(ctx, hiveFolder(t, 3, 0), pswap.PartitionedOptions{Parallel: 1,
			Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "bf"}}})
		restore()
		if err != nil || res.Committed != 3 || res.AttemptErr != nil {
			t.Fatalf("refresh %s: %+v, %v", c.refresh, res, err)
		}
		if got := st.n.Load(); got != c.want {
			t.Errorf("refresh %s: %d PUTs of the batch record, want %d", c.refresh, got, c.want)
		}
		if by, err := auditBy(t, tb); err != nil || len(by) != 3 || by["dt=2026-09-03"][0].RunID != "bf/dt=2026-09-03" {
			t.Errorf("refresh %s: the audit after: %v, %v", c.refresh, by, err)
		}
	}
}
