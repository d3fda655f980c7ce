package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
)

// AttemptVersion is the version of the attempt record's format.
const AttemptVersion = "1.0"

// Statuses of an attempt: the audit's status column, and (started, no-op,
// failed) what an attempt record says.
const (
	StatusStarted   = "started"   // began, and has not ended as far as the store tells: running, or died
	StatusSucceeded = "succeeded" // committed its generation
	StatusFailed    = "failed"    // ended without a commit (an error, or it died and a later attempt of its run ended)
	StatusAbandoned = "abandoned" // began, never ended, and is past the grace period: it can never commit
	StatusNoOp      = "no-op"     // ended without a change: its run had committed, or its content was the current one
)

// Limits of an attempt record's fields.
const (
	maxAttemptBytes = 16 << 10
	maxIdentityLen  = 512  // each identity field, in bytes
	maxWhyLen       = 1000 // the why of a failed attempt, in bytes
)

// Identity names the orchestrator's unit of work that ran an attempt:
// Airflow's DAG, task and logical date, Dagster's job and op or asset, or
// what flags say. Every field is optional.
type Identity struct {
	// Job is the DAG or job (Airflow's dag_id, Dagster's job name).
	Job string `json:"job,omitempty"`
	// Task is the task, op or asset (Airflow's task_id).
	Task string `json:"task,omitempty"`
	// LogicalDate is the run's logical date (Airflow's logical or
	// execution date), as the orchestrator spells it.
	LogicalDate string `json:"logical_date,omitempty"`
	// JobRunID is the orchestrator's own id of the run (Airflow's
	// dag_run_id, Dagster's run id), which the attempt's run id need not
	// contain.
	JobRunID string `json:"job_run_id,omitempty"`
}

// Attempt is the record an attempt writes at layout.AttemptKey when it
// starts (Status started), beside its first upload, and writes again when
// it ends without a commit (no-op or failed). A commit leaves it as it
// was: the manifest tells the rest.
type Attempt struct {
	Version    string    `json:"version"`
	Partition  string    `json:"partition"`
	Generation string    `json:"generation"` // the generation the attempt writes
	RunID      string    `json:"run_id,omitempty"`
	Identity   Identity  `json:"identity"`
	StartedAt  time.Time `json:"started_at"` // the writer's clock
	Status     string    `json:"status"`     // started, no-op or failed
	// FinishedAt is when a no-op or failed attempt ended (zero while
	// started).
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Found is the generation a no-op found: its run's commit, or the
	// current one with the same content.
	Found string `json:"found,omitempty"`
	// Why is what ended a failed attempt (its error, shortened), or what
	// made a no-op one.
	Why string `json:"why,omitempty"`

	// RunStart: StartedAt is the start of the backfill that ran the
	// attempt (a batch record's entry written before the attempt began),
	// a lower bound of the attempt's own start. Never written.
	RunStart bool `json:"-"`
}

// Validate checks a record before it is written (ParseAttempt checks the
// same when it is read).
func (a *Attempt) Validate() error {
	if err := partition.Validate(a.Partition); err != nil {
		return fmt.Errorf("attempt record: %w", err)
	}
	if err := manifest.ValidateGenerationID(a.Generation); err != nil {
		return fmt.Errorf("attempt record: %w", err)
	}
	if err := manifest.ValidateRunID(a.RunID); err != nil {
		return fmt.Errorf("attempt record: %w", err)
	}
	for name, v := range map[string]string{"job": a.Identity.Job, "task": a.Identity.Task,
		"logical_date": a.Identity.LogicalDate, "job_run_id": a.Identity.JobRunID} {
		if len(v) > maxIdentityLen || !utf8.ValidString(v) {
			return fmt.Errorf("attempt record: identity.%s: more than %d bytes, or not UTF-8", name, maxIdentityLen)
		}
	}
	switch a.Status {
	case StatusStarted:
		if !a.FinishedAt.IsZero() || a.Found != "" || a.Why != "" {
			return errors.New("attempt record: a started attempt has no end")
		}
	case StatusNoOp:
		if err := manifest.ValidateGenerationID(a.Found); err != nil {
			return fmt.Errorf("attempt record: found: %w", err)
		}
	case StatusFailed:
		if a.Found != "" {
			return errors.New("attempt record: a failed attempt found no generation")
		}
	default:
		return fmt.Errorf("attempt record: status %q (started, no-op or failed)", a.Status)
	}
	if a.Status != StatusStarted && a.FinishedAt.IsZero() {
		return errors.New("attempt record: an ended attempt needs finished_at")
	}
	if len(a.Why) > maxWhyLen || !utf8.ValidString(a.Why) {
		return fmt.Errorf("attempt record: why: more than %d bytes, or not UTF-8", maxWhyLen)
	}
	if a.StartedAt.IsZero() {
		return errors.New("attempt record: started_at is required")
	}
	return nil
}

// MarshalAttempt encodes a record (version set), after Validate.
func MarshalAttempt(a Attempt) ([]byte, error) {
	a.Version = AttemptVersion
	a.StartedAt, a.FinishedAt = a.StartedAt.UTC(), a.FinishedAt.UTC()
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(a)
}

// ParseAttempt decodes a record strictly: every field known and of its
// type, the version's major 1 (fields of a newer minor are ignored), and
// Validate's checks.
func ParseAttempt(data []byte) (*Attempt, error) {
	fields, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: maxAttemptBytes, MaxDepth: 3})
	if p != nil {
		return nil, fmt.Errorf("attempt record: %w", p)
	}
	r := strictjson.NewReader(fields, AttemptVersion)
	a := &Attempt{Version: r.Str("version", true)}
	major, minor, ok := strictjson.ParseVersion(a.Version)
	if r.Err() == nil && (!ok || major != 1) {
		return nil, fmt.Errorf("attempt record: version %q (this pswap reads 1.x)", a.Version)
	}
	r.SetLenient(minor > 0)
	r.Known("version", "partition", "generation", "run_id", "identity", "started_at", "status", "finished_at", "found", "why")
	a.Partition = r.Str("partition", true)
	a.Generation = r.Str("generation", true)
	a.RunID = r.Str("run_id", false)
	a.StartedAt = r.Time("started_at")
	a.Status = r.Str("status", true)
	if r.Has("finished_at") {
		a.FinishedAt = r.Time("finished_at")
	}
	a.Found = r.Str("found", false)
	a.Why = r.Str("why", false)
	if id := r.Object("identity", false); id != nil {
		id.Known("job", "task", "logical_date", "job_run_id")
		a.Identity = Identity{Job: id.Str("job", false), Task: id.Str("task", false),
			LogicalDate: id.Str("logical_date", false), JobRunID: id.Str("job_run_id", false)}
	}
	if p := r.Err(); p != nil {
		return nil, fmt.Errorf("attempt record: %w", p)
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// PutAttempt writes a's record at its key (one PUT; a later one replaces
// it).
func PutAttempt(ctx context.Context, st store.Store, a Attempt) error {
	data, err := MarshalAttempt(a)
	if err != nil {
		return err
	}
	if _, err := st.Put(ctx, layout.AttemptKey(a.Partition, a.Generation), data, store.PutOptions{}); err != nil {
		return fmt.Errorf("write the attempt record %s: %w", st.URI(layout.AttemptKey(a.Partition, a.Generation)), err)
	}
	return nil
}

// errBadAttempt marks a record that cannot be read: the audit shows its
// attempt without what it says.
var errBadAttempt = errors.New("attempt record cannot be read")

// ReadAttempt reads the record of generation gen of part (store.ErrNotFound
// when there is none; a record that cannot be decoded, or that names
// another partition or generation, matches errBadAttempt).
func ReadAttempt(ctx context.Context, st store.Store, part, gen string) (*Attempt, error) {
	data, _, err := store.ReadAll(ctx, st, layout.AttemptKey(part, gen))
	if err != nil {
		return nil, err
	}
	a, err := ParseAttempt(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", st.URI(layout.AttemptKey(part, gen)), errBadAttempt, err)
	}
	if a.Partition != part || a.Generation != gen {
		return nil, fmt.Errorf("%s: %w: it records %s/%s", st.URI(layout.AttemptKey(part, gen)), errBadAttempt, a.Partition, a.Generation)
	}
	return a, nil
}
