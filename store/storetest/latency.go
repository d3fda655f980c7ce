package storetest

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/store"
)

// Latency wraps a store and makes every request a round trip of Delay, as
// a remote store's requests are (20-50 ms on S3), so that tests and
// benchmarks can see how many requests a path makes one after another:
// its wall time divided by Delay, or Sequential, the longest chain of
// requests each of which started after the one before it had ended.
//
// A request waits Delay/2, is applied, and waits Delay/2 again (a request
// applied in the middle of its flight, as on the network). A context
// cancelled in the first half fails it unapplied; in the second half, the
// request was applied and only its reply is lost. A streaming write's round
// trip is its Commit (one PUT for a small object; its parts, uploaded in
// parallel, are not modelled); a listing makes one per page of ListPageSize
// entries; the clock (store.Clock) is forwarded at no cost, as an S3
// store's clock comes from the Date of its replies.
type Latency struct {
	store.Store
	delay time.Duration

	mu       sync.Mutex
	start    time.Time
	inFlight int
	maxIn    int
	spans    []Span
}

// Span is one request seen by a Latency store: its operation (as
// Counting names them, "writer" for a streaming write's Commit), its key
// and when it started and ended, since the latest Reset.
type Span struct {
	Op, Key    string
	Start, End time.Duration
}

func (s Span) String() string {
	return fmt.Sprintf("%7.1f ms %7.1f ms  %-18s %s", ms(s.Start), ms(s.End), s.Op, s.Key)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// NewLatency wraps s with a round trip of d per request.
func NewLatency(s store.Store, d time.Duration) *Latency {
	return &Latency{Store: s, delay: d, start: time.Now()}
}

// Delay is the round trip of each request.
func (l *Latency) Delay() time.Duration { return l.delay }

// Reset forgets the requests seen so far and restarts the timeline.
func (l *Latency) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.start, l.spans, l.maxIn = time.Now(), nil, l.inFlight
}

// Spans returns the requests seen since the latest Reset, in the order
// they started.
func (l *Latency) Spans() []Span {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.spans)
	slices.SortStableFunc(out, func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// MaxInFlight is the most requests in flight at once since the latest
// Reset.
func (l *Latency) MaxInFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.maxIn
}

// Sequential is the length of the longest chain of requests since the
// latest Reset in which each started after the one before it ended: the
// round trips the path waited for one after another, whatever the time
// spent between them.
func (l *Latency) Sequential() int {
	spans := l.Spans()
	// The most pairwise disjoint spans: take the one that ends first, then
	// the next that starts after it ends, and so on.
	slices.SortStableFunc(spans, func(a, b Span) int { return cmp.Compare(a.End, b.End) })
	n, end := 0, time.Duration(-1)
	for _, s := range spans {
		if s.Start >= end {
			n, end = n+1, s.End
		}
	}
	return n
}

// FirstShown measures a chain of requests read off the wall clock
// (Sequential) up to three times and returns the first measure that shown
// accepts, or the last one. A loaded machine can lengthen such a chain (a
// goroutine scheduled after a round trip ended), never shorten it: the
// first attempt that shows the path's own chain is the measure, and a path
// that makes its requests one after another fails every attempt. measure
// runs the path on fresh state each time.
func FirstShown[T any](measure func() T, shown func(T) bool) T {
	var m T
	for range 3 {
		if m = measure(); shown(m) {
			break
		}
	}
	return m
}

// Timeline prints the requests since the latest Reset, one a line: start,
// end, operation and key.
func (l *Latency) Timeline() string {
	var b strings.Builder
	for _, s := range l.Spans() {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// trip makes one round trip around apply: half the delay before it, half
// after. A context cancelled before apply fails the request unapplied.
func (l *Latency) trip(ctx context.Context, op, key string, apply func()) error {
	l.mu.Lock()
	begin := time.Since(l.start)
	l.inFlight++
	l.maxIn = max(l.maxIn, l.inFlight)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.inFlight--
		l.spans = append(l.spans, Span{Op: op, Key: key, Start: begin, End: time.Since(l.start)})
		l.mu.Unlock()
	}()
	if err := wait(ctx, l.delay/2); err != nil {
		return err
	}
	apply()
	if err := wait(ctx, l.delay-l.delay/2); err != nil {
		return fmt.Errorf("%s %s: reply lost: %w", op, key, err)
	}
	return nil
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return env.From(ctx).Sleep(ctx, d)
}

func (l *Latency) Get(ctx context.Context, key string) (rc io.ReadCloser, a store.Attrs, err error) {
	if terr := l.trip(ctx, "get", key, func() { rc, a, err = l.Store.Get(ctx, key) }); terr != nil {
		if rc != nil {
			rc.Close()
		}
		return nil, store.Attrs{}, terr
	}
	return rc, a, err
}

func (l *Latency) Stat(ctx context.Context, key string) (a store.Attrs, err error) {
	if terr := l.trip(ctx, "stat", key, func() { a, err = l.Store.Stat(ctx, key) }); terr != nil {
		return store.Attrs{}, terr
	}
	return a, err
}

func (l *Latency) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (a store.Attrs, err error) {
	if terr := l.trip(ctx, putOp(opts), key, func() { a, err = l.Store.Put(ctx, key, data, opts) }); terr != nil {
		return store.Attrs{}, terr
	}
	return a, err
}

func (l *Latency) Delete(ctx context.Context, key string) (err error) {
	if terr := l.trip(ctx, "delete", key, func() { err = l.Store.Delete(ctx, key) }); terr != nil {
		return terr
	}
	return err
}

// NewWriter starts a streaming write at no cost; its Commit is one round
// trip.
func (l *Latency) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	w, err := l.Store.NewWriter(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return &latencyWriter{Writer: w, l: l, ctx: ctx, key: key}, nil
}

type latencyWriter struct {
	store.Writer
	l   *Latency
	ctx context.Context
	key string
}

func (w *latencyWriter) Commit() (a store.Attrs, err error) {
	applied := false
	if terr := w.l.trip(w.ctx, "writer", w.key, func() { applied = true; a, err = w.Writer.Commit() }); terr != nil {
		if !applied {
			w.Writer.Abort() // never sent: leave nothing behind
		}
		return store.Attrs{}, terr
	}
	return a, err
}

// List makes one round trip per page of ListPageSize entries, before the
// page's first entry.
func (l *Latency) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	return pagedTrips(ctx, l, "list", prefix, l.Store.List(ctx, prefix))
}

// ListDelimited implements store.DelimiterLister: through the wrapped
// store's when it has one (a round trip per page), else as a full List.
func (l *Latency) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	if _, ok := l.Store.(store.DelimiterLister); ok {
		return pagedTrips(ctx, l, "list", prefix, store.ListDelimited(ctx, l.Store, prefix, delimiter))
	}
	return store.RollUp(l.List(ctx, prefix), prefix, delimiter)
}

func pagedTrips[T any](ctx context.Context, l *Latency, op, prefix string, seq iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if err := l.trip(ctx, op, prefix, func() {}); err != nil {
			var zero T
			yield(zero, err)
			return
		}
		n := 0
		for v, err := range seq {
			if n++; n > ListPageSize && n%ListPageSize == 1 {
				if terr := l.trip(ctx, op, prefix, func() {}); terr != nil {
					var zero T
					yield(zero, terr)
					return
				}
			}
			if !yield(v, err) {
				return
			}
		}
	}
}

// DeleteMany is one round trip when the wrapped store batches deletes,
// else one per key.
func (l *Latency) DeleteMany(ctx context.Context, keys []string) (err error) {
	bd, ok := l.Store.(store.BatchDeleter)
	if !ok {
		for _, k := range keys {
			if err := l.Delete(ctx, k); err != nil {
				return err
			}
		}
		return nil
	}
	if terr := l.trip(ctx, "delete-many", fmt.Sprintf("%d keys", len(keys)), func() { err = bd.DeleteMany(ctx, keys) }); terr != nil {
		return terr
	}
	return err
}

// GetRange is one round trip (store.GetRange on the wrapped store).
func (l *Latency) GetRange(ctx context.Context, key string, off, n int64) (rc io.ReadCloser, a store.Attrs, err error) {
	if terr := l.trip(ctx, "get-range", key, func() { rc, a, err = store.GetRange(ctx, l.Store, key, off, n) }); terr != nil {
		if rc != nil {
			rc.Close()
		}
		return nil, store.Attrs{}, terr
	}
	return rc, a, err
}

// Copy is one round trip (store.Copy on the wrapped store).
func (l *Latency) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (a store.Attrs, err error) {
	if terr := l.trip(ctx, "copy", dst, func() { a, err = store.Copy(ctx, l.Store, dst, src, opts) }); terr != nil {
		return store.Attrs{}, terr
	}
	return a, err
}

// Now forwards the wrapped store's clock, if it has one, at no cost.
func (l *Latency) Now(ctx context.Context) (Time, error) { return now(ctx, l.Store) }
