package pswap

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/internal/inputfiles"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
)

// AuditRow is one attempt of the audit: a committed generation (kind
// commit, rollback or merge; state current, superseded or rolled-back), a
// manifest that never became current (state failed), or an attempt that
// staged and never committed (kind staged; state staged, uncommitted or
// abandoned). See Table.Audit. Unknown numbers and times are nil (null in
// JSON), unknown strings empty.
type AuditRow struct {
	Partition  string `json:"partition"`
	Generation string `json:"generation"`
	RunID      string `json:"run_id"`
	// Kind is commit, rollback, merge or staged.
	Kind string `json:"kind"`
	// State is current, superseded, rolled-back, failed, staged,
	// uncommitted, abandoned or unknown (a manifest behind a
	// garbage-collected generation).
	State       string     `json:"state"`
	Rows        *int64     `json:"rows"`
	Bytes       *int64     `json:"bytes"`
	Files       *int64     `json:"files"`
	CreatedAt   *time.Time `json:"created_at"`
	CommittedAt *time.Time `json:"committed_at"`
	// SupersededBy is the generation that replaced this one, at
	// SupersededAt.
	SupersededBy string     `json:"superseded_by"`
	SupersededAt *time.Time `json:"superseded_at"`
	Parent       string     `json:"parent"`
	// DataGeneration is the generation whose files this one's are (a
	// rollback's is the one it rolled back to).
	DataGeneration string `json:"data_generation"`
	RollbackOf     string `json:"rollback_of"`
	// Why explains a state other than a commit's (failed, staged,
	// uncommitted, abandoned, unknown).
	Why string `json:"why"`
}

// AuditColumns are the audit's columns in order (the JSON fields of
// AuditRow, the columns of the audit table).
var AuditColumns = audit.Columns

// AuditOptions tune Table.Audit. The zero value works.
type AuditOptions struct {
	// Partitions to audit (nil: every partition with a _pswap folder,
	// found by walking the table's key=value folders).
	Partitions []string
	// GracePeriod is the writers' grace period (default swap's, 24 h): an
	// attempt older than it that never committed is abandoned.
	GracePeriod time.Duration
	// Concurrency bounds the partitions read at once (default 8).
	Concurrency int
}

// Audit returns every attempt the store tells of, one row each, derived
// from the store alone: per partition one listing of its _pswap folder,
// the pointer, and one GET per manifest and staged record. Rows are by
// partition; within one, the committed generations newest first, then
// the attempts that never committed, oldest first.
func (t *Table) Audit(ctx context.Context, opts AuditOptions) ([]AuditRow, error) {
	for _, p := range opts.Partitions {
		if err := partition.Validate(p); err != nil {
			return nil, err
		}
	}
	rows, err := audit.Table(ctx, t.st, opts.Partitions, audit.CollectOptions{Concurrency: opts.Concurrency},
		audit.Options{GracePeriod: opts.GracePeriod})
	return audit.RowsAs[AuditRow](rows), err
}

// AuditSuffix names the audit table beside a table: <table>__audit.
const AuditSuffix = "__audit"

// AuditTableURL returns the URL of the audit table beside the table at
// tableURL: the same URL with AuditSuffix appended to its last segment
// (s3://lake/sales -> s3://lake/sales__audit, ./lake/sales ->
// ./lake/sales__audit). A bucket root has no sibling: ErrBadInput.
func AuditTableURL(tableURL string) (string, error) {
	u := strings.TrimRight(tableURL, "/")
	rest := u
	if i := strings.Index(u, "://"); i >= 0 && (inputfiles.IsStoreURI(u) || strings.HasPrefix(u, "file://")) {
		rest = u[i+3:]
		if !strings.HasPrefix(u, "file://") {
			// s3://bucket/prefix: the bucket alone is no place beside.
			_, rest, _ = strings.Cut(rest, "/")
		}
	}
	if base := path.Base(strings.TrimRight(rest, "/")); rest == "" || base == "." || base == ".." || base == "/" {
		return "", fmt.Errorf("%w: %q has no name to put the audit table beside (a bucket or the root): name it (--audit-table)", ErrBadInput, tableURL)
	}
	return u + AuditSuffix, nil
}

// AuditPublishOptions tune Table.PublishAudit. The zero value works.
type AuditPublishOptions struct {
	Audit AuditOptions
	// Publish are the options of the audit table's Iceberg publish.
	Publish PublishOptions
	// Parallel bounds the audit partitions committed at once (default 4).
	Parallel int
}

// AuditPublication is what PublishAudit did.
type AuditPublication struct {
	Rows       int // audit rows published
	Partitions int // audit partitions (days) holding them
	Changed    int // audit partitions that got a new generation
	Emptied    int // audit partitions whose rows all went (gc removed their attempts)
	// Publish is the audit table's Iceberg publish.
	Publish PublishResult
}

// AuditPartitionColumn is the partition column of the audit table: the
// day (UTC) on which the data partition of a row starts.
const AuditPartitionColumn = "day"

// PublishAudit writes the audit of t (every partition) into dst, a pswap
// table of its own (AuditTableURL names the usual place), and publishes
// dst's Iceberg metadata, so that engines read the audit as a table.
//
// dst is partitioned by the day each data partition starts on (hourly
// partitions of one day share one audit partition; a monthly partition's
// rows go to its first day), and each day is replaced by pswap's own
// commit: atomic, and a no-op (identical content) when its rows did not
// change. A day whose rows are all gone becomes empty. Its cost is
// Audit's, plus one small commit per day, plus one publish.
func (t *Table) PublishAudit(ctx context.Context, dst *Table, opts AuditPublishOptions) (AuditPublication, error) {
	var pub AuditPublication
	rows, err := t.Audit(ctx, opts.Audit)
	if err != nil {
		return pub, err
	}
	dayOf, err := t.auditDays(ctx, rows)
	if err != nil {
		return pub, err
	}
	byDay := map[string][]AuditRow{}
	for _, r := range rows {
		k := AuditPartitionColumn + "=" + dayOf[r.Partition]
		byDay[k] = append(byDay[k], r)
	}
	existing, err := dst.Partitions(ctx, "")
	if err != nil && !errors.Is(err, ErrNotFound) {
		return pub, fmt.Errorf("audit table %s: %w", dst.URL(), err)
	}
	for _, k := range existing {
		if _, ok := byDay[k]; !ok {
			byDay[k] = nil
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range byDay {
			if !yield(k) {
				return
			}
		}
	})
	if len(keys) == 0 {
		return pub, fmt.Errorf("audit of %s: %w: no partition has any attempt to audit", t.url, ErrNoData)
	}
	if len(existing) == 0 && len(keys) > 1 {
		// The first commit creates the audit table's table.json: let one
		// commit do it, then the others in parallel.
		if err := commitAuditDay(ctx, dst, keys[0], byDay[keys[0]], &pub); err != nil {
			return pub, err
		}
		keys = keys[1:]
	}
	par := opts.Parallel
	if par <= 0 {
		par = 4
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, par)
	)
	for _, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var p AuditPublication
			err := commitAuditDay(ctx, dst, k, byDay[k], &p)
			mu.Lock()
			defer mu.Unlock()
			pub.Rows, pub.Partitions, pub.Changed, pub.Emptied = pub.Rows+p.Rows, pub.Partitions+p.Partitions, pub.Changed+p.Changed, pub.Emptied+p.Emptied
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return pub, err
	}
	pub.Publish, err = dst.Publish(ctx, opts.Publish)
	if err != nil {
		return pub, fmt.Errorf("publish the audit table %s: %w", dst.URL(), err)
	}
	return pub, nil
}

// commitAuditDay replaces one audit partition with rows.
func commitAuditDay(ctx context.Context, dst *Table, key string, rows []AuditRow, pub *AuditPublication) error {
	p, err := dst.Partition(key)
	if err != nil {
		return err
	}
	w, err := p.Begin(ctx, WriteOptions{Commit: CommitOptions{AllowEmpty: len(rows) == 0}})
	if err != nil {
		return fmt.Errorf("audit table %s: %w", dst.URL(), err)
	}
	rec := audit.Record(audit.Rows(rows))
	defer rec.Release()
	if err := w.WriteRecord(rec); err != nil {
		w.Abort(context.WithoutCancel(ctx))
		return fmt.Errorf("audit table %s %s: %w", dst.URL(), key, err)
	}
	res, err := w.Commit(ctx)
	if err != nil {
		return fmt.Errorf("audit table %s %s: %w", dst.URL(), key, err)
	}
	if len(rows) > 0 {
		pub.Partitions++
	} else if res.Changed {
		pub.Emptied++
	}
	pub.Rows += len(rows)
	if res.Changed {
		pub.Changed++
	}
	return nil
}

// auditDays maps each data partition of rows to the day (2006-01-02, UTC)
// it starts on, by the table's layout (table.json), else by the layout
// its keys imply (a table written before pswap kept table.json).
func (t *Table) auditDays(ctx context.Context, rows []AuditRow) (map[string]string, error) {
	var layout *partition.Layout
	meta, err := tablemeta.Load(ctx, t.st)
	switch {
	case err == nil:
		layout = meta.TimeLayout()
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	out := map[string]string{}
	for _, r := range rows {
		if _, ok := out[r.Partition]; ok {
			continue
		}
		l := layout
		if l == nil {
			cols, err := tablemeta.InferPartitionColumns(r.Partition, nil)
			if err == nil {
				l = (&tablemeta.Table{PartitionColumns: cols}).TimeLayout()
			}
		}
		if l == nil {
			return nil, fmt.Errorf("%w: partition %s has no time layout: the audit table is partitioned by the day each partition starts on", ErrBadInput, r.Partition)
		}
		k, err := partition.Parse(r.Partition)
		if err != nil {
			return nil, err
		}
		iv, err := l.Interval(k)
		if err != nil {
			return nil, fmt.Errorf("%w: partition %s: %w", ErrBadInput, r.Partition, err)
		}
		out[r.Partition] = iv.Start.UTC().Format("2006-01-02")
	}
	return out, nil
}
