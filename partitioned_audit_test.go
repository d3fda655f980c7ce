package pswap_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// killSwitch is a store whose writer dies at a chosen write: from the
// write trigger names on, every write (PUT, streaming write, DELETE)
// hangs, as in a killed process, until release; then it fails without
// writing. Reads pass.
type killSwitch struct {
	store.Store
	trigger func(key string) bool
	killed  chan struct{} // closed at the trigger
	release chan struct{}
	mu      sync.Mutex
	dead    bool
}

func newKillSwitch(st store.Store, trigger func(key string) bool) *killSwitch {
	return &killSwitch{Store: st, trigger: trigger, killed: make(chan struct{}), release: make(chan struct{})}
}

var errKilled = errors.New("killed")

func (k *killSwitch) hang(key string) error {
	k.mu.Lock()
	if !k.dead && k.trigger(key) {
		k.dead = true
		close(k.killed)
	}
	dead := k.dead
	k.mu.Unlock()
	if !dead {
		return nil
	}
	<-k.release
	return errKilled
}

func (k *killSwitch) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	if err := k.hang(key); err != nil {
		return store.Attrs{}, err
	}
	return k.Store.Put(ctx, key, data, opts)
}

func (k *killSwitch) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	if err := k.hang(key); err != nil {
		return nil, err
	}
	return k.Store.NewWriter(ctx, key, opts)
}

func (k *killSwitch) Delete(ctx context.Context, key string) error {
	if err := k.hang(key); err != nil {
		return err
	}
	return k.Store.Delete(ctx, key)
}

// auditBy returns the audit's rows by partition, the error of the audit.
func auditBy(t *testing.T, tb *pswap.Table) (map[string][]pswap.AuditRow, error) {
	t.Helper()
	rows, err := tb.Audit(ctx, pswap.AuditOptions{})
	out := map[string][]pswap.AuditRow{}
	for _, r := range rows {
		out[r.Partition] = append(out[r.Partition], r)
	}
	return out, err
}

// TestAuditKilledPartitioned: a backfill (commit --partitioned, one
// partition at a time) killed while it writes the third partition's
// manifest. The audit (of the store as the kill left it) tells which day
// died: the first two succeeded, the third is started, with the run id
// RUN/<partition> and the identity that the run's one batch record gave
// it; the two it never reached have no row. The same run again commits
// the rest: the dead attempt is failed, the two that had landed are
// no-op rows pointing at their commits, and every commit's row has the
// identity. A partition whose input is bad fails (its own record: status
// failed, with the error); a corrupt pointer in one partition does not
// stop the audit of the others.
func TestAuditKilledPartitioned(t *testing.T) {
	sctx := env.With(ctx, &env.Env{Order: env.InOrder})
	mem := memstore.New()
	const dying = "dt=2026-09-03"
	ks := newKillSwitch(mem, func(key string) bool { return strings.HasPrefix(key, layout.ManifestsPrefix(dying)) })
	root := hiveFolder(t, 5, 0)
	id := pswap.Identity{Job: "sales_backfill", Task: "load", LogicalDate: "2026-09-30", JobRunID: "manual__1"}
	opts := pswap.PartitionedOptions{Parallel: 1,
		Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "backfill", Identity: id}}}
	done := make(chan error, 1)
	go func() {
		_, err := pswap.NewTable(ks).CommitPartitioned(sctx, root, opts)
		done <- err
	}()
	<-ks.killed
	live := pswap.NewTable(mem)
	by, err := auditBy(t, live)
	if err != nil {
		t.Fatal(err)
	}
	if len(by) != 3 {
		t.Errorf("partitions in the audit after the kill: %d (%v), want 3 (the two the backfill never reached have no row)", len(by), by)
	}
	for _, p := range []string{"dt=2026-09-01", "dt=2026-09-02"} {
		if r := by[p]; len(r) != 1 || r[0].Status != "succeeded" || r[0].RunID != "backfill/"+p || r[0].Job != id.Job || r[0].Task != id.Task || r[0].JobRunID != id.JobRunID {
			t.Errorf("%s after the kill: %+v, want one succeeded row with the run's identity", p, r)
		}
	}
	r := by[dying]
	if len(r) != 1 || r[0].Status != "started" || r[0].RunID != "backfill/"+dying || r[0].Job != id.Job || r[0].LogicalDate != id.LogicalDate ||
		r[0].StartedAt == nil || r[0].FinishedAt != nil {
		t.Fatalf("the killed day %s: %+v, want one started row with its run id and identity", dying, r)
	}
	deadGen := r[0].Generation
	close(ks.release)
	<-done

	// The same run again.
	res, err := live.CommitPartitioned(sctx, root, opts)
	if err != nil || res.Committed != 3 || res.Unchanged != 2 || res.Failed != 0 || res.AttemptErr != nil {
		t.Fatalf("the retry: %+v, %v", res, err)
	}
	by, err = auditBy(t, live)
	if err != nil {
		t.Fatal(err)
	}
	statuses := func(rows []pswap.AuditRow) string {
		var s []string
		for _, r := range rows {
			s = append(s, r.Status)
		}
		return strings.Join(s, ",")
	}
	for _, p := range []string{"dt=2026-09-01", "dt=2026-09-02"} {
		rows := by[p]
		if statuses(rows) != "succeeded,no-op" || rows[1].NoOpOf != rows[0].Generation || rows[1].RunID != "backfill/"+p || rows[1].Job != id.Job ||
			!strings.Contains(rows[1].Why, "same-run") || rows[1].FinishedAt == nil {
			t.Errorf("%s after the retry: %+v, want its commit and a no-op row pointing at it", p, rows)
		}
	}
	rows := by[dying]
	if statuses(rows) != "succeeded,failed" || rows[1].Generation != deadGen || !strings.Contains(rows[1].Why, "a later attempt of its run ended") ||
		rows[0].Job != id.Job || rows[0].RunID != "backfill/"+dying {
		t.Errorf("%s after the retry: %+v, want its commit, and the dead attempt failed", dying, rows)
	}
	for _, p := range []string{"dt=2026-09-04", "dt=2026-09-05"} {
		if r := by[p]; statuses(r) != "succeeded" || r[0].Job != id.Job {
			t.Errorf("%s after the retry: %+v", p, r)
		}
	}
	checkPartitions(t, live, 5, 0)

	// Another run with a bad input in one partition: it fails, with its
	// own record.
	bad := hiveFolder(t, 3, 100)
	if err := os.WriteFile(filepath.Join(bad, "dt=2026-09-02", "data.parquet"), []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = live.CommitPartitioned(sctx, bad, pswap.PartitionedOptions{Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "fix", Identity: id}}})
	if err != nil || res.Committed != 2 || res.Failed != 1 {
		t.Fatalf("the run with a bad input: %+v, %v", res, err)
	}
	by, err = auditBy(t, live)
	if err != nil {
		t.Fatal(err)
	}
	var failed []pswap.AuditRow
	for _, r := range by["dt=2026-09-02"] {
		if r.RunID == "fix/dt=2026-09-02" {
			failed = append(failed, r)
		}
	}
	if len(failed) != 1 || failed[0].Status != "failed" || failed[0].Job != id.Job || failed[0].FinishedAt == nil || failed[0].Why == "" {
		t.Errorf("the bad input's rows: %+v, want one failed row with its error", failed)
	}

	// A corrupt pointer: the audit of every other partition goes on.
	if _, err := mem.Put(ctx, layout.PointerKey("dt=2026-09-04"), []byte("{not json"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	by, err = auditBy(t, live)
	if !errors.Is(err, pswap.ErrCorrupt) || !strings.Contains(err.Error(), "dt=2026-09-04") {
		t.Errorf("the audit with a corrupt pointer: %v, want ErrCorrupt naming dt=2026-09-04", err)
	}
	if r := by["dt=2026-09-04"]; len(r) != 1 || r[0].Kind != "pointer" || r[0].State != "corrupt" {
		t.Errorf("the corrupt partition's rows: %+v", r)
	}
	if len(by) != 5 || statuses(by["dt=2026-09-05"]) != "succeeded" || !strings.HasPrefix(statuses(by["dt=2026-09-01"]), "succeeded,succeeded") {
		t.Errorf("the other partitions beside a corrupt pointer: %v", by)
	}
}
