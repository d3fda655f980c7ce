package overlap_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/overlap"
)

func TestDoOverlaps(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	var mu sync.Mutex
	var got []int
	var fns []func()
	for i := range 3 {
		fns = append(fns, func() {
			time.Sleep(30 * time.Millisecond)
			mu.Lock()
			got = append(got, i)
			mu.Unlock()
		})
	}
	overlap.Do(ctx, fns...)
	if d := time.Since(start); d > 80*time.Millisecond {
		t.Fatalf("three 30 ms parts took %s: not at once", d)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("ran %v", got)
	}
}

func TestSequentialOrder(t *testing.T) {
	ctx := env.With(context.Background(), &env.Env{Order: func(n int) []int { return []int{2, 0, 1}[:n] }})
	var got []int
	overlap.Do(ctx, func() { got = append(got, 0) }, func() { got = append(got, 1) }, func() { got = append(got, 2) })
	if !slices.Equal(got, []int{2, 0, 1}) {
		t.Fatalf("ran in order %v, want 2 0 1", got)
	}
	ran := false
	wait := overlap.Start(ctx, func() { ran = true })
	if !ran {
		t.Fatal("Start under an Order did not run its function before returning")
	}
	wait()
	got = nil
	overlap.Do(env.With(context.Background(), &env.Env{Order: env.InOrder}), func() { got = append(got, 0) }, func() { got = append(got, 1) })
	if !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("InOrder ran %v", got)
	}
}

func TestStartWaits(t *testing.T) {
	var done bool
	wait := overlap.Start(context.Background(), func() { time.Sleep(10 * time.Millisecond); done = true })
	wait()
	wait()
	if !done {
		t.Fatal("wait returned before the function did")
	}
}
