package pswap_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/env"
	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
)

// rttLatency is the round trip of every request in the round-trip
// measurements: S3's order of magnitude.
const rttLatency = 20 * time.Millisecond

// rttTable is a table of 10 published partitions of a few rows each, on a
// memory store without latency.
func rttTable(t testing.TB) *memstore.Store {
	t.Helper()
	mem := memstore.New()
	tb := pswap.NewTable(mem)
	for i := range 10 {
		if _, err := commitRecord(t, tb, fmt.Sprintf("dt=2026-11-%02d", i+1), record(t, "id", []int64{int64(i), 1, 2}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
		t.Fatal(err)
	}
	return mem
}

// rttMeasure is one library commit of a small record as the next
// generation of a published partition, then its publish
// (Partition.Begin, Writer.Commit, Writer.Publish), through a store that
// makes every request a round trip of rttLatency.
type rttMeasure struct {
	wall       time.Duration
	sequential int // the longest chain of requests one after another
	requests   int
	counts     map[string]int
	timeline   string
}

// trips is the wall time in round trips.
func (m rttMeasure) trips() float64 { return float64(m.wall) / float64(rttLatency) }

func rttCommitPublish(t testing.TB, mem *memstore.Store, n int, opts pswap.WriteOptions) rttMeasure {
	t.Helper()
	lat := storetest.NewLatency(mem, rttLatency)
	cs := storetest.NewCounting(lat)
	tb := pswap.NewTable(cs)
	p, err := tb.Partition("dt=2026-11-03")
	if err != nil {
		t.Fatal(err)
	}
	rec := record(t, "id", []int64{int64(100 + n), 7, 8})
	start := time.Now()
	w, err := p.Begin(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(ctx)
	if err != nil || !res.Changed {
		t.Fatalf("commit: %+v %v", res, err)
	}
	pub := w.Publish(ctx, pswap.PublishOptions{})
	if !pub.Published {
		t.Fatalf("publish: %v", pub.Err)
	}
	m := rttMeasure{wall: time.Since(start), sequential: lat.Sequential(), requests: cs.Total(), counts: cs.Counts(), timeline: lat.Timeline()}
	return m
}

// BenchmarkCommitPublishLatency measures a library commit of a small
// record plus its Iceberg publish on a store whose every request is a
// round trip of 20 ms: round-trips/op is the wall time in round trips,
// sequential/op the longest chain of requests made one after another.
//
//	go test -run '^$' -bench CommitPublishLatency -benchtime 10x .
//
// prefetch: with WriteOptions.Prefetch, as `pswap commit` runs it.
func BenchmarkCommitPublishLatency(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts pswap.WriteOptions
	}{
		{"default", pswap.WriteOptions{}},
		{"prefetch", pswap.WriteOptions{Prefetch: &pswap.PublishOptions{}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			mem := rttTable(b)
			var trips, seq, reqs float64
			n := 0
			for b.Loop() {
				m := rttCommitPublish(b, mem, n, bc.opts)
				trips += m.trips()
				seq += float64(m.sequential)
				reqs += float64(m.requests)
				n++
			}
			b.ReportMetric(trips/float64(n), "round-trips/op")
			b.ReportMetric(seq/float64(n), "sequential/op")
			b.ReportMetric(reqs/float64(n), "requests/op")
		})
	}
}

// TestCommitPublishRoundTrips: a library commit of a small record and its
// publish make 14 requests (GET pointer and table.json, the data, the
// manifest, the pointer; the publish's hint, version, manifest list, the
// group's manifest it replaces, manifest, manifest list, version, hint: 8,
// issue 41's bound; no footer: the manifest carries the new file's column
// statistics; no pointer: the commit's result says what it made current
// and when, swap.Result.SwappedAt; no publish lease: a lone writer
// publishes optimistically), but not one after another: Begin's two reads
// at once, its manifest and manifest list at once (11 in a row), and with
// WriteOptions.Prefetch the publish's first four reads while the data
// uploads (8 in a row).
func TestCommitPublishRoundTrips(t *testing.T) {
	mem := rttTable(t)
	for i, tc := range []struct {
		opts pswap.WriteOptions
		seq  int
	}{
		{pswap.WriteOptions{}, 11},
		{pswap.WriteOptions{Prefetch: &pswap.PublishOptions{}}, 8},
	} {
		// The first of three attempts that shows the path's own chain
		// (storetest.FirstShown); each commits other rows.
		attempt := 0
		m := storetest.FirstShown(func() rttMeasure {
			attempt++
			return rttCommitPublish(t, mem, 10*i+attempt, tc.opts)
		}, func(m rttMeasure) bool { return m.sequential <= tc.seq })
		t.Logf("prefetch %v: %d requests %v, %.1f round trips (%s), %d one after another:\n%s",
			tc.opts.Prefetch != nil, m.requests, m.counts, m.trips(), m.wall.Round(time.Millisecond), m.sequential, m.timeline)
		// put: the attempt's record (for the audit), beside the data's
		// upload: no round trip of its own.
		want := map[string]int{"get": 6, "writer": 1, "put": 1, "put-if-none-match": 4, "put-if-match": 2}
		if !maps.Equal(m.counts, want) {
			t.Errorf("prefetch %v: requests %v, want %v", tc.opts.Prefetch != nil, m.counts, want)
		}
		if m.sequential > tc.seq {
			t.Errorf("prefetch %v: %d requests one after another, want at most %d", tc.opts.Prefetch != nil, m.sequential, tc.seq)
		}
	}
}

// Begin reads the pointer and the table's metadata at once: one round
// trip, not two.
// (The first of three attempts that shows it: storetest.FirstShown.)
func TestBeginReadsAtOnce(t *testing.T) {
	lat := storetest.NewLatency(rttTable(t), rttLatency)
	p, err := pswap.NewTable(lat).Partition("dt=2026-11-03")
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		n, seq   int
		timeline string
	}
	got := storetest.FirstShown(func() run {
		lat.Reset()
		w, err := p.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort(ctx)
		return run{len(lat.Spans()), lat.Sequential(), lat.Timeline()}
	}, func(x run) bool { return x.n == 2 && x.seq == 1 })
	if got.n != 2 || got.seq != 1 {
		t.Fatalf("Begin made %d requests, %d one after another, want 2 at once:\n%s", got.n, got.seq, got.timeline)
	}
}

// With WriteOptions.Prefetch, Commit reads the publish's metadata again
// if what Begin read is older than a quarter of MaxElapsed by then, and
// Publish starts from the fresh read; younger, it is kept.
func TestWriterPrefetchRenewed(t *testing.T) {
	mem := rttTable(t)
	for _, tc := range []struct {
		wait  time.Duration
		hints int
	}{{14 * time.Second, 1}, {16 * time.Second, 2}} {
		clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
		hints := 0
		st := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
			if c.Op == "get" && c.Key == lakehouse.VersionHintKey {
				hints++
			}
			return storetest.Fault{}
		})
		cs := storetest.NewCounting(st)
		p, err := pswap.NewTable(cs).Partition("dt=2026-11-03")
		if err != nil {
			t.Fatal(err)
		}
		// WaitForView: the prefetch's reads as without the publish lease
		// (lakehouse's TestRequestsPerPublish pins the lease's).
		popts := pswap.PublishOptions{MaxElapsed: time.Minute, WaitForView: true}
		// One request at a time: the prefetch is done when Begin returns.
		sctx := env.With(ctx, &env.Env{Clock: clock.Now, Order: env.InOrder})
		w, err := p.Begin(sctx, pswap.WriteOptions{Prefetch: &popts})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecord(record(t, "id", []int64{int64(tc.hints), 5})); err != nil {
			t.Fatal(err)
		}
		clock.Add(tc.wait)
		if res, err := w.Commit(sctx); err != nil || !res.Changed {
			t.Fatalf("commit: %+v %v", res, err)
		}
		if hints != tc.hints {
			t.Fatalf("%s after Begin: the hint was read %d times, want %d", tc.wait, hints, tc.hints)
		}
		cs.Reset()
		if pub := w.Publish(sctx, popts); !pub.Published {
			t.Fatalf("publish: %v", pub.Err)
		}
		// The group's manifest, the list, the version and the hint: the
		// group's manifest it replaces came with the prefetch, the new
		// file's statistics with the commit's manifest, and what the
		// commit made current with its result (SwappedAt: no pointer).
		if cs.Total() != 4 {
			t.Fatalf("%s after Begin: the publish made %d requests %v, want 4 (it starts from the prefetch)", tc.wait, cs.Total(), cs.Counts())
		}
	}
}

// With WriteOptions.Prefetch, the publish of a no-op commit (the same
// content again) finds the partition in what the prefetch read: no request.
func TestWriterPrefetchNoop(t *testing.T) {
	mem := rttTable(t)
	cs := storetest.NewCounting(mem)
	p, err := pswap.NewTable(cs).Partition("dt=2026-11-03")
	if err != nil {
		t.Fatal(err)
	}
	// One request at a time: the prefetch is done when Begin returns.
	// WaitForView: without the publish lease's requests (lakehouse's
	// TestRequestsPerPublish pins them).
	w, err := p.Begin(env.With(ctx, &env.Env{Order: env.InOrder}), pswap.WriteOptions{Prefetch: &pswap.PublishOptions{WaitForView: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(record(t, "id", []int64{2, 1, 2})); err != nil { // dt=2026-11-03's rows
		t.Fatal(err)
	}
	if res, err := w.Commit(ctx); err != nil || res.Outcome != pswap.Identical {
		t.Fatalf("commit: %+v %v, want identical", res, err)
	}
	pub := w.Publish(ctx, pswap.PublishOptions{WaitForView: true})
	// Begin's pointer and table.json, the prefetch's hint, version,
	// manifest list and the partition's group's manifest; nothing written
	// but the no-op's removal of its data and its attempt record (written
	// as it started uploading, rewritten as a no-op: the audit's row).
	c := cs.Counts()
	if !pub.Published || c["get"] != 6 || c["put"] != 2 || c["put-if-none-match"]+c["put-if-match"] != 0 {
		t.Fatalf("commit and publish of a no-op: %+v, requests %v, want 6 GETs and only the attempt record's 2 PUTs", pub, c)
	}
}

// Abort stops the prefetch: none of its reads is made after Abort returns.
func TestWriterPrefetchStoppedByAbort(t *testing.T) {
	lat := storetest.NewLatency(rttTable(t), 50*time.Millisecond)
	p, err := pswap.NewTable(lat).Partition("dt=2026-11-03")
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{Prefetch: &pswap.PublishOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	n := len(lat.Spans())
	time.Sleep(150 * time.Millisecond)
	if spans := lat.Spans(); len(spans) != n {
		t.Fatalf("requests after Abort:\n%s", lat.Timeline())
	}
}

// Begin reads table.json once at the same time as the pointer: a
// transient failure of that read is retried once the pointer's read
// succeeded, and not at all when it failed.
func TestBeginRetriesTableReadAfterPointer(t *testing.T) {
	mem := rttTable(t)
	for _, tc := range []struct {
		name       string
		pointerErr error
		tableGets  int
	}{
		{"pointer read", nil, 2},
		{"pointer denied", store.ErrAccessDenied, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gets := 0
			st := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
				switch {
				case c.Key == tablemeta.Key:
					gets++
					if gets == 1 {
						return storetest.Fault{Before: fmt.Errorf("%w: 503", store.ErrTransient)}
					}
				case strings.HasSuffix(c.Key, "pointer.json") && tc.pointerErr != nil:
					return storetest.Fault{Before: tc.pointerErr}
				}
				return storetest.Fault{}
			})
			p, err := pswap.NewTable(st).Partition("dt=2026-11-03")
			if err != nil {
				t.Fatal(err)
			}
			w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{BaseDelay: time.Millisecond}})
			if (err == nil) != (tc.pointerErr == nil) || tc.pointerErr != nil && !errors.Is(err, tc.pointerErr) {
				t.Fatalf("Begin: %v", err)
			}
			if w != nil {
				w.Abort(ctx)
			}
			if gets != tc.tableGets {
				t.Fatalf("table.json read %d times, want %d", gets, tc.tableGets)
			}
		})
	}
}

// The publish of a rollback takes the rollback's manifest from its Result
// and what it made current from its SwappedAt (8 requests: the hint, the
// version, its manifest list, the group's manifest it replaces, the
// manifest, the manifest list, the version, the hint; it read the manifest
// back before), and a prefetch started with the rollback saves it its
// first three reads. It reads table.json (one GET) for the table's views,
// which a writer's publish has from its commit.
func TestRollbackPublishRequests(t *testing.T) {
	for _, prefetch := range []bool{false, true} {
		mem := rttTable(t)
		tb := pswap.NewTable(mem)
		p, err := tb.Partition("dt=2026-11-03")
		if err != nil {
			t.Fatal(err)
		}
		h, err := p.History(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		first := h[len(h)-1].Generation
		if _, err := commitRecord(t, tb, "dt=2026-11-03", record(t, "id", []int64{9, 9}), pswap.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		cs := storetest.NewCounting(mem)
		ctb := pswap.NewTable(cs)
		p, _ = ctb.Partition("dt=2026-11-03")
		var pf *pswap.Prefetch
		if prefetch {
			pf = ctb.StartPrefetch(env.With(ctx, &env.Env{Order: env.InOrder}), pswap.PublishOptions{WaitForView: true})
		}
		res, err := p.Rollback(ctx, first, pswap.CommitOptions{})
		if err != nil || !res.Changed {
			t.Fatalf("rollback: %+v %v", res, err)
		}
		cs.Reset()
		// WaitForView: without the publish lease's 3 requests (pinned by
		// lakehouse's TestRequestsPerPublish and TestCommitPublishRoundTrips).
		if pub := p.Publish(ctx, res, pswap.PublishOptions{Prefetch: pf, WaitForView: true}); !pub.Published {
			t.Fatalf("publish: %v", pub.Err)
		}
		want := 9 // with the replaced manifest and table.json (no footer: the manifest has the statistics; no pointer: SwappedAt)
		if prefetch {
			want = 6
		}
		if cs.Total() != want {
			t.Fatalf("prefetch %v: the publish of a rollback made %d requests %v, want %d", prefetch, cs.Total(), cs.Counts(), want)
		}
	}
}
