package env_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/manifest"
)

// A context without an environment is the real world's.
func TestFromWithoutEnvIsTheRealWorld(t *testing.T) {
	e := env.From(context.Background())
	if e == nil || e.Seeded() {
		t.Fatalf("From without an environment: %+v", e)
	}
	if d := time.Since(e.Now()); d < 0 || d > time.Minute {
		t.Fatalf("the real clock is %v off", d)
	}
	if err := manifest.ValidateGenerationID(e.NewGenerationID()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled sleep: %v", err)
	}
	var none *env.Env // a nil environment is the real world too
	if none.Seeded() || none.Now().IsZero() {
		t.Fatal("a nil environment is not the real world")
	}
}

// With installs every part; the same seed draws the same numbers.
func TestWithInstalls(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var slept time.Duration
	draw := func() []int64 {
		e := env.From(env.With(context.Background(), &env.Env{
			Clock:         func() time.Time { return at },
			Timer:         func(_ context.Context, d time.Duration) error { slept += d; return nil },
			Rand:          rand.New(rand.NewPCG(1, 2)),
			GenerationIDs: func() string { return "fixed" },
			Order:         env.InOrder,
		}))
		if !e.Now().Equal(at) || e.NewGenerationID() != "fixed" || !e.Seeded() || len(e.Order(3)) != 3 {
			t.Fatalf("the installed environment is not the one read: %+v", e)
		}
		if err := e.Sleep(context.Background(), time.Second); err != nil {
			t.Fatal(err)
		}
		return []int64{e.Int64N(1 << 40), int64(e.Uint64() >> 1), e.Int64N(1000)}
	}
	a, b := draw(), draw()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("the same seed drew %v, then %v", a, b)
		}
	}
	if slept != 2*time.Second {
		t.Fatalf("slept %v on the installed timer, want 2s", slept)
	}
}
