package pswap_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/store/memstore"
)

// rowOf returns the audit's row of generation gen.
func rowOf(t *testing.T, tb *pswap.Table, gen string) pswap.AuditRow {
	t.Helper()
	rows, err := tb.Audit(ctx, pswap.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Generation == gen {
			return r
		}
	}
	t.Fatalf("no audit row of %s in %+v", gen, rows)
	return pswap.AuditRow{}
}

// TestAuditRollbackAttempts: a rollback writes an attempt record. One
// killed while it writes its manifest is a started row with its run id
// and identity (its record alone); a rollback that lands is a succeeded
// row with them; one whose target is gone is a failed row with the
// error; a rollback of a partition that never committed (a wrong URL)
// leaves nothing.
func TestAuditRollbackAttempts(t *testing.T) {
	sctx := env.With(ctx, &env.Env{Order: env.InOrder})
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	const key = "dt=2026-11-17"
	first, err := commitRecord(t, tb, key, record(t, "id", []int64{1}), pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := commitRecord(t, tb, key, record(t, "id", []int64{2}), pswap.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	id := pswap.Identity{Job: "ops", Task: "restore", JobRunID: "manual__3"}
	opts := pswap.CommitOptions{RunID: "restore-1", Identity: id}

	ks := newKillSwitch(mem, func(key string) bool { return strings.Contains(key, "/manifests/") })
	kp, err := pswap.NewTable(ks).Partition(key)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		kp.Rollback(sctx, first.Generation, opts)
	}()
	<-ks.killed
	rows, err := tb.Audit(ctx, pswap.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dead *pswap.AuditRow
	for i, r := range rows {
		if r.RunID == "restore-1" {
			dead = &rows[i]
		}
	}
	if dead == nil || dead.Status != "started" || dead.Job != id.Job || dead.JobRunID != id.JobRunID || dead.StartedAt == nil {
		t.Fatalf("the killed rollback's row: %+v (rows %+v), want started with its run id and identity", dead, rows)
	}
	close(ks.release)
	<-done

	p, err := tb.Partition(key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Rollback(sctx, first.Generation, opts)
	if err != nil || !res.Changed {
		t.Fatalf("rollback: %+v, %v", res, err)
	}
	if r := rowOf(t, tb, res.Generation); r.Kind != "rollback" || r.Status != "succeeded" || r.Job != id.Job || r.RunID != "restore-1" {
		t.Errorf("the rollback's row: %+v", r)
	}
	if r := rowOf(t, tb, dead.Generation); r.Status != "failed" {
		t.Errorf("the killed rollback after the retry of its run: %+v, want failed", r)
	}

	gone := "01900000-0000-7000-8000-000000000001"
	res, err = p.Rollback(sctx, gone, pswap.CommitOptions{RunID: "restore-2", Identity: id})
	if err == nil {
		t.Fatalf("a rollback to a generation that never was: %+v", res)
	}
	rows, err = tb.Audit(ctx, pswap.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var failed []pswap.AuditRow
	for _, r := range rows {
		if r.RunID == "restore-2" {
			failed = append(failed, r)
		}
	}
	if len(failed) != 1 || failed[0].Status != "failed" || failed[0].Job != id.Job || !strings.Contains(failed[0].Why, gone) {
		t.Errorf("the failed rollback's rows: %+v, want one failed row with its error", failed)
	}

	other := memstore.New()
	q, err := pswap.NewTable(other).Partition(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Rollback(sctx, first.Generation, opts); err == nil {
		t.Fatal("a rollback of a partition that never committed: no error")
	}
	for a, err := range other.List(ctx, "") {
		t.Errorf("a rollback of nothing left %s (%v)", a.Key, err)
	}
}

// TestAuditReserveAttempts: stage --reserve writes an attempt record, so
// a reservation whose engine died (never committed) is a started row
// with the run id and identity of the reservation; a commit --staged that
// lands is a succeeded row with them; one that conflicts is failed with
// the error.
func TestAuditReserveAttempts(t *testing.T) {
	sctx := env.With(ctx, &env.Env{Order: env.InOrder})
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	const key = "dt=2026-11-18"
	firstCommit(t, tb, mem) // the table's schema: parquetBytes'
	p, err := tb.Partition(key)
	if err != nil {
		t.Fatal(err)
	}
	id := pswap.Identity{Job: "spark_load", Task: "write", LogicalDate: "2026-11-18"}
	opts := pswap.CommitOptions{RunID: "spark-7", Identity: id}
	r1, err := p.Reserve(sctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	putObj(t, mem, r1.Prefix+"part-0.parquet", parquetBytes(t, 0, 10))
	// The engine dies: no commit --staged.
	if r := rowOf(t, tb, r1.Generation); r.Status != "started" || r.RunID != "spark-7" || r.Job != id.Job || r.LogicalDate != id.LogicalDate {
		t.Errorf("the reservation whose engine died: %+v, want started with its run id and identity", r)
	}
	res, err := p.CommitStaged(sctx, r1.Generation, opts)
	if err != nil || !res.Changed {
		t.Fatalf("commit --staged: %+v, %v", res, err)
	}
	if r := rowOf(t, tb, res.Generation); r.Status != "succeeded" || r.Job != id.Job || r.RunID != "spark-7" {
		t.Errorf("the committed reservation's row: %+v", r)
	}

	// Two reservations on the same pointer: the second to commit
	// conflicts.
	a, err := p.Reserve(sctx, pswap.CommitOptions{RunID: "a", Identity: id})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Reserve(sctx, pswap.CommitOptions{RunID: "b", Identity: id})
	if err != nil {
		t.Fatal(err)
	}
	putObj(t, mem, a.Prefix+"part-0.parquet", parquetBytes(t, 100, 10))
	putObj(t, mem, b.Prefix+"part-0.parquet", parquetBytes(t, 200, 10))
	if _, err := p.CommitStaged(sctx, a.Generation, pswap.CommitOptions{RunID: "a", Identity: id}); err != nil {
		t.Fatal(err)
	}
	_, err = p.CommitStaged(sctx, b.Generation, pswap.CommitOptions{RunID: "b", Identity: id})
	if !errors.Is(err, pswap.ErrConflict) {
		t.Fatalf("the second commit --staged: %v, want a conflict", err)
	}
	if r := rowOf(t, tb, b.Generation); r.Status != "failed" || r.RunID != "b" || r.Job != id.Job || !strings.Contains(r.Why, "conflict") {
		t.Errorf("the conflicting commit --staged: %+v, want failed with its error", r)
	}
}
