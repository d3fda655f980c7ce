package pswap_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// TestAuditAttempts: the audit row of every attempt, from its attempt
// record. An attempt that dies while it uploads (its writer dropped, as a
// killed process leaves it) is a started row with its run id and
// identity; the retry of its run commits (succeeded) and the dead attempt
// is then failed; another retry is a no-op row pointing at the commit,
// for one PUT; an attempt that fails on bad input and aborts is a failed
// row; a dry run leaves no record.
func TestAuditAttempts(t *testing.T) {
	// One request at a time: the record's write is done when the call
	// that issued it returns (a process killed after its first upload
	// has it on the store).
	sctx := env.With(ctx, &env.Env{Order: env.InOrder})
	cs := storetest.NewCounting(memstore.New())
	tb := pswap.NewTable(cs)
	p, err := tb.Partition("dt=2026-11-17")
	if err != nil {
		t.Fatal(err)
	}
	id := pswap.Identity{Job: "sales_backfill", Task: "load_day", LogicalDate: "2026-11-17", JobRunID: "backfill__2026-11-17"}
	opts := pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "sales_backfill/backfill__2026-11-17", Identity: id}}
	rowsOf := func() map[string]pswap.AuditRow {
		t.Helper()
		rows, err := tb.Audit(ctx, pswap.AuditOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]pswap.AuditRow{}
		for _, r := range rows {
			out[r.Generation] = r
		}
		return out
	}

	dead, err := p.Begin(sctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := dead.WriteRecord(record(t, "id", []int64{1, 2, 3})); err != nil {
		t.Fatal(err)
	}
	// Killed: no Commit, no Abort.
	r := rowsOf()[dead.Generation()]
	if r.Status != "started" || r.State != "uncommitted" || r.RunID != opts.Commit.RunID || r.Job != id.Job || r.Task != id.Task ||
		r.LogicalDate != id.LogicalDate || r.JobRunID != id.JobRunID || r.StartedAt == nil || r.FinishedAt != nil {
		t.Fatalf("the killed attempt's row: %+v", r)
	}

	res, err := commitRecord(t, tb, p.Key(), record(t, "id", []int64{1, 2, 3}), opts)
	if err != nil || !res.Changed {
		t.Fatalf("the retry: %+v, %v", res, err)
	}
	rows := rowsOf()
	if r := rows[res.Generation]; r.Status != "succeeded" || r.Job != id.Job || r.FinishedAt == nil || !r.FinishedAt.Equal(*r.CommittedAt) {
		t.Errorf("the retry's row: %+v", r)
	}
	if r := rows[dead.Generation()]; r.Status != "failed" || !strings.Contains(r.Why, "a later attempt of its run ended ("+res.Generation) {
		t.Errorf("the killed attempt after the retry: %+v", r)
	}

	// Another retry: Writer.AlreadyCommitted, so no data; one PUT, the
	// no-op's record.
	cs.Reset()
	w, err := p.Begin(sctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !w.AlreadyCommitted() {
		t.Fatal("the run committed: AlreadyCommitted")
	}
	if res, err := w.Commit(sctx); err != nil || res.Outcome != pswap.SameRun {
		t.Fatalf("the second retry: %+v, %v", res, err)
	}
	if c := cs.Counts(); c["put"] != 1 || c["put-if-match"]+c["put-if-none-match"]+c["writer"] != 0 {
		t.Errorf("the no-op's requests: %v, want its record's PUT only", c)
	}
	if r := rowsOf()[w.Generation()]; r.Status != "no-op" || r.State != "no-op" || r.NoOpOf != res.Generation || r.Job != id.Job {
		t.Errorf("the no-op's row: %+v, want no-op of %s", r, res.Generation)
	}

	// Bad input: the caller aborts.
	bad, err := p.Begin(sctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "other"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.AddReader(sctx, strings.NewReader("id\nnot-a-number\n"), "in.csv", pswap.FormatCSV); err == nil {
		t.Fatal("a string id into a long column: accepted")
	}
	if err := bad.Abort(context.WithoutCancel(sctx)); err != nil {
		t.Fatal(err)
	}
	if r := rowsOf()[bad.Generation()]; r.Status != "failed" || r.RunID != "other" || !strings.Contains(r.Why, "aborted: ") || r.FinishedAt == nil {
		t.Errorf("the aborted attempt's row: %+v", r)
	}

	cs.Reset()
	dry := pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "dry"}}
	if d, err := p.DryRun(sctx, dry, func(w *pswap.Writer) error { return w.WriteRecord(record(t, "id", []int64{4})) }); err != nil || d.Rows != 1 {
		t.Fatalf("dry run: %+v, %v", d, err)
	}
	if c := cs.Counts(); c["put"] != 0 {
		t.Errorf("a dry run wrote: %v", c)
	}
}
