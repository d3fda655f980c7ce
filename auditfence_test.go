package pswap_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// auditStates reads the current rows of one audit day back from the
// audit table's store with Arrow's Parquet reader, as partition ->
// generation -> state.
func auditStates(t testing.TB, st store.Store, day string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	eachCurrentFile(t, st, day, func(file string, tb arrow.Table) {
		col := func(name string) *array.String { return tableColumn(t, file, tb, name).(*array.String) }
		parts, gens, states := col("partition"), col("generation"), col("state")
		for i := range int(tb.NumRows()) {
			if out[parts.Value(i)] == nil {
				out[parts.Value(i)] = map[string]string{}
			}
			out[parts.Value(i)][gens.Value(i)] = states.Value(i)
		}
	})
	return out
}

// An audit --publish that read the table before a commit and reaches the
// audit table after another run published that commit's audit must not put
// its older audit back (issue 38, item 5). Run A is held right after its
// reads of the data table, before its next request to the audit table;
// meanwhile the partition gets a new generation and run B publishes it. A
// then goes on: the audit still shows the new generation current, and A
// says it changed nothing (it re-read the day: the same rows as B's).
func TestPublishAuditOverlapNeverGoesBackwards(t *testing.T) {
	t.Run("mem", func(t *testing.T) { testAuditOverlap(t, memstore.New(), memstore.New()) })
	t.Run("s3", func(t *testing.T) {
		if !testenv.S3Enabled() {
			t.Skip("S3 tests need MinIO: run scripts/test.sh")
		}
		bucket, _ := testenv.S3Bucket(t)
		run := fmt.Sprintf("root/audit-overlap-%d", time.Now().UnixNano())
		var sts [2]store.Store
		for i, name := range []string{"sales", "sales__audit"} {
			st, err := s3store.New(ctx, bucket, run+"/"+name, testenv.S3Options(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			sts[i] = st
		}
		testAuditOverlap(t, sts[0], sts[1])
	})
}

func testAuditOverlap(t *testing.T, data, audits store.Store) {
	const part, day = "dt=2026-11-28", "day=2026-11-28"
	tb := pswap.NewTable(data)
	first := auditCommit(t, tb, part, "", 3, "a")

	var readData atomic.Bool
	held, hold := make(chan struct{}), make(chan struct{})
	var once sync.Once
	dataA := storetest.NewFaulty(data, func(storetest.Call) storetest.Fault {
		readData.Store(true)
		return storetest.Fault{}
	})
	auditsA := storetest.NewFaulty(audits, func(storetest.Call) storetest.Fault {
		if readData.Load() {
			once.Do(func() { close(held) })
			<-hold
		}
		return storetest.Fault{}
	})
	var (
		pubA pswap.AuditPublication
		errA error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		pubA, errA = pswap.NewTable(dataA).PublishAudit(ctx, pswap.NewTable(auditsA), pswap.AuditPublishOptions{})
	}()
	<-held // A read first as current; it has not written anything yet

	second := auditCommit(t, tb, part, "", 4, "b")
	pubB, err := tb.PublishAudit(ctx, pswap.NewTable(audits), pswap.AuditPublishOptions{})
	if err != nil || pubB.Changed != 1 {
		t.Fatalf("run B: %+v %v", pubB, err)
	}
	if got := auditStates(t, audits, day)[part]; got[second.Generation] != "current" || got[first.Generation] != "superseded" {
		t.Fatalf("after run B: %v", got)
	}
	close(hold)
	<-done
	if errA != nil {
		t.Fatal(errA)
	}
	got := auditStates(t, audits, day)[part]
	if got[second.Generation] != "current" || got[first.Generation] != "superseded" {
		t.Fatalf("the audit went backwards: %s is %q, the current generation %s is %q (the overlapped run wrote what it read first)",
			first.Generation, got[first.Generation], second.Generation, got[second.Generation])
	}
	if pubA.Changed != 0 || pubA.Rederived != 1 || pubA.Superseded != 0 {
		t.Fatalf("the overlapped run reports %+v: want nothing changed, its day re-derived once", pubA)
	}
	// Nothing is left to bring up to date.
	if pub, err := tb.PublishAudit(ctx, pswap.NewTable(audits), pswap.AuditPublishOptions{}); err != nil || pub.Changed != 0 {
		t.Fatalf("a later run: %+v %v: want nothing changed", pub, err)
	}
}

// A run that loses its day to other runs in every round (here one commit
// of the day lands between each of its fence reads and its commits) stops
// after MaxAttempts rounds, reports the day Superseded, not Changed, and
// leaves the other runs' audit in place.
func TestPublishAuditSupersededAfterMaxAttempts(t *testing.T) {
	const part, day = "dt=2026-11-28", "day=2026-11-28"
	data, audits := memstore.New(), memstore.New()
	tb := pswap.NewTable(data)
	auditCommit(t, tb, part, "", 3, "a")
	if _, err := tb.PublishAudit(ctx, pswap.NewTable(audits), pswap.AuditPublishOptions{}); err != nil {
		t.Fatal(err)
	}
	// Before each of A's reads of the pointer of the data partition (one
	// per round, after its fence), the partition and its audit move on.
	n := 0
	dataA := storetest.NewFaulty(data, func(c storetest.Call) storetest.Fault {
		if c.Op != "get" || c.Key != layout.PointerKey(part) {
			return storetest.Fault{}
		}
		n++
		auditCommit(t, tb, part, "", 3+n, fmt.Sprint("r", n))
		if _, err := tb.PublishAudit(ctx, pswap.NewTable(audits), pswap.AuditPublishOptions{}); err != nil {
			t.Error(err)
		}
		return storetest.Fault{}
	})
	pub, err := pswap.NewTable(dataA).PublishAudit(ctx, pswap.NewTable(audits), pswap.AuditPublishOptions{MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	if pub.Superseded != 1 || pub.Rederived != 2 || pub.Changed != 0 || pub.Partitions != 0 || n != 3 {
		t.Fatalf("%+v after %d interleaved commits: want the day superseded after 3 rounds", pub, n)
	}
	cur, err := swap.Resolve(ctx, data, part)
	if err != nil {
		t.Fatal(err)
	}
	if got := auditStates(t, audits, day)[part]; got[cur.Manifest.Generation] != "current" {
		t.Fatalf("the audit shows %v, the current generation is %s", got, cur.Manifest.Generation)
	}
}

// Many overlapping runs while a writer commits: once the writer is done
// and every run that started after its last commit has finished, the audit
// shows the partitions' current generations, whatever order the runs'
// commits landed in.
func TestPublishAuditRaces(t *testing.T) {
	data, audits := memstore.New(), memstore.New()
	tb := pswap.NewTable(data)
	parts := []string{"dt=2026-11-27", "dt=2026-11-28"}
	for _, p := range parts {
		auditCommit(t, tb, p, "", 1, "seed")
	}
	var (
		wg      sync.WaitGroup
		stopped atomic.Bool
	)
	const runners = 6
	for range runners {
		wg.Go(func() {
			for i := 0; ; i++ {
				last := stopped.Load()
				if _, err := tb.PublishAudit(ctx, pswap.NewTable(audits), pswap.AuditPublishOptions{Parallel: 2}); err != nil {
					t.Error(err)
					return
				}
				if last {
					return // this run started after the writer's last commit
				}
			}
		})
	}
	for i := range 8 {
		for _, p := range parts {
			auditCommit(t, tb, p, "", 2+i, fmt.Sprint("w", i))
		}
	}
	stopped.Store(true)
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, p := range parts {
		cur, err := swap.Resolve(ctx, data, p)
		if err != nil {
			t.Fatal(err)
		}
		got := auditStates(t, audits, "day="+p[len("dt="):])[p]
		if got[cur.Manifest.Generation] != "current" {
			t.Fatalf("%s: the audit shows %v, the current generation is %s", p, got, cur.Manifest.Generation)
		}
	}
	if pub, err := tb.PublishAudit(ctx, pswap.NewTable(audits), pswap.AuditPublishOptions{}); err != nil || pub.Changed != 0 {
		t.Fatalf("a later run: %+v %v: want nothing changed", pub, err)
	}
}
