package pswap

import (
	"time"

	"github.com/pswap/pswap/swap"
)

// CommitOptions tune a commit, a rollback or a merge's swaps. The zero value
// works: fail on conflict, no run id, bounded retries, a 24-hour grace
// period.
type CommitOptions struct {
	// RunID identifies the orchestrator run (e.g. an Airflow run id). Two
	// attempts with the same run id are the same run: once one committed,
	// the others are no-ops (Outcome SameRun), even after other runs
	// committed since, as long as the commit is among the partition's last
	// 100 commits.
	RunID string
	// OnConflict is the conflict policy (default Fail).
	OnConflict Policy
	// Force commits even when the content equals the current generation's,
	// or the run id already committed to the partition.
	Force bool
	// AllowEmpty lets a commit of no rows replace the partition (an empty
	// day on purpose). Without it such a commit fails with ErrEmptyCommit
	// and changes nothing.
	AllowEmpty bool
	// GracePeriod bounds the time between Begin and the pointer swap
	// (default 24h). It must not exceed the garbage collector's orphan
	// age.
	GracePeriod time.Duration
	// MaxAttempts bounds the attempts of one request and of the pointer
	// swap (default 10).
	//
	// The library's retry defaults (10 attempts, backoff capped at 5s,
	// within MaxElapsed) are not the CLI's (5 attempts, capped at 2s): a
	// program that embeds pswap usually runs on, and may wait out a
	// throttling burst, while the CLI runs under a scheduler that retries
	// the task itself and wants a dead endpoint reported in seconds. Set
	// MaxAttempts: 5 and MaxDelay: 2*time.Second for the CLI's behaviour.
	MaxAttempts int
	// MaxElapsed bounds the time spent retrying one commit (default 2m).
	MaxElapsed time.Duration
	// BaseDelay and MaxDelay shape the exponential backoff with full
	// jitter (defaults 50ms and 5s; the CLI uses 2s, see MaxAttempts).
	BaseDelay, MaxDelay time.Duration
	// Identity is the orchestrator's name for the attempt (job, task,
	// logical date), which a Writer records with its run id when it
	// starts, for the audit (identity.go).
	Identity Identity
}

// swap is the protocol's options for these.
func (o CommitOptions) swap() swap.Options {
	return swap.Options{
		RunID:       o.RunID,
		OnConflict:  o.OnConflict,
		Force:       o.Force,
		AllowEmpty:  o.AllowEmpty,
		GracePeriod: o.GracePeriod,
		MaxAttempts: o.MaxAttempts,
		MaxElapsed:  o.MaxElapsed,
		BaseDelay:   o.BaseDelay,
		MaxDelay:    o.MaxDelay,
	}
}
