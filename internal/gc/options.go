package gc

import (
	"context"
	"fmt"
	"time"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/swap"
)

// Defaults of Options.
const (
	// DefaultKeep is the number of retired generations kept for rollback.
	DefaultKeep = 1
	// DefaultMinAge keeps every generation retired less than this long ago,
	// so that readers that resolved it before the swap can finish.
	DefaultMinAge = 6 * time.Hour
	// DefaultOrphanAge equals the writers' default grace period: an
	// uncommitted generation younger than that may still be committed.
	DefaultOrphanAge = swap.DefaultGracePeriod
	// DefaultCommitWindow bounds the time between a writer's grace-period
	// check and its pointer swap landing (swap's retry bound, 2 minutes by
	// default, plus request timeouts), with a wide margin.
	DefaultCommitWindow = 15 * time.Minute
	// DefaultConcurrency is the number of partitions collected at once.
	DefaultConcurrency = 4
	// DefaultMaxAttempts bounds how often a partition's plan is recomputed
	// because its pointer changed while it was being planned.
	DefaultMaxAttempts = 10
)

// None, as Options.Keep or Options.MinAge, turns that rule off (keep no
// retired generation for rollback; no window for readers): 0 means the
// default, so "none" needs a name of its own. Any negative value means the
// same. As Options.OrphanAge or Options.CommitWindow, where a safety
// margin is at stake, only None itself does (other negative values are
// ErrInvalidOptions): no margin at all, for tests and for tables no writer
// or publisher uses while GC runs.
const None = -1

// clockSlack covers the coarse resolution of store timestamps (S3's
// Last-Modified and Date have one second): upper bounds of times are moved
// later by it, lower bounds earlier, so that ages err on the young side.
const clockSlack = 2 * time.Second

// Options tune a collection. The zero value works: keep one retired
// generation, keep everything retired in the last 6 hours, collect orphans
// older than a day, four partitions at once.
type Options struct {
	// Keep is the number of most recently retired generations kept for
	// rollback, besides the current one. 0 means DefaultKeep; None keeps
	// none (MinAge still applies).
	Keep int
	// MinAge keeps every generation retired less than MinAge ago: a reader
	// that resolved it while it was current may still be reading its files.
	// 0 means DefaultMinAge; None disables the window (readers of a
	// just-replaced generation may then fail).
	MinAge time.Duration
	// OrphanAge: objects that belong to no committed generation (staged
	// but never committed, left by a crashed or refused writer) are deleted
	// once all of them are older than OrphanAge plus CommitWindow. It must
	// be at least the writers' grace period (swap.Options.GracePeriod),
	// which is what makes a slow writer's commit fail rather than race GC.
	// 0 means DefaultOrphanAge; None means no age at all; other negative
	// values are rejected.
	OrphanAge time.Duration
	// CommitWindow is the longest time between a writer's grace-period
	// check and its pointer swap landing; it must exceed the writers'
	// swap.Options.MaxElapsed. 0 means DefaultCommitWindow; None means no
	// window; other negative values are rejected.
	CommitWindow time.Duration
	// DryRun computes and reports exactly what would be deleted (Report.Keys)
	// and deletes nothing.
	DryRun bool
	// Concurrency is the number of partitions collected at once by Table
	// (default 4).
	Concurrency int
	// MaxAttempts bounds the recomputations of one partition's plan when its
	// pointer keeps changing (default 10); then the partition fails with
	// ErrBusy and nothing more of it is deleted.
	MaxAttempts int
	// Protect, when not nil, names data files that a reader outside pswap
	// still references although their generation may be retired, such as
	// the files of the published Iceberg snapshots (lakehouse.Referenced).
	// It is called once per run, before any partition is planned; GC keeps
	// the files of every generation that holds one of them, and a manifest
	// that names them (a kept rollback's, else the newest that does), so
	// that they stay a generation, whatever Keep and MinAge say; and it
	// keeps everything retired after the call or less than CommitWindow
	// before it: a publisher that read a pointer naming it may still be
	// writing a snapshot that names it (it must land within CommitWindow of
	// that read: lakehouse.Options.MaxElapsed). An error stops the run
	// before anything is deleted.
	Protect func(ctx context.Context) ([]string, error)
	// OnPartition, when not nil, is called with each partition's report as
	// soon as it is done (from several goroutines at once under Table), for
	// progress output.
	OnPartition func(Report)
}

// ErrBusy: a partition's pointer changed every time its plan was computed,
// up to Options.MaxAttempts. Nothing was deleted after the last change;
// running GC again later collects it.
var ErrBusy = errkind.New("partition kept changing during garbage collection", errkind.ErrTransient)

// ErrInvalidOptions: an option is out of range.
var ErrInvalidOptions = errkind.New("invalid gc options", errkind.ErrPermanent)

// Validate checks o as a collection does before its first request
// (ErrInvalidOptions).
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

// withDefaults returns o with every zero field replaced by its default and
// "none" values (negative Keep or MinAge, None OrphanAge or CommitWindow)
// normalised to 0.
func (o Options) withDefaults() (Options, error) {
	noOrphanAge, noWindow := o.OrphanAge == None, o.CommitWindow == None
	if noOrphanAge {
		o.OrphanAge = 0
	}
	if noWindow {
		o.CommitWindow = 0
	}
	switch {
	case o.OrphanAge < 0:
		return o, fmt.Errorf("%w: negative orphan age %s", ErrInvalidOptions, o.OrphanAge)
	case o.CommitWindow < 0:
		return o, fmt.Errorf("%w: negative commit window %s", ErrInvalidOptions, o.CommitWindow)
	case o.Concurrency < 0:
		return o, fmt.Errorf("%w: negative concurrency %d", ErrInvalidOptions, o.Concurrency)
	}
	if o.Keep == 0 {
		o.Keep = DefaultKeep
	} else if o.Keep < 0 {
		o.Keep = 0
	}
	if o.MinAge == 0 {
		o.MinAge = DefaultMinAge
	} else if o.MinAge < 0 {
		o.MinAge = 0
	}
	if o.OrphanAge == 0 && !noOrphanAge {
		o.OrphanAge = DefaultOrphanAge
	}
	if o.CommitWindow == 0 && !noWindow {
		o.CommitWindow = DefaultCommitWindow
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	return o, nil
}
