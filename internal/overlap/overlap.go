// Package overlap runs the independent parts of one operation at once, so
// that their requests overlap instead of waiting for one another: reads
// that do not depend on each other, and writes of objects that nothing
// reaches yet. Only the round trips overlap, never a decision: what each
// part does is what it would do alone.
//
// Under an environment with an Order (internal/env) they run one at a
// time instead, in the order it chooses: Do runs its functions one after
// another, and Start runs its function before it returns. The
// deterministic simulation (internal/testing/sim) gives each actor such an
// environment, since it applies one request of an actor at a time and
// draws their order from its seed.
package overlap

import (
	"context"
	"sync"

	"github.com/pswap/pswap/internal/env"
)

func sequential(ctx context.Context) func(n int) []int { return env.From(ctx).Order }

// Do runs fns at once and returns when all have returned. Each reports
// its own outcome (through the variables it sets).
func Do(ctx context.Context, fns ...func()) {
	if order := sequential(ctx); order != nil {
		for _, i := range order(len(fns)) {
			fns[i]()
		}
		return
	}
	if len(fns) == 1 {
		fns[0]()
		return
	}
	var wg sync.WaitGroup
	for _, fn := range fns[1:] {
		wg.Go(fn)
	}
	fns[0]()
	wg.Wait()
}

// Start runs fn in the background and returns a function that waits for
// it to return (as often as it is called).
func Start(ctx context.Context, fn func()) (wait func()) {
	if sequential(ctx) != nil {
		fn()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	return func() { <-done }
}
