package gc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
)

// CollectOptions are Collect's: the collector's own options, which
// partitions to collect, and how long the Iceberg snapshots keep their
// files.
type CollectOptions struct {
	Options
	// Prefix collects the partitions whose key starts with it (Table).
	Prefix string
	// Partitions, when not empty, collects exactly these partitions
	// (Partition each, Options.Concurrency at a time); Prefix must be "".
	Partitions []string
	// SnapshotRetention: the data files of the current Iceberg snapshot and
	// of every snapshot younger than this are never deleted, and a run over
	// the whole table (no Prefix, no Partitions, not DryRun) then expires
	// the older snapshots with the metadata only they use. 0: MinAge (only
	// the current snapshot when MinAge is None).
	SnapshotRetention time.Duration
	// Iceberg tunes the reads of the Iceberg metadata and the expiry; its
	// Retention is SnapshotRetention, and its clock (Now) is the store's
	// unless set.
	Iceberg lakehouse.ExpireOptions
}

// CollectReport is what Collect did.
type CollectReport struct {
	Partitions []Report
	Totals     Totals
	// BatchKeys are the backfills' batch attempt records deleted (in a dry
	// run: that would be): TableReport.BatchKeys.
	BatchKeys []string
	// Expired is what the snapshot expiry did (zero when it did not run).
	Expired lakehouse.ExpireResult
	// ExpireErr is why the expiry failed: a warning, not a failure of the
	// collection (the files the snapshots name stay protected either way).
	ExpireErr error
}

// Collect collects garbage the way `pswap gc` and the facade's Table.GC
// do: Table (or Partition for each of Partitions), keeping whatever the table's Iceberg snapshots
// still name (Options.Protect fed by lakehouse.Referenced, on the
// store's clock), then, for a whole-table run that succeeded, expiring the
// snapshots older than the retention (lakehouse.Expire). Options.Protect,
// when set, is asked as well. OnPartition is called as each partition ends.
func Collect(ctx context.Context, st store.Store, opts CollectOptions) (CollectReport, error) {
	var rep CollectReport
	if opts.Prefix != "" && len(opts.Partitions) > 0 {
		return rep, fmt.Errorf("%w: a prefix and a list of partitions are mutually exclusive", ErrInvalidOptions)
	}
	retention := opts.SnapshotRetention
	if retention <= 0 {
		switch m := opts.MinAge; {
		case m == 0:
			retention = DefaultMinAge
		case m < 0:
			retention = time.Nanosecond // the current snapshot only
		default:
			retention = m
		}
	}
	ice := opts.Iceberg
	ice.Retention = retention
	o := opts.Options
	own := o.Protect
	o.Protect = func(ctx context.Context) ([]string, error) {
		io, err := icebergClock(ctx, st, ice)
		if err != nil {
			return nil, err
		}
		keys, err := lakehouse.Referenced(ctx, st, io)
		if err != nil {
			return nil, err
		}
		// And what a Delta reader may still open: the current files and
		// those removed within delta.deletedFileRetentionDuration (none
		// without a _delta_log).
		dkeys, err := deltalog.Referenced(ctx, st, io.Now())
		if err != nil {
			return nil, fmt.Errorf("the Delta log's files: %w", err)
		}
		keys = append(keys, dkeys...)
		if own == nil {
			return keys, nil
		}
		more, err := own(ctx)
		return append(keys, more...), err
	}
	var (
		err error
		tr  TableReport
	)
	if len(opts.Partitions) > 0 {
		rep.Partitions, err = partitions(ctx, st, opts.Partitions, o)
	} else {
		tr, err = Table(ctx, st, opts.Prefix, o)
		rep.Partitions = tr.Partitions
	}
	for i := range rep.Partitions {
		rep.Totals.Add(&rep.Partitions[i])
	}
	rep.BatchKeys = tr.BatchKeys
	rep.Totals.AddBatches(&tr)
	if err != nil && rep.Totals.Errors == 0 {
		// The run failed outside any partition (the listing itself: access
		// denied, store down): the totals must not read as clean.
		rep.Totals.Errors = 1
	}
	if err != nil || o.DryRun || len(opts.Partitions) > 0 || opts.Prefix != "" {
		return rep, err
	}
	io, cerr := icebergClock(ctx, st, ice)
	if cerr == nil {
		rep.Expired, cerr = lakehouse.Expire(ctx, st, io)
	}
	// The Delta log's entries and checkpoints past delta.logRetentionDuration.
	if cerr == nil {
		_, cerr = deltalog.Expire(ctx, st, io.Now())
	}
	rep.ExpireErr = cerr
	return rep, nil
}

// icebergClock sets the options' clock to the store's, read now, unless
// the caller set one: snapshot retention and metadata ages are judged by
// the store's time, as every age GC judges.
func icebergClock(ctx context.Context, st store.Store, o lakehouse.ExpireOptions) (lakehouse.ExpireOptions, error) {
	if o.Now != nil {
		return o, nil
	}
	now, err := store.Now(ctx, st)
	if err != nil {
		return o, err
	}
	o.Now = func() time.Time { return now }
	return o, nil
}

// partitions collects the named partitions, Concurrency at a time.
func partitions(ctx context.Context, st store.Store, keys []string, o Options) ([]Report, error) {
	n := o.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	reports := make([]Report, len(keys))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, k := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			reports[i], errs[i] = Partition(ctx, st, k, o)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("gc %s: %w", k, errs[i])
			}
		})
	}
	wg.Wait()
	return reports, errors.Join(errs...)
}
