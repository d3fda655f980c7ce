// Package overlap runs the independent parts of one operation at once, so
// that their requests overlap instead of waiting for one another: reads
// that do not depend on each other, and writes of objects that nothing
// reaches yet. Only the round trips overlap, never a decision: what each
// part does is what it would do alone.
//
// A context made by Sequential runs them one at a time instead, in an
// order it chooses: the deterministic simulation (internal/testing/sim) gives each
// actor such a context, since it applies one request of an actor at a time
// and draws their order from its seed.
package overlap

import (
	"context"
	"sync"
)

type orderKey struct{}

// Sequential returns a context under which Do runs its functions one after
// another, in the order order(n) gives (a permutation of 0..n-1; nil: as
// given), and Start runs its function before it returns.
func Sequential(ctx context.Context, order func(n int) []int) context.Context {
	if order == nil {
		order = func(n int) []int {
			p := make([]int, n)
			for i := range p {
				p[i] = i
			}
			return p
		}
	}
	return context.WithValue(ctx, orderKey{}, order)
}

func sequential(ctx context.Context) func(n int) []int {
	o, _ := ctx.Value(orderKey{}).(func(n int) []int)
	return o
}

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
