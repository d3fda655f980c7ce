// Package retry is pswap's one retry helper: exponential backoff with full
// jitter, bounded in attempts and in time. Its clock, timer and random
// draws are the context's environment (internal/env), so that a
// deterministic simulation can drive it.
package retry

import (
	"context"
	"time"

	"github.com/pswap/pswap/internal/env"
)

// Policy bounds and shapes a retry loop. The zero value of each field has a
// default (see the field).
type Policy struct {
	// MaxAttempts bounds the attempts (default 10).
	MaxAttempts int
	// Deadline, when not zero, stops retrying once the environment's
	// clock passes it.
	Deadline time.Time
	// BaseDelay and MaxDelay shape the backoff: attempt n waits a uniformly
	// random time in (0, d], d = min(BaseDelay<<n, MaxDelay) (defaults
	// 50ms, 5s).
	BaseDelay, MaxDelay time.Duration
	// Centered draws each wait from [d/2, 3d/2) instead: never much
	// shorter than d.
	Centered bool
	// OnRetry, when not nil, is called before each wait.
	OnRetry func(attempt int, err error)
}

func (p Policy) maxAttempts() int {
	if p.MaxAttempts <= 0 {
		return 10
	}
	return p.MaxAttempts
}

// Backoff is the wait before retry number attempt (0-based): exponential
// with jitter drawn from ctx's environment, at least 1ns.
func (p Policy) Backoff(ctx context.Context, attempt int) time.Duration {
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
	j := env.From(ctx).Int64N(int64(d))
	if p.Centered {
		j += int64(d/2) - 1
	}
	return time.Duration(j + 1)
}

// Exhausted reports whether no attempt may follow attempt number attempt
// (0-based): the attempts or the time (on ctx's environment's clock) ran
// out.
func (p Policy) Exhausted(ctx context.Context, attempt int) bool {
	return attempt+1 >= p.maxAttempts() || (!p.Deadline.IsZero() && env.From(ctx).Now().After(p.Deadline))
}

// Wait sleeps the backoff of attempt on ctx's environment's timer,
// reporting err to OnRetry first. It returns ctx's error if ctx is done
// first.
func (p Policy) Wait(ctx context.Context, attempt int, err error) error {
	if p.OnRetry != nil {
		p.OnRetry(attempt, err)
	}
	return env.From(ctx).Sleep(ctx, p.Backoff(ctx, attempt))
}

// Do calls op until it returns nil, an error that retryable rejects, or the
// bounds run out, and returns op's last error. op receives the 0-based
// attempt number.
func (p Policy) Do(ctx context.Context, retryable func(error) bool, op func(attempt int) error) error {
	for attempt := 0; ; attempt++ {
		err := op(attempt)
		if err == nil || !retryable(err) || p.Exhausted(ctx, attempt) {
			return err
		}
		if werr := p.Wait(ctx, attempt, err); werr != nil {
			return werr
		}
	}
}
