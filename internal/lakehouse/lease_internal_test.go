package lakehouse

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// TestLeaseTakeRelease: 16 goroutines take and release the lease 50 times
// each: a take succeeds only while nobody holds it (never two holders at
// once), and every holder's release frees it for the next.
func TestLeaseTakeRelease(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New(memstore.Options{})
	var holders, maxHolders, takes atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			p := newPublisher(ctx, mem, Options{})
			for range 50 {
				l := &lease{holder: string(rune('a' + g)), length: leaseLength}
				ok, err := l.take(ctx, p, "")
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					continue
				}
				takes.Add(1)
				n := holders.Add(1)
				for {
					m := maxHolders.Load()
					if n <= m || maxHolders.CompareAndSwap(m, n) {
						break
					}
				}
				holders.Add(-1)
				l.release(ctx, p)
			}
		})
	}
	wg.Wait()
	if maxHolders.Load() != 1 || takes.Load() == 0 {
		t.Fatalf("%d takes, at most %d holders at once: want 1", takes.Load(), maxHolders.Load())
	}
	if _, err := mem.Stat(ctx, layout.LeaseKey); err == nil {
		t.Fatal("the lease is left behind")
	}
}

// TestLeaseTakeOverRace: 16 publishers find the same expired lease and
// take it over at once (If-Match its ETag): exactly one wins; the old
// holder's renewal then finds it lost and stops, and its release leaves
// the new holder's lease alone.
func TestLeaseTakeOverRace(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	clock := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	mem := memstore.New(memstore.Options{Now: now})
	p := newPublisher(ctx, mem, Options{})
	old := &lease{holder: "old", length: leaseLength}
	if ok, err := old.take(ctx, p, ""); !ok || err != nil {
		t.Fatal(ok, err)
	}
	mu.Lock()
	clock = clock.Add(leaseLength + time.Second)
	mu.Unlock()
	data, a, err := store.ReadAll(ctx, mem, layout.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := parseLease(data)
	if !ok || p.leaseLive(ctx, b, a) {
		t.Fatalf("lease %s: parsed %v, want expired", data, ok)
	}
	var wins atomic.Int64
	var winner *lease
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			l := &lease{holder: string(rune('a' + g)), length: leaseLength}
			ok, err := l.take(ctx, newPublisher(ctx, mem, Options{}), a.ETag)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
				mu.Lock()
				winner = l
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d take-overs won, want 1", wins.Load())
	}
	old.renew(ctx, p)
	if !old.lost {
		t.Fatal("the old holder's renewal did not find the lease lost")
	}
	old.release(ctx, p)
	data, _, err = store.ReadAll(ctx, mem, layout.LeaseKey)
	if got, ok := parseLease(data); err != nil || !ok || got.Holder != winner.holder {
		t.Fatalf("after the old holder's release: %s %v, want the new holder's lease", data, err)
	}
}

// FuzzParseLease: a lease parses only with a holder and a length of 1 s
// to an hour; nothing panics.
func FuzzParseLease(f *testing.F) {
	for _, s := range []string{`{"holder":"a","version":3,"seconds":20}`, `{}`, `{"holder":"a","seconds":0}`, `not json`, `{"holder":"a","version":-1,"seconds":5}`,
		`{"holder":"a","version":3,"seconds":20,"partition":"dt=2026-12-01","seq":4}`, `{"holder":"a","seconds":20,"partition":"../x","seq":-1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, ok := parseLease(data)
		if ok && (b.Holder == "" || b.Seconds <= 0 || b.Seconds > 3600 || b.Version < 0) {
			t.Fatalf("parsed %+v from %q", b, data)
		}
	})
}
