package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

// BatchVersion is the version of the batch attempt record's format: 1.1
// added an entry's own started_at (a 1.0 reader ignores it, as a newer
// minor's field).
const BatchVersion = "1.1"

// batchMinor is BatchVersion's minor: a record of a newer one may carry
// fields this pswap does not know.
const batchMinor = 1

// MaxBatchEntries bounds the partitions of one batch record: a larger
// backfill writes one record per MaxBatchEntries partitions.
const MaxBatchEntries = 1000

// BatchRefresh bounds how long a backfill's batch record goes unwritten
// while the backfill runs: before it begins a partition, a run whose
// record was last written longer ago than this writes it again (one PUT
// per record, not per partition; a backfill shorter than this writes it
// once). So a record last written longer than this before an attempt's
// start never stands for it, which lets gc judge a record by its age as
// it judges an attempt record (the orphan cutoff, less this).
const BatchRefresh = time.Hour

// maxBatchBytes bounds a batch record's size (MaxBatchEntries entries of
// the longest fields fit).
const maxBatchBytes = 4 << 20

// Batch is the attempt record of a backfill (pswap commit --partitioned,
// Table.CommitPartitioned), at layout.BatchKey: one record for the
// attempts of all its partitions, instead of one per partition, written
// once when the backfill starts (every entry started, beside the first
// upload) and again when it ends if some partition ended in a no-op. Each
// entry stands for the attempt record its partition's attempt would have
// written (Attempts): the same run id (RunID/<partition>) and identity;
// its start is the entry's own where the record knows it (a no-op's),
// else the batch's, a lower bound (Attempt.RunStart) that the audit
// replaces with the partition's own (Derive). A partition's attempt that
// fails writes its own record, with its own start,
// (layout.AttemptKey), which takes precedence over its entry; a commit
// leaves its entry as it is (the manifest tells the rest).
type Batch struct {
	Version string `json:"version"`
	// ID is the batch's own id (a generation id: unique, time-ordered).
	ID string `json:"id"`
	// RunID is the backfill's run id; each partition's attempt runs as
	// RunID/<partition> (none when empty).
	RunID     string    `json:"run_id,omitempty"`
	Identity  Identity  `json:"identity"`
	StartedAt time.Time `json:"started_at"` // the writer's clock
	// Partitions are the entries, one per partition attempted.
	Partitions []BatchEntry `json:"partitions"`
}

// BatchEntry is one partition's attempt in a Batch.
type BatchEntry struct {
	Partition  string `json:"partition"`
	Generation string `json:"generation"` // the generation the attempt writes
	// Status is started (a commit, or an attempt that has not ended as
	// far as the record tells), no-op or failed; FinishedAt, Found and
	// Why are an Attempt's.
	Status string `json:"status"`
	// StartedAt is when the partition's own attempt began (the writer's
	// clock), where the record knows it: the end's rewrite gives each
	// no-op its own. Zero: the record was written before the partition's
	// attempt began, and its entry stands for an attempt that began at
	// the batch's StartedAt or later (Attempt.RunStart).
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Found      string    `json:"found,omitempty"`
	Why        string    `json:"why,omitempty"`
}

// EntryRunID is the run id of a partition's attempt in a batch of run id
// run: run/<partition>, or none.
func EntryRunID(run, part string) string {
	if run == "" {
		return ""
	}
	return run + "/" + part
}

// Attempts returns each entry as the attempt record its partition's
// attempt stands for: started at the entry's own start, else at the
// batch's (a lower bound: RunStart set).
func (b *Batch) Attempts() []Attempt {
	out := make([]Attempt, len(b.Partitions))
	for i, e := range b.Partitions {
		out[i] = Attempt{Version: AttemptVersion, Partition: e.Partition, Generation: e.Generation,
			RunID: EntryRunID(b.RunID, e.Partition), Identity: b.Identity, StartedAt: e.StartedAt,
			Status: e.Status, FinishedAt: e.FinishedAt, Found: e.Found, Why: e.Why}
		if e.StartedAt.IsZero() {
			out[i].StartedAt, out[i].RunStart = b.StartedAt, true
		}
	}
	return out
}

// Validate checks a batch record before it is written (ParseBatch checks
// the same when it is read): its id, at most MaxBatchEntries entries,
// each partition once, and every entry a valid attempt record.
func (b *Batch) Validate() error {
	if err := manifest.ValidateGenerationID(b.ID); err != nil {
		return fmt.Errorf("batch record: id: %w", err)
	}
	if err := manifest.ValidateRunID(b.RunID); err != nil {
		return fmt.Errorf("batch record: %w", err)
	}
	if len(b.Partitions) == 0 || len(b.Partitions) > MaxBatchEntries {
		return fmt.Errorf("batch record: %d partitions (1 to %d)", len(b.Partitions), MaxBatchEntries)
	}
	seen := make(map[string]bool, len(b.Partitions))
	for i, a := range b.Attempts() {
		if seen[a.Partition] {
			return fmt.Errorf("batch record: partition %s twice", a.Partition)
		}
		seen[a.Partition] = true
		if err := a.Validate(); err != nil {
			return fmt.Errorf("batch record: partitions[%d]: %w", i, err)
		}
	}
	return nil
}

// MarshalBatch encodes a record (version set), after Validate.
func MarshalBatch(b Batch) ([]byte, error) {
	b.Version = BatchVersion
	b.StartedAt = b.StartedAt.UTC()
	b.Partitions = slices.Clone(b.Partitions)
	for i := range b.Partitions {
		b.Partitions[i].StartedAt = b.Partitions[i].StartedAt.UTC()
		b.Partitions[i].FinishedAt = b.Partitions[i].FinishedAt.UTC()
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(b)
}

// ParseBatch decodes a record strictly: every field known and of its
// type, the version's major 1 (fields of a newer minor are ignored), and
// Validate's checks.
func ParseBatch(data []byte) (*Batch, error) {
	fields, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: maxBatchBytes, MaxDepth: 3})
	if p != nil {
		return nil, fmt.Errorf("batch record: %w", p)
	}
	r := strictjson.NewReader(fields, BatchVersion)
	b := &Batch{Version: r.Str("version", true)}
	major, minor, ok := strictjson.ParseVersion(b.Version)
	if r.Err() == nil && (!ok || major != 1) {
		return nil, fmt.Errorf("batch record: version %q (this pswap reads 1.x)", b.Version)
	}
	r.SetLenient(minor > batchMinor)
	r.Known("version", "id", "run_id", "identity", "started_at", "partitions")
	b.ID = r.Str("id", true)
	b.RunID = r.Str("run_id", false)
	b.StartedAt = r.Time("started_at")
	if id := r.Object("identity", false); id != nil {
		id.Known("job", "task", "logical_date", "job_run_id")
		b.Identity = Identity{Job: id.Str("job", false), Task: id.Str("task", false),
			LogicalDate: id.Str("logical_date", false), JobRunID: id.Str("job_run_id", false)}
	}
	for _, e := range r.Objects("partitions", MaxBatchEntries, "partitions") {
		e.Known("partition", "generation", "status", "started_at", "finished_at", "found", "why")
		be := BatchEntry{Partition: e.Str("partition", true), Generation: e.Str("generation", true),
			Status: e.Str("status", true), Found: e.Str("found", false), Why: e.Str("why", false)}
		if e.Has("started_at") {
			be.StartedAt = e.Time("started_at")
		}
		if e.Has("finished_at") {
			be.FinishedAt = e.Time("finished_at")
		}
		b.Partitions = append(b.Partitions, be)
	}
	if p := r.Err(); p != nil {
		return nil, fmt.Errorf("batch record: %w", p)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// PutBatch writes b's record at its key (one PUT; a later one replaces
// it).
func PutBatch(ctx context.Context, st store.Store, b Batch) error {
	data, err := MarshalBatch(b)
	if err != nil {
		return err
	}
	if _, err := st.Put(ctx, layout.BatchKey(b.ID), data, store.PutOptions{}); err != nil {
		return fmt.Errorf("write the batch attempt record %s: %w", st.URI(layout.BatchKey(b.ID)), err)
	}
	return nil
}

// ErrCorruptBatch: a backfill's batch attempt record cannot be read (it
// does not decode, or records another id than its key's). The audit goes
// on without it: the commits of its partitions keep their rows (each
// manifest names its run id), and lose what only the record told (the
// identity and start of their attempts, the no-ops, the attempts that
// died). Kind: corrupt.
var ErrCorruptBatch = errkind.New("corrupt audit record: a backfill's batch attempt record cannot be read", errkind.ErrCorrupt)

// maxBadNamed bounds the records BadBatchesError names.
const maxBadNamed = 10

// BadBatchesError is the one error of an audit that met batch records it
// cannot read (Batches.Bad, by key) and went on without them: it matches
// ErrCorruptBatch (so errkind.ErrCorrupt), counts them and names the
// first ten by URI, each with what is wrong. It is nil when bad is empty.
func BadBatchesError(st store.Store, bad map[string]string) error {
	if len(bad) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(bad))
	lines := make([]string, 0, min(len(keys), maxBadNamed+1))
	for i, k := range keys {
		if i == maxBadNamed {
			lines = append(lines, fmt.Sprintf("  and %d more", len(keys)-i))
			break
		}
		lines = append(lines, "  "+st.URI(k)+": "+bad[k])
	}
	return &badBatches{n: len(keys), msg: fmt.Sprintf("corrupt audit records: %d batch attempt record(s) that cannot be read "+
		"(every partition was audited without them: their partitions' rows lack the identity, start and end they recorded):\n%s",
		len(keys), strings.Join(lines, "\n"))}
}

// badBatches is BadBatchesError's error.
type badBatches struct {
	n   int
	msg string
}

func (e *badBatches) Error() string { return e.msg }
func (e *badBatches) Unwrap() error { return ErrCorruptBatch }

// BadBatchesIn returns how many unreadable batch records err (from Table)
// counts: 0 when it is not, and wraps no, BadBatchesError's.
func BadBatchesIn(err error) int {
	var b *badBatches
	if errors.As(err, &b) {
		return b.n
	}
	return 0
}

// Batches are the entries of the table's batch records, as attempt
// records by partition and generation; Bad says why each record that
// cannot be read cannot (by key).
type Batches struct {
	Attempts map[string]map[string]*Attempt
	Bad      map[string]string
}

// ReadBatches reads every batch record of the table: one listing of
// layout.BatchesPrefix (a page per 1,000 records) and one GET per record,
// opts.Concurrency at a time. A record that cannot be decoded is in Bad,
// not an error: the audit goes on without it.
func ReadBatches(ctx context.Context, st store.Store, opts CollectOptions) (Batches, error) {
	out := Batches{Attempts: map[string]map[string]*Attempt{}, Bad: map[string]string{}}
	var keys []string
	err := opts.policy().Do(ctx, store.IsRetryable, func(int) error {
		keys = keys[:0]
		for a, err := range st.List(ctx, layout.BatchesPrefix) {
			if err != nil {
				return fmt.Errorf("list %s: %w", st.URI(layout.BatchesPrefix), err)
			}
			if _, ok := layout.ParseBatchKey(a.Key); ok {
				keys = append(keys, a.Key)
			}
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, opts.conc())
	)
	for _, key := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var data []byte
			err := opts.policy().Do(ctx, store.IsRetryable, func(int) (err error) {
				data, _, err = store.ReadAll(ctx, st, key)
				return err
			})
			if errors.Is(err, store.ErrNotFound) {
				return // removed since the listing
			}
			var b *Batch
			if err == nil {
				b, err = ParseBatch(data)
				if err == nil && layout.BatchKey(b.ID) != key {
					err = fmt.Errorf("batch record: it records the id %s", b.ID)
				}
				if err != nil {
					mu.Lock()
					out.Bad[key] = err.Error()
					mu.Unlock()
					return
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("read %s: %w", st.URI(key), err))
				return
			}
			for _, a := range b.Attempts() {
				if out.Attempts[a.Partition] == nil {
					out.Attempts[a.Partition] = map[string]*Attempt{}
				}
				out.Attempts[a.Partition][a.Generation] = &a
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
