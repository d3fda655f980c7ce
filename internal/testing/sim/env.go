package sim

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/pswap/pswap/internal/env"
)

// actorEnv is what the pswap code an actor runs sees of the world beyond
// the store (internal/env), the one thing the simulation injects into it:
//   - generation ids from the simulated clock and a counter, the same on
//     every run of a seed;
//   - the parts of one operation that pswap overlaps (internal/overlap) one
//     at a time, in an order drawn from a stream of the actor's own: the
//     model is one request at a time per actor;
//   - for the committers (writers, rollbacks, mergers), retry bounds on the
//     simulated clock with every backoff a scheduling point that lets the
//     others go first, so that attempts and simulated time bound a commit;
//   - for GC and the operators, every backoff a scheduling point;
//   - for the publishers, the simulated clock for snapshot timestamps and
//     attempt ages, every backoff a scheduling point, and a random source
//     of their own (snapshot ids, UUIDs, jitter), across their publishes.
//
// Readers wait on real timers. The environment is also how the store
// knows which actor sent a request (actorOf): every actor has its own.
func (w *World) actorEnv(a *actor) *env.Env {
	e := &env.Env{
		GenerationIDs: func() string { return w.generationIDOf(a) },
		Order:         rand.New(rand.NewPCG(w.cfg.Seed, 0x0de<<32|uint64(a.id))).Perm,
	}
	pause := func(ctx context.Context, _ time.Duration) error { return w.pause(ctx, 1) }
	switch a.kind {
	case "writer", "rollback", "merger":
		e.Clock, e.Timer = w.clockNow, pause
	case "gc", "operator":
		e.Timer = pause
	case "publisher":
		e.Clock, e.Timer = w.clockNow, pause
		e.Rand = rand.New(rand.NewPCG(w.cfg.Seed, 0x1ce<<32|uint64(a.id)))
	}
	return e
}

// convergeEnv is the final reconcile's, outside any actor: the simulated
// clock, no waits, and a random source of its own.
func (w *World) convergeEnv() *env.Env {
	return &env.Env{
		GenerationIDs: w.newGenerationID,
		Clock:         w.clockNow,
		Timer:         func(context.Context, time.Duration) error { return nil },
		Rand:          rand.New(rand.NewPCG(w.cfg.Seed, 0x1ce<<32)),
	}
}

// actorOf is the actor whose code made a request with ctx (nil: none, as
// outside a run or in the final reconcile).
func (w *World) actorOf(ctx context.Context) *actor {
	return w.byEnv[env.From(ctx)]
}
