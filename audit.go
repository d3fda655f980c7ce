package pswap

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
)

// AuditRow is one attempt of the audit: a committed generation (kind
// commit, rollback or merge; state current, superseded or rolled-back), a
// manifest that never became current (state failed), an attempt that
// ended without a commit (kind commit; state no-op or failed, from its
// attempt record), or an attempt that staged and never committed (kind
// staged; state staged, uncommitted or abandoned). See Table.Audit. Unknown numbers and times are nil (null in
// JSON), unknown strings empty.
type AuditRow struct {
	Partition  string `json:"partition"`
	Generation string `json:"generation"`
	RunID      string `json:"run_id"`
	// Kind is commit, rollback, merge or staged.
	Kind string `json:"kind"`
	// State is current, superseded, rolled-back, failed, no-op, staged,
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
	// uncommitted, abandoned, unknown, no-op).
	Why string `json:"why"`
	// Status is where the attempt ended, in the orchestrator's words:
	// started (running, or died without a trace of its end yet),
	// succeeded, failed, abandoned (never ended, past the grace period) or
	// no-op (its run had committed, or its content was current).
	Status string `json:"status"`
	// Job, Task, LogicalDate and JobRunID are the orchestrator's identity
	// of the attempt (Identity), from its attempt record.
	Job         string `json:"job"`
	Task        string `json:"task"`
	LogicalDate string `json:"logical_date"`
	JobRunID    string `json:"job_run_id"`
	// StartedAt is when the attempt began (its record's; else its
	// created_at). A backfill's partition (commit --partitioned) has its
	// own attempt's: a commit's is its manifest's created_at, a no-op's
	// or failure's its record's; one that died before its manifest has the
	// time of its first upload (an upper bound: it began at most its
	// Begin's reads and its first file's staging earlier; the run's start,
	// the lower bound, can be hours earlier). FinishedAt is when it ended
	// (a commit's committed_at, a no-op's or failure's end; nil while
	// started).
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// NoOpOf is the generation a no-op found: its run's commit, or the
	// current generation with the same content.
	NoOpOf string `json:"noop_of"`
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
// the pointer, and one GET per manifest, staged record and attempt record
// (the record each Writer writes beside its first upload: run id,
// CommitOptions.Identity, start; and its end when it ends without a
// commit), plus one listing of the backfills' batch records and a GET of
// each (Table.CommitPartitioned writes one for all its partitions). Rows are by
// partition; within one, the committed generations newest first, then
// the attempts that never committed, oldest first. A partition whose
// pointer cannot be read does not stop it: that partition gets one row of
// kind pointer and state corrupt, and Audit returns every partition's
// rows with an error matching ErrCorrupt that names those partitions. A
// batch record that cannot be read does not stop it either: Audit returns
// every row without what that record told, and an error matching
// ErrCorruptBatchRecord (so ErrCorrupt) that names the record (joined with
// the corrupt pointers' error when there are both).
func (t *Table) Audit(ctx context.Context, opts AuditOptions) (AuditRows, error) {
	for _, p := range opts.Partitions {
		if err := partition.Validate(p); err != nil {
			return nil, err
		}
	}
	rows, err := audit.Table(ctx, t.st, opts.Partitions, audit.CollectOptions{Concurrency: opts.Concurrency},
		audit.Options{GracePeriod: opts.GracePeriod})
	return audit.RowsAs[AuditRow](rows), err
}

// ErrCorruptBatchRecord: a backfill's batch attempt record
// (_pswap/batches/ID.json) cannot be read. Table.Audit and
// Table.PublishAudit go on without it and return this error, naming the
// record, with every row: the commits of its partitions keep their rows
// and run ids (their manifests'), and lose the identity and start it
// recorded, its no-ops and the started rows of its partitions' dead
// attempts. The record holds no data: restore it from the store's
// versioning, or delete it. It matches ErrCorrupt.
var ErrCorruptBatchRecord = audit.ErrCorruptBatch

// AuditRows are the rows of an audit (Table.Audit), with the file formats
// `pswap audit --format` writes them in.
type AuditRows []AuditRow

// WriteCSV writes the rows as CSV, a header of AuditColumns first: strings
// as they are, unknown numbers and times empty, times in RFC 3339 (UTC,
// with microseconds when not whole seconds).
func (r AuditRows) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(audit.CSVRecords(audit.Rows(r))); err != nil {
		return err
	}
	return cw.Error()
}

// WriteParquet writes the rows as one Parquet file (zstd), in the audit
// table's schema (AuditColumns; unknown values null).
func (r AuditRows) WriteParquet(w io.Writer) error {
	return audit.WriteParquet(w, audit.Rows(r))
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
	if i := strings.Index(u, "://"); i >= 0 && (IsStoreURI(u) || strings.HasPrefix(u, "file://")) {
		rest = u[i+3:]
		if !strings.HasPrefix(u, "file://") {
			// s3://bucket/prefix, gs://, az://container/prefix: the bucket
			// or container alone is no place beside.
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
	// MaxAttempts bounds the rounds of a day that other runs of
	// PublishAudit keep publishing while this one reads (default 5): each
	// round reads the day's data partitions again and re-derives its rows.
	// A day still lost after them is Superseded.
	MaxAttempts int
}

// AuditPublication is what PublishAudit did.
type AuditPublication struct {
	Rows       int // audit rows published
	Partitions int // audit partitions (days) holding them
	Changed    int // audit partitions that got a new generation
	Emptied    int // audit partitions whose rows all went (gc removed their attempts)
	// Rederived counts the days another run of PublishAudit published
	// after this one began reading (an overlapping audit --publish), which
	// this one therefore read again and re-derived before committing them.
	Rederived int
	// Superseded counts the days other runs kept publishing through
	// MaxAttempts rounds: this run wrote nothing to them (they are not
	// Changed, and not counted in Rows or Partitions). Each holds another
	// run's audit, never an older one than before; a later run brings it
	// up to date.
	Superseded int
	// Corrupt counts the partitions of t whose pointer cannot be read: each
	// is in the audit table as one row of state corrupt, and PublishAudit
	// returns an error matching ErrCorrupt after publishing every other
	// row.
	Corrupt int
	// UnreadableRecords counts the batch attempt records that cannot be
	// read: the audit table holds every row without what they told, and
	// PublishAudit returns an error matching ErrCorruptBatchRecord after
	// publishing them.
	UnreadableRecords int
	// Publish is the audit table's Iceberg publish.
	Publish PublishResult

	corrupt error // the audit's ErrCorrupt, returned once the rest is published
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
//
// Runs may overlap: an older audit never replaces a newer one. Each day's
// commit is conditional on the audit generation the run read before it
// read t; a day another run published meanwhile is read again and
// re-derived (Rederived), up to MaxAttempts rounds, then left to the other
// run (Superseded). See auditfence.go.
func (t *Table) PublishAudit(ctx context.Context, dst *Table, opts AuditPublishOptions) (AuditPublication, error) {
	var pub AuditPublication
	rounds := opts.MaxAttempts
	if rounds <= 0 {
		rounds = 5
	}
	var pending map[string]bool // the days still to commit; nil: every day
	for round := 1; ; round++ {
		fenced, err := t.publishAuditRound(ctx, dst, opts, pending, &pub)
		if err != nil {
			return pub, err
		}
		if len(fenced) == 0 {
			break
		}
		if round >= rounds {
			pub.Superseded = len(fenced)
			break
		}
		pub.Rederived += len(fenced)
		pending = map[string]bool{}
		for _, k := range fenced {
			pending[k] = true
		}
	}
	var err error
	pub.Publish, err = dst.Publish(ctx, opts.Publish)
	if err != nil {
		return pub, fmt.Errorf("publish the audit table %s: %w", dst.URL(), err)
	}
	return pub, pub.corrupt
}

// publishAuditRound reads the audit table's fence, then the audit of t
// (of the partitions of the pending days only, unless pending is nil),
// and commits each day on its fence. It returns the days fenced out by
// another run's commit.
func (t *Table) publishAuditRound(ctx context.Context, dst *Table, opts AuditPublishOptions, pending map[string]bool, pub *AuditPublication) ([]string, error) {
	fence, err := auditFence(ctx, dst)
	if err != nil {
		return nil, err
	}
	aopts := opts.Audit
	if pending != nil {
		// Only the partitions of the pending days, found by a walk made
		// after the fence (a partition created since the last round is in
		// it).
		all := aopts.Partitions
		if all == nil {
			if all, err = audit.Partitions(ctx, t.st, "", audit.CollectOptions{Concurrency: aopts.Concurrency}); err != nil {
				return nil, err
			}
		}
		days, err := t.auditDays(ctx, all)
		if err != nil {
			return nil, err
		}
		aopts.Partitions = []string{}
		for _, p := range all {
			if pending[AuditPartitionColumn+"="+days[p]] {
				aopts.Partitions = append(aopts.Partitions, p)
			}
		}
	}
	rows, err := t.Audit(ctx, aopts)
	switch {
	case errors.Is(err, ErrCorrupt) && rows != nil:
		// Published with the rest, as one row of state corrupt each.
		pub.corrupt = fmt.Errorf("the audit table holds every row the store tells: %w", err)
		if pending == nil { // the first round reads every partition
			pub.Corrupt = 0
			for _, r := range rows {
				if r.State == audit.StateCorrupt {
					pub.Corrupt++
				}
			}
			pub.UnreadableRecords = audit.BadBatchesIn(err)
		}
	case err != nil:
		return nil, err
	}
	parts := make([]string, 0, len(rows))
	for _, r := range rows {
		parts = append(parts, r.Partition)
	}
	dayOf, err := t.auditDays(ctx, parts)
	if err != nil {
		return nil, err
	}
	byDay := map[string][]AuditRow{}
	for _, r := range rows {
		k := AuditPartitionColumn + "=" + dayOf[r.Partition]
		byDay[k] = append(byDay[k], r)
	}
	for k := range fence {
		if _, ok := byDay[k]; !ok {
			byDay[k] = nil
		}
	}
	for k := range pending {
		if _, ok := byDay[k]; !ok {
			byDay[k] = nil // its partitions are gone: emptied, on its fence
		}
	}
	if pending != nil {
		maps.DeleteFunc(byDay, func(k string, _ []AuditRow) bool { return !pending[k] })
	}
	keys := slices.Sorted(maps.Keys(byDay))
	if len(keys) == 0 {
		return nil, fmt.Errorf("audit of %s: %w: no partition has any attempt to audit", t.url, ErrNoData)
	}
	var (
		mu     sync.Mutex
		errs   []error
		fenced []string
	)
	commit := func(k string) {
		rows := byDay[k]
		r, err := commitAuditDay(ctx, dst, k, rows, fence[k])
		mu.Lock()
		defer mu.Unlock()
		switch {
		case errors.Is(err, errAuditFenced):
			fenced = append(fenced, k)
		case err != nil:
			errs = append(errs, err)
		default:
			if len(rows) > 0 {
				pub.Partitions++
			} else if r.changed {
				pub.Emptied++
			}
			pub.Rows += r.rows
			if r.changed {
				pub.Changed++
			}
		}
	}
	if len(fence) == 0 && len(keys) > 1 {
		// The first commit creates the audit table's table.json: let one
		// commit do it, then the others in parallel.
		commit(keys[0])
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		keys = keys[1:]
	}
	par := opts.Parallel
	if par <= 0 {
		par = 4
	}
	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, par)
	)
	for _, k := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			commit(k)
		})
	}
	wg.Wait()
	slices.Sort(fenced)
	return fenced, errors.Join(errs...)
}

// auditDays maps each data partition of parts to the day (2006-01-02,
// UTC, or local in the table's time zone) it starts on, by the table's
// layout (table.json), else by the layout its keys imply (a table written
// before pswap kept table.json).
func (t *Table) auditDays(ctx context.Context, parts []string) (map[string]string, error) {
	var layout *partition.Layout
	meta, err := tablemeta.Load(ctx, t.st)
	switch {
	case err == nil:
		layout = meta.TimeLayout()
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	out := map[string]string{}
	for _, part := range parts {
		if _, ok := out[part]; ok {
			continue
		}
		l := layout
		if l == nil {
			cols, err := tablemeta.InferPartitionColumns(part, nil)
			if err == nil {
				l = (&tablemeta.Table{PartitionColumns: cols}).TimeLayout()
			}
		}
		if l == nil {
			return nil, fmt.Errorf("%w: partition %s has no time layout: the audit table is partitioned by the day each partition starts on", ErrBadInput, part)
		}
		k, err := partition.Parse(part)
		if err != nil {
			return nil, err
		}
		iv, err := l.Interval(k)
		if err != nil {
			return nil, fmt.Errorf("%w: partition %s: %w", ErrBadInput, part, err)
		}
		start := iv.Start.UTC()
		if l.Zone != "" {
			if loc, err := time.LoadLocation(l.Zone); err == nil {
				start = iv.Start.In(loc) // dt=2026-03-29 of Europe/Berlin starts on 2026-03-29 there
			}
		}
		out[part] = start.Format("2006-01-02")
	}
	return out, nil
}
