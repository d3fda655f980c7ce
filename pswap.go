package pswap

import (
	"context"
	"errors"
	"fmt"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/gcsstore"
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/swap"
)

// Re-exported so that embedding code needs one import for the common cases.
type (
	// Result is what a commit reports; see swap.Result.
	Result = swap.Result
	// Outcome says how a commit ended (Committed, Superseded, SameRun,
	// Identical, AlreadyCommitted).
	Outcome = swap.Outcome
	// Snapshot is a partition's current generation; see swap.Snapshot.
	Snapshot = swap.Snapshot
	// Entry is one generation in a partition's history.
	Entry = swap.Entry
	// Policy is the conflict policy (Fail or Overwrite).
	Policy = swap.Policy
)

// Conflict policies.
const (
	Fail      = swap.Fail
	Overwrite = swap.Overwrite
)

// Commit outcomes.
const (
	Committed        = swap.Committed
	Superseded       = swap.Superseded
	SameRun          = swap.SameRun
	Identical        = swap.Identical
	AlreadyCommitted = swap.AlreadyCommitted
)

// ParsePolicy parses a conflict policy: "fail" (or "") or "overwrite".
func ParsePolicy(s string) (Policy, error) { return swap.ParsePolicy(s) }

// The errors callers branch on, with errors.Is. The first five are kinds:
// every layer's own sentinels match one of them (a malformed CSV row from
// staging, an invalid key from the store or the partition parser and an
// empty commit are all ErrBadInput; a missing object, bucket, partition or
// generation are all ErrNotFound), so one import of this package is enough.
var (
	// ErrBadInput: the caller's input is wrong; retrying it fails again.
	ErrBadInput = errkind.ErrBadInput
	// ErrCorrupt: metadata on the store (a pointer, a manifest) is malformed
	// or does not match what refers to it. A corrupt input file is
	// ErrBadInput instead.
	ErrCorrupt = errkind.ErrCorrupt
	// ErrNotFound: what was asked for does not exist: an object, the bucket,
	// a partition never committed (also ErrNoData), a generation
	// (also ErrGenerationNotFound).
	ErrNotFound = errkind.ErrNotFound
	// ErrConflict: another run committed since this attempt began; nothing
	// was changed.
	ErrConflict = errkind.ErrConflict
	// ErrOutcomeUnknown: the commit may or may not have landed; re-run it
	// with the same run id.
	ErrOutcomeUnknown = errkind.ErrOutcomeUnknown

	// ErrInvalidKey: an invalid partition key or store key (also ErrBadInput).
	ErrInvalidKey = errkind.ErrInvalidKey
	// ErrAccessDenied: the credentials are wrong or lack permission.
	ErrAccessDenied = errkind.ErrAccessDenied

	ErrStaleGeneration    = swap.ErrStaleGeneration
	ErrNoData             = swap.ErrNoData
	ErrEmptyCommit        = swap.ErrEmptyCommit
	ErrGenerationNotFound = swap.ErrGenerationNotFound
	ErrBucketNotFound     = store.ErrBucketNotFound
	// ErrCorruptPointer: a partition's pointer cannot be read (also
	// ErrCorrupt); Audit, and the CLI's ls and status, carry on past it and
	// end with one error of it that names each such partition.
	ErrCorruptPointer = swap.ErrCorruptPointer
	// ErrNewerFormat: a document on the store (a pointer, a manifest,
	// table.json, the Iceberg metadata) was written by a newer pswap, of a
	// format this one does not know: upgrade pswap to read it.
	ErrNewerFormat = strictjson.ErrNewerFormat
)

// IsRetryable reports whether err is worth retrying after a backoff (a
// transient store failure, an unclassified I/O error, an unknown outcome),
// as opposed to bad input, corrupt metadata, a missing object, a conflict
// or denied access: the one meaning every retry loop of pswap uses.
func IsRetryable(err error) bool { return errkind.Retryable(err) }

// Options configure how a table is opened. The zero value works: S3 settings
// come from the standard AWS environment (AWS_ENDPOINT_URL, AWS_REGION,
// credentials chain, profiles).
type Options struct {
	S3 s3store.Options
	// Azure configures az://, abfss:// and wasbs:// tables; the zero value
	// reads AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with
	// AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN.
	Azure azstore.Options
	// GCS configures gs:// tables: STORAGE_EMULATOR_HOST or Application
	// Default Credentials when zero.
	GCS gcsstore.Options
}

// Table is a table root on a store: partitions live below it.
type Table struct {
	url string
	st  store.Store
}

// Open opens a table by URL (s3://bucket/prefix, file:///path, or a path).
// The zero Options work (S3 settings from the standard AWS environment).
func Open(ctx context.Context, url string, opts Options) (*Table, error) {
	st, err := OpenStore(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	return &Table{url: url, st: st}, nil
}

// NewTable wraps an already opened store (tests, custom backends).
func NewTable(st store.Store) *Table { return &Table{url: st.URI(""), st: st} }

// URL returns the table's URL as given to Open.
func (t *Table) URL() string { return t.url }

// Store returns the table's store.
func (t *Table) Store() store.Store { return t.st }

// Close releases the store.
func (t *Table) Close() error { return t.st.Close() }

// Partition returns a handle on one partition. key must be a canonical
// Hive-style key such as "dt=2026-11-29" or "dt=2026-11-29/hr=13".
func (t *Table) Partition(key string) (*Partition, error) {
	if err := partition.Validate(key); err != nil {
		return nil, err
	}
	return &Partition{t: t, key: key}, nil
}

// Partitions lists the committed partitions of the table (or of the part of
// it under prefix, e.g. "dt=2026-11-"). It follows the table's layout from
// its table.json (one GET, swap.TableListOptions): pointers are read only
// at the layout's depth (not in the day folders above an hourly table's
// partitions), a folder of another layout is not listed, and a table
// created in the table-level layout is not walked for legacy partitions.
func (t *Table) Partitions(ctx context.Context, prefix string) ([]string, error) {
	opts, err := swap.TableListOptions(ctx, t.st)
	if err != nil {
		return nil, err
	}
	return t.partitions(ctx, prefix, opts)
}

// partitionsNoTableJSON is Partitions for a caller that has read
// table.json already and found none: the listing's options are a table's
// without one, and table.json is not read again.
func (t *Table) partitionsNoTableJSON(ctx context.Context, prefix string) ([]string, error) {
	return t.partitions(ctx, prefix, swap.ListOptions{})
}

// partitions is Partitions with the listing's options given.
func (t *Table) partitions(ctx context.Context, prefix string, opts swap.ListOptions) ([]string, error) {
	listed, err := swap.ListPointersWith(ctx, t.st, prefix, opts)
	out := make([]string, 0, len(listed))
	for _, l := range listed {
		out = append(out, l.Partition)
	}
	return out, err
}

// Partition is one partition of a table.
type Partition struct {
	t   *Table
	key string
}

// Key returns the partition key.
func (p *Partition) Key() string { return p.key }

// Table returns the partition's table.
func (p *Partition) Table() *Table { return p.t }

// Current resolves the current generation: two GETs, no listing.
func (p *Partition) Current(ctx context.Context) (*Snapshot, error) {
	return swap.Resolve(ctx, p.t.st, p.key)
}

// History returns the generation chain, newest first (limit 0: all).
func (p *Partition) History(ctx context.Context, limit int) ([]Entry, error) {
	return swap.History(ctx, p.t.st, p.key, limit)
}

// Rollback makes an earlier generation current again, as a new fenced swap.
func (p *Partition) Rollback(ctx context.Context, generation string, opts CommitOptions) (Result, error) {
	if err := partition.Validate(p.key); err != nil {
		return Result{}, err
	}
	// The rollback's attempt record (run id, identity, start), sent beside
	// its first read, names the generation the rollback will write.
	so := opts.swap()
	so.Generation = env.From(ctx).NewGenerationID()
	att := newAttemptRecord(p, so.Generation, WriteOptions{Commit: opts})
	att.start(ctx)
	res, err := swap.Rollback(ctx, p.t.st, p.key, generation, so)
	if err != nil && !partitionCommitted(ctx, p) {
		// A partition (or a table: a wrong URL) without commits has
		// nothing to roll back: the attempt leaves nothing.
		att.remove(ctx)
		return res, err
	}
	att.ended(ctx, res, err, false)
	return res, err
}

// partitionCommitted reports that p has a pointer (a failed rollback's
// question, one GET; a read that fails is taken as yes).
func partitionCommitted(ctx context.Context, p *Partition) bool {
	_, err := swap.ReadPointer(context.WithoutCancel(ctx), p.t.st, p.key)
	return !errors.Is(err, swap.ErrNoData)
}

// String returns the partition's location.
func (p *Partition) String() string { return fmt.Sprintf("%s/%s", p.t.url, p.key) }
