package pswap

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/store"
)

// batchRecord is the attempt record of a CommitPartitioned run (package
// audit's Batch, at layout.BatchKey): one record names every partition's
// attempt (its generation, allocated before it begins, and its run id
// RUN/<partition>, the identity and the run's start), in place of the record
// each partition's attempt would write. It is sent in the background when
// the run starts, so that its round trip overlaps the first partition's
// work, and written again at the end with the partitions whose commit was
// a no-op. A partition whose attempt fails writes its own record, as any
// attempt does. A backfill of N new partitions so sends one PUT for the
// audit where it sent N; a run of more than audit.MaxBatchEntries
// partitions writes one record per that many. Its writes never fail the
// run: their error is PartitionedResult.AttemptErr.
type batchRecord struct {
	st   store.Store
	recs []audit.Batch
	wait func()
	mu   sync.Mutex
	err  error
	// written is when the records were last sent (the writer's clock):
	// refresh writes them again once that is batchRefresh ago.
	written time.Time
}

// batchRefresh is audit.BatchRefresh (a variable for the tests).
var batchRefresh = audit.BatchRefresh

// startBatch allocates a generation for each partition of keys and sends
// the run's batch records, every entry started, in the background. It
// returns the generations by partition.
func startBatch(ctx context.Context, st store.Store, keys []string, wo WriteOptions) (*batchRecord, map[string]string) {
	e := env.From(ctx)
	now := e.Now()
	gens := make(map[string]string, len(keys))
	b := &batchRecord{st: st}
	for len(keys) > 0 {
		n := min(len(keys), audit.MaxBatchEntries)
		rec := audit.Batch{ID: e.NewGenerationID(), RunID: wo.Commit.RunID, Identity: wo.Commit.Identity.audit(),
			StartedAt: now, Partitions: make([]audit.BatchEntry, n)}
		for i, k := range keys[:n] {
			gens[k] = e.NewGenerationID()
			rec.Partitions[i] = audit.BatchEntry{Partition: k, Generation: gens[k], Status: audit.StatusStarted}
		}
		b.recs = append(b.recs, rec)
		keys = keys[n:]
	}
	recs := b.recs
	b.written = now
	b.wait = overlap.Start(ctx, func() {
		for _, rec := range recs {
			b.put(ctx, rec)
		}
	})
	return b, gens
}

// refresh writes the run's records again, as they were first written,
// when they were last written at least batchRefresh ago: called before
// each partition's attempt begins, so that no attempt begins more than
// batchRefresh after its record's last write, which is what lets gc judge
// a record by its age (audit.BatchRefresh). A backfill shorter than that
// writes nothing more; a longer one a PUT per record per batchRefresh.
func (b *batchRecord) refresh(ctx context.Context) {
	if b == nil {
		return
	}
	now := env.From(ctx).Now()
	if now.Sub(b.written) < batchRefresh {
		return
	}
	b.wait() // the first write, or the last refresh
	b.written = now
	for _, rec := range b.recs {
		b.put(ctx, rec)
	}
}

// startedAt is the run's start, as its records say (zero for none).
func (b *batchRecord) startedAt() time.Time {
	if b == nil || len(b.recs) == 0 {
		return time.Time{}
	}
	return b.recs[0].StartedAt
}

func (b *batchRecord) put(ctx context.Context, rec audit.Batch) {
	err := retry.Policy{MaxAttempts: 3}.Do(ctx, store.IsRetryable, func(int) error {
		return audit.PutBatch(ctx, b.st, rec)
	})
	b.mu.Lock()
	b.err = errors.Join(b.err, err)
	b.mu.Unlock()
}

// end waits for the started records, then writes again each record that
// has a partition whose commit was a no-op, with that no-op's start and
// end (its own, from the run's memory) and the generation it found, why;
// a commit or a failure leaves its entry as it is (its manifest, or its
// own record, tells the rest: its own start included). No write is added
// per partition: an entry's start is known where its partition's audit
// row needs it (see audit.Attempt.RunStart).
func (b *batchRecord) end(ctx context.Context, out []PartitionOutcome) {
	if b == nil {
		return
	}
	b.wait()
	ctx = context.WithoutCancel(ctx)
	now := env.From(ctx).Now()
	noops := map[string]PartitionOutcome{}
	for _, o := range out {
		if o.Err == nil && !o.Result.Changed {
			noops[o.Partition] = o
		}
	}
	for _, rec := range b.recs {
		changed := false
		rec.Partitions = append([]audit.BatchEntry(nil), rec.Partitions...)
		for i, e := range rec.Partitions {
			o, ok := noops[e.Partition]
			if !ok {
				continue
			}
			found, why := noOpOf(o.Result)
			if found == "" {
				continue // nothing to point at: left as started (no row)
			}
			start := later(o.started, rec.StartedAt)
			end := later(cmp.Or(o.ended, now), start)
			rec.Partitions[i] = audit.BatchEntry{Partition: e.Partition, Generation: e.Generation,
				Status: audit.StatusNoOp, StartedAt: start, FinishedAt: end, Found: found, Why: why}
			changed = true
		}
		if changed {
			b.put(ctx, rec)
		}
	}
}

// removeUnlessTable waits for the started records, then deletes them if
// the table has no table.json (one HEAD): a run that was to create the
// table and committed nothing leaves nothing.
func (b *batchRecord) removeUnlessTable(ctx context.Context) {
	if b == nil {
		return
	}
	b.wait()
	ctx = context.WithoutCancel(ctx)
	if _, err := b.st.Stat(ctx, tablemeta.Key); !errors.Is(err, store.ErrNotFound) {
		return
	}
	for _, rec := range b.recs {
		err := retry.Policy{MaxAttempts: 3}.Do(ctx, store.IsRetryable, func(int) error {
			return b.st.Delete(ctx, layout.BatchKey(rec.ID))
		})
		b.mu.Lock()
		b.err = errors.Join(b.err, err)
		b.mu.Unlock()
	}
}

// errorOf returns the error of the records' writes.
func (b *batchRecord) errorOf() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}
