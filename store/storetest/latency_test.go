package storetest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// The Latency wrapper is a store like any other.
func TestLatencyConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return storetest.NewLatency(memstore.New(), 50*time.Microsecond)
	}, storetest.Options{})
}

// Two requests one after another are two round trips, two at once one;
// the wall time and Sequential agree.
func TestLatencySequential(t *testing.T) {
	ctx := context.Background()
	d := 20 * time.Millisecond
	l := storetest.NewLatency(memstore.New(), d)
	start := time.Now()
	for _, k := range []string{"a", "b"} {
		if _, err := l.Put(ctx, k, []byte(k), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, k := range []string{"a", "b", "c"} {
		wg.Go(func() { l.Stat(ctx, k) })
	}
	wg.Wait()
	wall := time.Since(start)
	if got := l.Sequential(); got != 3 {
		t.Fatalf("Sequential %d, want 3:\n%s", got, l.Timeline())
	}
	if got := l.MaxInFlight(); got != 3 {
		t.Fatalf("MaxInFlight %d, want 3", got)
	}
	if wall < 3*d || wall > 3*d+3*d/2 {
		t.Fatalf("wall time %s for 3 round trips of %s", wall, d)
	}
	l.Reset()
	if n := len(l.Spans()); n != 0 || l.Sequential() != 0 {
		t.Fatalf("after Reset: %d spans", n)
	}
}

// A request whose context ends in the first half of its trip is not
// applied; in the second half it is, and only the reply is lost.
func TestLatencyCancel(t *testing.T) {
	mem := memstore.New()
	l := storetest.NewLatency(mem, 40*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := l.Put(ctx, "early", []byte("x"), store.PutOptions{}); err == nil {
		t.Fatal("a cancelled PUT succeeded")
	}
	if _, err := mem.Stat(context.Background(), "early"); err == nil {
		t.Fatal("a PUT cancelled before it was sent was applied")
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	if _, err := l.Put(ctx2, "late", []byte("x"), store.PutOptions{}); err == nil {
		t.Fatal("a PUT whose reply was lost succeeded")
	}
	if _, err := mem.Stat(context.Background(), "late"); err != nil {
		t.Fatalf("a PUT cancelled after it was applied: %v", err)
	}
}
