// Package env is what pswap's code asks of the world beyond the store: the
// local clock, the timer that waits between retries, the random source of
// ids and jitter, the source of generation ids, and whether the parts of
// one operation overlap (internal/overlap). Production code asks From(ctx)
// and gets the real world; the deterministic simulation
// (internal/testing/sim) and the tests that must repeat a run draw for draw
// install their own environment on the context with With.
//
// One context value carries all of it, so that nothing else steers the
// code under test: no option field, no process-global.
package env

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pswap/pswap/manifest"
)

// Env is an environment. Each field left nil is the real world's, so the
// zero value (and a nil *Env) is the real world.
type Env struct {
	// Clock is the local clock (default time.Now). Ages of objects are
	// judged by the store's clock, never by this one.
	Clock func() time.Time
	// Timer waits d, or until ctx is done, and then returns ctx's error
	// (default: a timer that ctx cancels).
	Timer func(ctx context.Context, d time.Duration) error
	// Rand, when not nil, draws every random number pswap's code draws:
	// snapshot ids, table UUIDs, the unique part of manifest list names,
	// retry jitter. Env uses it under a lock of its own; nothing else may
	// use it meanwhile. Default: the process's random sources.
	Rand *rand.Rand
	// GenerationIDs returns a fresh generation id (default
	// manifest.NewGenerationID): valid, unique, time-ordered version 7
	// UUIDs.
	GenerationIDs func() string
	// Order, when not nil, makes the parts of one operation that would
	// overlap run one at a time, in the order Order(n) gives (a
	// permutation of 0..n-1): see internal/overlap.
	Order func(n int) []int

	mu sync.Mutex // guards Rand
}

type key struct{}

// world is the environment of a context without one: the real world.
var world = &Env{}

// With returns a context that carries e.
func With(ctx context.Context, e *Env) context.Context {
	return context.WithValue(ctx, key{}, e)
}

// From returns the environment ctx carries, or the real world's.
func From(ctx context.Context) *Env {
	if e, _ := ctx.Value(key{}).(*Env); e != nil {
		return e
	}
	return world
}

// Now reads the local clock.
func (e *Env) Now() time.Time {
	if e == nil || e.Clock == nil {
		return time.Now()
	}
	return e.Clock()
}

// Sleep waits d, or until ctx is done (then it returns ctx's error).
func (e *Env) Sleep(ctx context.Context, d time.Duration) error {
	if e == nil || e.Timer == nil {
		return sleep(ctx, d)
	}
	return e.Timer(ctx, d)
}

// Seeded reports whether random draws come from an injected source (and so
// repeat with it).
func (e *Env) Seeded() bool { return e != nil && e.Rand != nil }

// Int64N returns a uniformly random int64 in [0, n). It panics if n <= 0.
func (e *Env) Int64N(n int64) int64 {
	if !e.Seeded() {
		return rand.Int64N(n)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.Rand.Int64N(n)
}

// Uint64 returns a uniformly random uint64.
func (e *Env) Uint64() uint64 {
	if !e.Seeded() {
		return rand.Uint64()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.Rand.Uint64()
}

// NewGenerationID returns a fresh generation id.
func (e *Env) NewGenerationID() string {
	if e == nil || e.GenerationIDs == nil {
		return manifest.NewGenerationID()
	}
	return e.GenerationIDs()
}

// sleep is the real world's timer.
func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// InOrder is the Order that runs the parts of an operation one at a time,
// as given.
func InOrder(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}
