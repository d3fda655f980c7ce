package retry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pswap/pswap/store"
)

// DefaultRequestAttempts is the attempts Request allows each request when
// none are given: the CLI's default --max-attempts.
const DefaultRequestAttempts = 5

// Request is the retry rule of the requests of a view publish (the Iceberg
// metadata's, the Delta log's): attempts at most (0 or less:
// DefaultRequestAttempts), exponential from 50 ms, each wait between a
// half and one and a half of it, drawn and slept by the context's
// environment. Under it a transient store failure (store.IsRetryable)
// that the store recovers from within the attempts never reaches the
// publish: the CLI runs the store's SDK at one attempt and leaves the
// retries to pswap's loops.
func Request(attempts int) Policy {
	if attempts <= 0 {
		attempts = DefaultRequestAttempts
	}
	return Policy{MaxAttempts: attempts, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Hour, Centered: true}
}

// Idempotent runs op under p, again after a backoff while its error is
// retryable (store.IsRetryable), and returns its last error. op must be a
// read, or a write whose repeat writes the same (an unconditional PUT of
// the same bytes, a delete), and must succeed whole or fail: nothing may
// be decided from a partial read.
func (p Policy) Idempotent(ctx context.Context, op func() error) error {
	return p.Do(ctx, store.IsRetryable, func(int) error { return op() })
}

// CreateOnce is a view's commit point: a create-if-absent PUT of data at
// key (opts.IfNoneMatch is set), under p. It reports whether the object at
// key is this data: true when ours landed, false when another writer's
// was there first (a lost race). An unclear outcome is settled by reading
// key back (retried under p), never by sending the data blindly again:
//
//   - a precondition failure: the bytes at key tell whether they are our
//     own earlier attempt, whose reply was lost, or another writer's (a
//     precondition failure on a missing key is a lost race too: the caller
//     reads the latest state and sees);
//   - a transient failure: the same bytes are ours, other bytes a lost
//     race, and a missing key is sent again (after a backoff);
//   - a read-back that fails: whether ours landed is unknown, and the
//     error says so (the view lags; the next publish finds what is there).
//
// A permanent failure of the PUT (access denied, bad input) is returned
// as it is.
func CreateOnce(ctx context.Context, p Policy, st store.Store, key string, data []byte, opts store.PutOptions) (bool, error) {
	opts.IfNoneMatch = true
	var err error
	for try := 0; ; try++ {
		_, err = st.Put(ctx, key, data, opts)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, store.ErrPrecondition) && !store.IsRetryable(err) {
			return false, fmt.Errorf("write %s: %w", key, err)
		}
		var got []byte
		rerr := p.Idempotent(ctx, func() (rerr error) {
			got, _, rerr = store.ReadAll(ctx, st, key)
			return rerr
		})
		switch {
		case rerr == nil:
			return bytes.Equal(got, data), nil
		case errors.Is(rerr, store.ErrNotFound) && errors.Is(err, store.ErrPrecondition):
			return false, nil
		case !errors.Is(rerr, store.ErrNotFound):
			return false, fmt.Errorf("write %s: %v, then read it back: %w", key, err, rerr)
		}
		// A transient failure, and nothing at key: not written. Again.
		if p.Exhausted(ctx, try) {
			return false, fmt.Errorf("write %s: %w", key, err)
		}
		if werr := p.Wait(ctx, try, err); werr != nil {
			return false, werr
		}
	}
}
