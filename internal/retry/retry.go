// Package retry is pswap's one retry helper: exponential backoff with full
// jitter, bounded in attempts and in time, with injectable sleep, clock and
// randomness so that a deterministic simulation can drive it.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy bounds and shapes a retry loop. The zero value of each field has a
// default (see the field).
type Policy struct {
	// MaxAttempts bounds the attempts (default 10).
	MaxAttempts int
	// Deadline, when not zero, stops retrying once the clock passes it.
	Deadline time.Time
	// BaseDelay and MaxDelay shape the backoff: attempt n waits a uniformly
	// random time in (0, min(BaseDelay<<n, MaxDelay)] (defaults 50ms, 5s).
	BaseDelay, MaxDelay time.Duration
	// Sleep waits d or until ctx is done (default: a timer).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock the deadline is checked against (default time.Now).
	Now func() time.Time
	// Jitter returns a uniformly random int64 in [0, n) (default math/rand/v2).
	Jitter func(n int64) int64
	// OnRetry, when not nil, is called before each wait.
	OnRetry func(attempt int, err error)
}

func (p Policy) maxAttempts() int {
	if p.MaxAttempts <= 0 {
		return 10
	}
	return p.MaxAttempts
}

func (p Policy) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Backoff is the wait before retry number attempt (0-based): exponential
// with full jitter, at least 1ns.
func (p Policy) Backoff(attempt int) time.Duration {
	base, maxd := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = 50 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 5 * time.Second
	}
	d := base << min(attempt, 20)
	if d > maxd || d <= 0 {
		d = maxd
	}
	jitter := rand.Int64N
	if p.Jitter != nil {
		jitter = p.Jitter
	}
	return time.Duration(jitter(int64(d)) + 1)
}

// Exhausted reports whether no attempt may follow attempt number attempt
// (0-based): the attempts or the time ran out.
func (p Policy) Exhausted(attempt int) bool {
	return attempt+1 >= p.maxAttempts() || (!p.Deadline.IsZero() && p.now().After(p.Deadline))
}

// Wait sleeps the backoff of attempt, reporting err to OnRetry first. It
// returns ctx's error if ctx is done first.
func (p Policy) Wait(ctx context.Context, attempt int, err error) error {
	if p.OnRetry != nil {
		p.OnRetry(attempt, err)
	}
	sleep := Sleep
	if p.Sleep != nil {
		sleep = p.Sleep
	}
	return sleep(ctx, p.Backoff(attempt))
}

// Do calls op until it returns nil, an error that retryable rejects, or the
// bounds run out, and returns op's last error. op receives the 0-based
// attempt number.
func (p Policy) Do(ctx context.Context, retryable func(error) bool, op func(attempt int) error) error {
	for attempt := 0; ; attempt++ {
		err := op(attempt)
		if err == nil || !retryable(err) || p.Exhausted(attempt) {
			return err
		}
		if werr := p.Wait(ctx, attempt, err); werr != nil {
			return werr
		}
	}
}

// Sleep waits d, or until ctx is done (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}
