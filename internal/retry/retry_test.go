package retry

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/env"
)

// highest is a random source that always draws the highest number: every
// Int64N(n) is n-1.
type highest struct{}

func (highest) Uint64() uint64 { return math.MaxUint64 }

// A fake clock and sleep drive the loop deterministically.
func TestDoBoundsAndBackoff(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	var slept []time.Duration
	ctx := env.With(context.Background(), &env.Env{
		Clock: func() time.Time { return now },
		Timer: func(_ context.Context, d time.Duration) error { slept = append(slept, d); now = now.Add(d); return nil },
		Rand:  rand.New(highest{}), // the longest wait
	})
	p := Policy{MaxAttempts: 5, BaseDelay: 10 * time.Millisecond, MaxDelay: 35 * time.Millisecond}
	transient := errors.New("transient")
	calls := 0
	err := p.Do(ctx, func(err error) bool { return err == transient }, func(int) error { calls++; return transient })
	if err != transient || calls != 5 {
		t.Fatalf("err %v after %d calls, want transient after 5", err, calls)
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 35 * time.Millisecond, 35 * time.Millisecond}
	if len(slept) != len(want) {
		t.Fatalf("slept %v, want %v", slept, want)
	}
	for i := range want {
		if slept[i] != want[i] {
			t.Fatalf("slept %v, want %v", slept, want)
		}
	}
	// A permanent error stops at once; success stops at once.
	calls = 0
	perm := errors.New("permanent")
	if err := p.Do(ctx, func(err error) bool { return err == transient }, func(int) error { calls++; return perm }); err != perm || calls != 1 {
		t.Fatalf("permanent: %v after %d calls", err, calls)
	}
	// The deadline stops the loop before the attempts run out.
	p.MaxAttempts = 100
	p.Deadline = now.Add(50 * time.Millisecond)
	calls = 0
	p.Do(ctx, func(error) bool { return true }, func(int) error { calls++; return transient })
	if calls != 4 { // waits 10+20+35 pass the deadline after the 4th call
		t.Fatalf("deadline: %d calls", calls)
	}
}

func TestWaitCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (Policy{BaseDelay: time.Hour, MaxDelay: time.Hour}).Wait(ctx, 0, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a cancelled context: %v", err)
	}
}

// Centered waits are drawn from [d/2, 3d/2): the highest draw waits just
// under 3d/2.
func TestCenteredBackoff(t *testing.T) {
	ctx := env.With(context.Background(), &env.Env{Rand: rand.New(highest{})})
	p := Policy{BaseDelay: 10 * time.Millisecond, Centered: true}
	if got, want := p.Backoff(ctx, 1), 30*time.Millisecond-1; got != want {
		t.Fatalf("centered backoff of attempt 1 at the highest draw: %v, want %v", got, want)
	}
}
