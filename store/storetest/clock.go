package storetest

import (
	"context"
	"time"

	"github.com/pswap/pswap/store"
)

// Time is time.Time (named so wrappers can forward store.Clock).
type Time = time.Time

func now(ctx context.Context, s store.Store) (time.Time, error) {
	if c, ok := s.(store.Clock); ok {
		return c.Now(ctx)
	}
	return time.Now().UTC(), ctx.Err()
}

// Now forwards the wrapped store's clock, if it has one.
func (c *Counting) Now(ctx context.Context) (time.Time, error) { return now(ctx, c.Store) }
