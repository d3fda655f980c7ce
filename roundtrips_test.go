package pswap_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/tablemeta"
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
	pub := w.Publish(ctx, lakehouse.Options{})
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
func BenchmarkCommitPublishLatency(b *testing.B) {
	mem := rttTable(b)
	var trips, seq, reqs float64
	n := 0
	for b.Loop() {
		m := rttCommitPublish(b, mem, n, pswap.WriteOptions{})
		trips += m.trips()
		seq += float64(m.sequential)
		reqs += float64(m.requests)
		n++
		if n == 1 {
			b.Logf("%d requests %v, %.1f round trips, %d sequential:\n%s", m.requests, m.counts, m.trips(), m.sequential, m.timeline)
		}
	}
	b.ReportMetric(trips/float64(n), "round-trips/op")
	b.ReportMetric(seq/float64(n), "sequential/op")
	b.ReportMetric(reqs/float64(n), "requests/op")
}

// Begin reads the pointer and the table's metadata at once: one round
// trip, not two.
func TestBeginReadsAtOnce(t *testing.T) {
	lat := storetest.NewLatency(rttTable(t), rttLatency)
	p, err := pswap.NewTable(lat).Partition("dt=2026-11-03")
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort(ctx)
	if n, seq := len(lat.Spans()), lat.Sequential(); n != 2 || seq != 1 {
		t.Fatalf("Begin made %d requests, %d one after another, want 2 at once:\n%s", n, seq, lat.Timeline())
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
