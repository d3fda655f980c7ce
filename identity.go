package pswap

import (
	"context"
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/overlap"
	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/store"
)

// Identity names the orchestrator's unit of work that runs an attempt, for
// the audit (Table.Audit: the job, task, logical_date and job_run_id
// columns). Every field is optional; IdentityFromEnv reads Airflow's and
// Dagster's.
type Identity struct {
	// Job is the DAG or job (Airflow's dag_id, Dagster's job name).
	Job string
	// Task is the task, op or asset (Airflow's task_id).
	Task string
	// LogicalDate is the run's logical date, as the orchestrator spells
	// it (Airflow's logical or execution date).
	LogicalDate string
	// JobRunID is the orchestrator's own id of the run (Airflow's
	// dag_run_id, Dagster's run id).
	JobRunID string
}

// IdentityFromEnv returns the identity the orchestrator's environment
// gives (getenv is os.Getenv or a test's): Airflow's AIRFLOW_CTX_DAG_ID,
// AIRFLOW_CTX_TASK_ID, AIRFLOW_CTX_LOGICAL_DATE (else
// AIRFLOW_CTX_EXECUTION_DATE) and AIRFLOW_CTX_DAG_RUN_ID when
// AIRFLOW_CTX_DAG_ID is set, else Dagster's DAGSTER_JOB_NAME and
// DAGSTER_RUN_ID; the zero Identity when neither is.
func IdentityFromEnv(getenv func(string) string) Identity {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if dag := get("AIRFLOW_CTX_DAG_ID"); dag != "" {
		id := Identity{Job: dag, Task: get("AIRFLOW_CTX_TASK_ID"), LogicalDate: get("AIRFLOW_CTX_LOGICAL_DATE"),
			JobRunID: get("AIRFLOW_CTX_DAG_RUN_ID")}
		if id.LogicalDate == "" {
			id.LogicalDate = get("AIRFLOW_CTX_EXECUTION_DATE")
		}
		return id
	}
	if run := get("DAGSTER_RUN_ID"); run != "" {
		return Identity{Job: get("DAGSTER_JOB_NAME"), JobRunID: run}
	}
	return Identity{}
}

func (id Identity) audit() audit.Identity {
	return audit.Identity{Job: id.Job, Task: id.Task, LogicalDate: id.LogicalDate, JobRunID: id.JobRunID}
}

// attemptRecord is a Writer's attempt record (layout.AttemptKey): written
// once, in the background, when the attempt starts uploading (or
// commits), so that its round trip overlaps the data's; written again
// when the attempt ends without a commit. Its writes never fail the
// attempt: their error is Writer.AttemptErr.
type attemptRecord struct {
	st  store.Store
	rec audit.Attempt
	// batch: a backfill's batch record (CommitPartitioned) stands for
	// this record while the attempt is started, and tells its no-op: only
	// a failure is written here.
	batch bool
	once  sync.Once
	wait  func() // nil until started
	mu    sync.Mutex
	err   error
}

// start issues the started record (once) in the background.
func (a *attemptRecord) start(ctx context.Context) {
	if a == nil {
		return
	}
	a.once.Do(func() {
		if a.batch {
			a.wait = func() {} // the batch record is the started one
			return
		}
		rec := a.rec
		rec.StartedAt = env.From(ctx).Now()
		rec.Status = audit.StatusStarted
		a.rec = rec
		a.wait = overlap.Start(ctx, func() { a.put(ctx, rec) })
	})
}

func (a *attemptRecord) put(ctx context.Context, rec audit.Attempt) {
	err := retry.Policy{MaxAttempts: 3}.Do(ctx, store.IsRetryable, func(int) error {
		return audit.PutAttempt(ctx, a.st, rec)
	})
	a.mu.Lock()
	a.err = errors.Join(a.err, err)
	a.mu.Unlock()
}

// started reports that the started record was issued.
func (a *attemptRecord) started() bool { return a != nil && a.wait != nil }

// end waits for the started record, then writes how the attempt ended:
// status no-op (found: the generation it found) or failed (why). An
// attempt whose record was never issued writes one for a no-op only
// when always is set (a retry that knew at once it had nothing to do).
func (a *attemptRecord) end(ctx context.Context, status, found, why string, always bool) {
	if a == nil || a.batch && status == audit.StatusNoOp {
		return // a backfill's no-op: the batch record's end says it
	}
	if !a.started() {
		if a.batch {
			always = true // the batch record said it started
		}
		if !always {
			return
		}
		if !a.batch {
			a.rec.StartedAt = env.From(ctx).Now()
		}
	} else {
		a.wait()
	}
	rec := a.rec
	rec.Status, rec.Found, rec.Why = status, found, shortWhy(why)
	rec.FinishedAt = env.From(ctx).Now()
	if rec.FinishedAt.Before(rec.StartedAt) {
		rec.FinishedAt = rec.StartedAt
	}
	a.put(context.WithoutCancel(ctx), rec)
}

// remove waits for the started record, then deletes it: an attempt that
// failed on a table that does not exist leaves nothing behind (a wrong URL
// and bad input make no table).
func (a *attemptRecord) remove(ctx context.Context) {
	if !a.started() || a.batch {
		return // a batch record's entry alone gives no row
	}
	a.wait()
	ctx = context.WithoutCancel(ctx)
	err := retry.Policy{MaxAttempts: 3}.Do(ctx, store.IsRetryable, func(int) error {
		return a.st.Delete(ctx, layout.AttemptKey(a.rec.Partition, a.rec.Generation))
	})
	a.mu.Lock()
	a.err = errors.Join(a.err, err)
	a.mu.Unlock()
}

// finish waits for the started record (a commit ends with it as it is).
func (a *attemptRecord) finish() {
	if a.started() {
		a.wait()
	}
}

// newAttemptRecord returns the record of the attempt that writes
// generation gen of p with opts (nil: none, for the audit table's own
// commits).
func newAttemptRecord(p *Partition, gen string, opts WriteOptions) *attemptRecord {
	if opts.noAttempt {
		return nil
	}
	return &attemptRecord{st: p.t.st, batch: !opts.batchStart.IsZero(),
		rec: audit.Attempt{Partition: p.key, Generation: gen, RunID: opts.Commit.RunID,
			Identity: opts.Commit.Identity.audit(), StartedAt: opts.batchStart}}
}

// ended writes how an attempt that is not a Writer's ended (res, err): a
// failure or a no-op; a commit only waits for the started record. always
// is end's.
func (a *attemptRecord) ended(ctx context.Context, res Result, err error, always bool) {
	switch {
	case err != nil:
		a.end(ctx, audit.StatusFailed, "", err.Error(), always)
	case res.Changed:
		a.finish()
	default:
		found, why := noOpOf(res)
		a.end(ctx, audit.StatusNoOp, found, why, always)
	}
}

// noOpOf is what the attempt record of a no-op commit says: the
// generation it found, and why it did nothing.
func noOpOf(res Result) (found, why string) {
	found = res.Generation
	if res.Outcome == SameRun && res.RunGeneration != "" {
		found = res.RunGeneration
	}
	why = "its content was the current generation's (identical): nothing to commit"
	if res.Outcome == SameRun {
		why = "its run had committed (same-run): nothing to commit"
	}
	return found, why
}

// errorOf returns the error of the record's writes.
func (a *attemptRecord) errorOf() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// shortWhy is an error's first line, at most 300 bytes of whole runes.
func shortWhy(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	const maxLen = 300
	if len(s) <= maxLen {
		return s
	}
	cut := maxLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
