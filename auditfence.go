package pswap

import (
	"context"
	"errors"
	"fmt"

	"github.com/pswap/pswap/internal/audit"
	"github.com/pswap/pswap/swap"
)

// The audit table's fence: an older audit never replaces a newer one.
//
// Two PublishAudit runs may overlap (the README runs one after each
// commit). Without a fence, the run that read the data table first could
// commit its day last and put back rows in which a superseded generation
// is current. The fence is a read-validate protocol on each audit day's
// own pointer, with nothing recorded besides the pointers pswap keeps:
//
//  1. Before it reads anything of the data table, a run reads the audit
//     table's pointers (auditFence): for each day, the generation current
//     then, "" for a day that has none.
//  2. It then reads the data table (the partition walk, each partition's
//     listing and pointer), so everything it read was read after the audit
//     generation it fenced on was committed, and after that generation's
//     own reads: its rows are at least as new.
//  3. It commits each day conditionally on the generation it fenced on
//     (commitAuditDay: Begin's base must be it, and the swap fails on any
//     other: OnConflict Fail). A day another run committed after step 1 is
//     fenced (errAuditFenced): the run reads that day's pointer again,
//     re-reads the day's data partitions and re-derives its rows (step 1
//     to 3 for that day), as a merge re-derives after a conflict.
//
// Each generation of an audit day therefore reflects reads made after the
// previous generation was committed: the audit table only moves forward. A
// run that keeps losing its day to other runs stops after
// AuditPublishOptions.MaxAttempts rounds and reports the day as Superseded
// (not Changed): the day holds another run's audit, never an older one than
// before, and the next run converges.

// errAuditFenced: another run committed the audit day after this run read
// its fence; this run's rows for it may be older than the day's.
var errAuditFenced = errors.New("the audit day was published by another run since this run began reading")

// auditFence returns the current generation of each day of the audit table
// ("" for none), read before any read of the data table.
func auditFence(ctx context.Context, dst *Table) (map[string]string, error) {
	listed, err := swap.ListPointers(ctx, dst.st, "")
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("audit table %s: %w", dst.URL(), err)
	}
	fence := make(map[string]string, len(listed))
	for _, l := range listed {
		if l.Err != nil {
			return nil, fmt.Errorf("audit table %s %s: %w", dst.URL(), l.Partition, l.Err)
		}
		if l.Pointer != nil {
			fence[l.Partition] = l.Pointer.Generation
		}
	}
	return fence, nil
}

// auditDayResult is what commitAuditDay did to one day.
type auditDayResult struct {
	rows    int
	changed bool
}

// commitAuditDay replaces one audit partition with rows, if its current
// generation is still fence (the generation the run read before it read
// the data table, "" for none): errAuditFenced otherwise.
func commitAuditDay(ctx context.Context, dst *Table, key string, rows []AuditRow, fence string) (auditDayResult, error) {
	var res auditDayResult
	p, err := dst.Partition(key)
	if err != nil {
		return res, err
	}
	// The audit table's own commits are no attempts of the data table's:
	// no attempt record. EvolveSchema: an audit table of an older pswap
	// gains the columns it lacks.
	w, err := p.Begin(ctx, WriteOptions{Commit: CommitOptions{AllowEmpty: len(rows) == 0, OnConflict: swap.Fail},
		Table: TableOptions{EvolveSchema: true}, noAttempt: true})
	if err != nil {
		return res, fmt.Errorf("audit table %s: %w", dst.URL(), err)
	}
	if base := w.txn.Base().Pointer; (base == nil && fence != "") || (base != nil && base.Generation != fence) {
		w.Abort(context.WithoutCancel(ctx))
		return res, errAuditFenced
	}
	rec := audit.Record(audit.Rows(rows))
	defer rec.Release()
	if err := w.WriteRecord(rec); err != nil {
		w.Abort(context.WithoutCancel(ctx))
		return res, fmt.Errorf("audit table %s %s: %w", dst.URL(), key, err)
	}
	cr, err := w.Commit(ctx)
	if errors.Is(err, ErrConflict) {
		return res, errAuditFenced
	}
	if err != nil {
		return res, fmt.Errorf("audit table %s %s: %w", dst.URL(), key, err)
	}
	return auditDayResult{rows: len(rows), changed: cr.Changed}, nil
}
