package pswap_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// auditRows commits n rows tagged tag to part with runID and returns the
// result.
func auditCommit(t *testing.T, tb *pswap.Table, part, runID string, n int, tag string) pswap.Result {
	t.Helper()
	res, _ := auditAttempt(t, tb, part, runID, n, tag)
	return res
}

// auditAttempt is auditCommit that also returns the attempt's generation
// (Writer.Generation: a no-op's row's).
func auditAttempt(t *testing.T, tb *pswap.Table, part, runID string, n int, tag string) (pswap.Result, string) {
	t.Helper()
	p, err := tb.Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: runID}})
	if err != nil {
		t.Fatal(err)
	}
	if !w.AlreadyCommitted() {
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{ID: int64(i), Name: tag}
		}
		if err := pswap.Write(w, rows...); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res, w.Generation()
}

// auditScenario writes every kind of attempt into tb and returns what it
// expects of the attempts that are not in any history: by generation,
// kind and state.
func auditScenario(t *testing.T, tb *pswap.Table) map[string][2]string {
	t.Helper()
	want := map[string][2]string{}
	// Three days, a retry (a no-op), a backfill, a rollback of the backfill.
	first := auditCommit(t, tb, "dt=2026-11-27", "daily/2026-11-27", 10, "a")
	auditCommit(t, tb, "dt=2026-11-28", "daily/2026-11-28", 20, "b")
	// The retry is a row of its own: a no-op (its attempt record).
	if res, gen := auditAttempt(t, tb, "dt=2026-11-28", "daily/2026-11-28", 20, "b"); res.Outcome != pswap.SameRun {
		t.Fatalf("the retry: %+v, want a same-run no-op", res)
	} else {
		want[gen] = [2]string{"commit", "no-op"}
	}
	auditCommit(t, tb, "dt=2026-11-28", "backfill/2026-11-28", 21, "c")
	p28, _ := tb.Partition("dt=2026-11-28")
	hist, err := p28.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p28.Rollback(ctx, hist[1].Generation, pswap.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// A staged generation and a reservation, never committed.
	p29, _ := tb.Partition("dt=2026-11-29")
	w, err := p29.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pswap.Write(w, row{ID: 1, Name: "s"}); err != nil {
		t.Fatal(err)
	}
	gen, _, err := w.Stage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want[gen] = [2]string{"staged", "staged"}
	rsv, err := p29.Reserve(ctx, pswap.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want[rsv.Generation] = [2]string{"staged", "staged"}
	// An attempt that died after uploading a file (a partition never
	// committed: no pointer), and one that died between its manifest and
	// its swap.
	dead := manifest.NewGenerationID()
	if _, err := tb.Store().Put(ctx, layout.DataPrefix("dt=2026-11-30", dead)+"part-00000.parquet", []byte("partial"), pswapPutNew); err != nil {
		t.Fatal(err)
	}
	want[dead] = [2]string{"staged", "uncommitted"}
	m, err := swap.ReadManifest(ctx, tb.Store(), "dt=2026-11-27", first.Generation)
	if err != nil {
		t.Fatal(err)
	}
	m.Generation, m.Parent, m.RunID = manifest.NewGenerationID(), first.Generation, "late/2026-11-27"
	m.CreatedAt, m.CommittedAt = m.CreatedAt.Add(time.Second), m.CommittedAt.Add(time.Second)
	data, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Store().Put(ctx, layout.ManifestKey("dt=2026-11-27", m.Generation), data, pswapPutNew); err != nil {
		t.Fatal(err)
	}
	want[m.Generation] = [2]string{"commit", "failed"}
	return want
}

// TestAuditAgainstHistory: the audit's committed rows are exactly what
// `history` says of each partition (generation, parent, run id, rows,
// bytes, files, times, rollback, current), its other rows are the attempts
// that never committed, each once, with the state the store tells.
func TestAuditAgainstHistory(t *testing.T) {
	onStores(t, func(t *testing.T, tb *pswap.Table) {
		want := auditScenario(t, tb)
		rows, err := tb.Audit(ctx, pswap.AuditOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkAuditAgainstHistory(t, tb, rows, want)
		if got := slices.IndexFunc(rows, func(r pswap.AuditRow) bool { return r.State == "rolled-back" }); got < 0 {
			t.Fatalf("no rolled-back row: %+v", rows)
		} else if r := rows[got]; r.Partition != "dt=2026-11-28" || r.RunID != "backfill/2026-11-28" {
			t.Errorf("rolled-back row %+v, want the backfill of dt=2026-11-28", r)
		}
		// One partition alone: the same rows as in the whole audit.
		one, err := tb.Audit(ctx, pswap.AuditOptions{Partitions: []string{"dt=2026-11-30"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(one) != 1 || one[0].State != "uncommitted" || *one[0].Files != 1 || *one[0].Bytes != int64(len("partial")) || one[0].Rows != nil {
			t.Errorf("dt=2026-11-30: %+v, want its one uncommitted attempt of 1 file of 7 bytes, rows unknown", one)
		}
		if _, err := tb.Audit(ctx, pswap.AuditOptions{Partitions: []string{"dt=../x"}}); !errorsIsBadInput(err) {
			t.Errorf("a bad key: %v, want ErrBadInput", err)
		}
	})
}

// checkAuditAgainstHistory compares rows with every partition's history,
// and the rows outside the histories with want (generation -> kind, state).
func checkAuditAgainstHistory(t *testing.T, tb *pswap.Table, rows []pswap.AuditRow, want map[string][2]string) {
	t.Helper()
	byGen := map[string]pswap.AuditRow{}
	for _, r := range rows {
		if _, dup := byGen[r.Generation]; dup {
			t.Errorf("generation %s has two rows", r.Generation)
		}
		byGen[r.Generation] = r
	}
	parts, err := tb.Partitions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	inHistory := 0
	us := func(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
	for _, part := range parts {
		p, _ := tb.Partition(part)
		hist, err := p.History(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range hist {
			inHistory++
			r, ok := byGen[e.Generation]
			if !ok {
				t.Errorf("%s: history's generation %s has no audit row", part, e.Generation)
				continue
			}
			kind := "commit"
			if e.RollbackOf != "" {
				kind = "rollback"
			}
			state := "superseded"
			if e.Current {
				state = "current"
			} else if hist[i-1].RollbackOf != "" {
				state = "rolled-back"
			}
			got := fmt.Sprint(r.Partition, r.Parent, r.RunID, *r.Rows, *r.Bytes, *r.Files, *r.CreatedAt, *r.CommittedAt, r.RollbackOf, r.Kind, r.State)
			exp := fmt.Sprint(part, e.Parent, e.RunID, e.Rows, e.Bytes, int64(e.Files), us(e.CreatedAt), us(e.CommittedAt), e.RollbackOf, kind, state)
			if got != exp {
				t.Errorf("%s generation %s:\naudit   %s\nhistory %s", part, e.Generation, got, exp)
			}
			if i > 0 && (r.SupersededBy != hist[i-1].Generation || !r.SupersededAt.Equal(us(hist[i-1].CommittedAt))) {
				t.Errorf("%s generation %s: superseded by %s at %v, history says %s at %v", part, e.Generation,
					r.SupersededBy, r.SupersededAt, hist[i-1].Generation, hist[i-1].CommittedAt)
			}
			delete(byGen, e.Generation)
		}
	}
	for gen, r := range byGen {
		w, ok := want[gen]
		if !ok {
			t.Errorf("an audit row that is neither in a history nor expected: %+v", r)
			continue
		}
		if string(r.Kind) != w[0] || string(r.State) != w[1] || r.CreatedAt == nil || r.Why == "" {
			t.Errorf("generation %s: kind %s state %s (created %v, why %q), want %s %s", gen, r.Kind, r.State, r.CreatedAt, r.Why, w[0], w[1])
		}
		delete(want, gen)
	}
	for gen, w := range want {
		t.Errorf("no audit row for the %s attempt %s", w[1], gen)
	}
	if len(rows) != inHistory+len(byGen)-len(want) && len(want) == 0 {
		t.Logf("%d rows: %d in histories, %d others", len(rows), inHistory, len(byGen))
	}
}

// TestAuditAbandoned: past the grace period an attempt that never
// committed is abandoned, whatever it left.
func TestAuditAbandoned(t *testing.T) {
	tb := pswap.NewTable(memstore.New())
	auditScenario(t, tb)
	rows, err := tb.Audit(ctx, pswap.AuditOptions{GracePeriod: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Kind == "staged" {
			n++
			if r.State != "abandoned" {
				t.Errorf("%s %s: state %s past the grace period, want abandoned", r.Partition, r.Generation, r.State)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d staged rows, want 3", n)
	}
}

var pswapPutNew = store.PutOptions{IfNoneMatch: true}

func errorsIsBadInput(err error) bool { return errors.Is(err, pswap.ErrBadInput) }

// TestAuditTableURL: the audit table sits beside the table; a bucket root
// has no beside.
func TestAuditTableURL(t *testing.T) {
	for in, want := range map[string]string{
		"s3://lake/sales": "s3://lake/sales__audit", "s3://lake/a/sales/": "s3://lake/a/sales__audit",
		"./lake/sales": "./lake/sales__audit", "/data/sales": "/data/sales__audit",
		"file:///data/sales": "file:///data/sales__audit",
		"s3://lake":          "", "s3://lake/": "", ".": "", "": "",
		// Every store's bucket or container root is no place beside
		// (gs:// and az:// got gs://bucket__audit before).
		"gs://lake/sales": "gs://lake/sales__audit", "gs://lake": "", "gs://lake/": "",
		"az://lake/sales": "az://lake/sales__audit", "az://lake": "",
		"abfss://lake@acct.dfs.core.windows.net/sales": "abfss://lake@acct.dfs.core.windows.net/sales__audit",
		"abfss://lake@acct.dfs.core.windows.net":       "",
	} {
		got, err := pswap.AuditTableURL(in)
		if got != want || (want == "") != errors.Is(err, pswap.ErrBadInput) {
			t.Errorf("AuditTableURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestPublishAudit: the audit table gets one partition per day, a second
// publish changes nothing, a new commit changes its day only, and a day
// whose attempts are gone becomes empty.
func TestPublishAudit(t *testing.T) {
	tb, dst := pswap.NewTable(memstore.New()), pswap.NewTable(memstore.New())
	auditScenario(t, tb)
	pub, err := tb.PublishAudit(ctx, dst, pswap.AuditPublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pub.Partitions != 4 || pub.Changed != 4 || pub.Rows != 9 || pub.Publish.MetadataLocation == "" {
		t.Fatalf("first publish: %+v, want 9 rows in 4 days, all changed", pub)
	}
	if pub, err = tb.PublishAudit(ctx, dst, pswap.AuditPublishOptions{}); err != nil || pub.Changed != 0 {
		t.Fatalf("second publish: %+v, %v: want nothing changed", pub, err)
	}
	auditCommit(t, tb, "dt=2026-11-29", "daily/2026-11-29", 5, "d")
	if pub, err = tb.PublishAudit(ctx, dst, pswap.AuditPublishOptions{}); err != nil || pub.Changed != 1 || pub.Rows != 10 {
		t.Fatalf("after a commit: %+v, %v: want 1 day changed, 10 rows", pub, err)
	}
	// gc removed the dead attempt of dt=2026-11-30, a day with nothing else.
	for _, prefix := range layout.MetaPrefixes("dt=2026-11-30") {
		for a, err := range tb.Store().List(ctx, prefix) {
			if err != nil {
				t.Fatal(err)
			}
			if err := tb.Store().Delete(ctx, a.Key); err != nil {
				t.Fatal(err)
			}
		}
	}
	if pub, err = tb.PublishAudit(ctx, dst, pswap.AuditPublishOptions{}); err != nil || pub.Emptied != 1 || pub.Partitions != 3 {
		t.Fatalf("after gc: %+v, %v: want 1 day emptied, 3 left", pub, err)
	}
	day, _ := dst.Partition("day=2026-11-30")
	if cur, err := day.Current(ctx); err != nil || cur.Manifest.Rows != 0 {
		t.Fatalf("the emptied day: %v, %v", cur, err)
	}
}

// FuzzAuditTableURL: any URL gives a sibling ending in the suffix, or a
// bad-input error; never a panic, never the table itself.
func FuzzAuditTableURL(f *testing.F) {
	for _, s := range []string{"s3://lake/sales", "./lake/sales", "s3://lake", "file:///x", "", ".", "s3:/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := pswap.AuditTableURL(in)
		if err != nil {
			if !errors.Is(err, pswap.ErrBadInput) {
				t.Fatalf("%q: %v is not ErrBadInput", in, err)
			}
			return
		}
		if !strings.HasSuffix(got, pswap.AuditSuffix) || got == in {
			t.Fatalf("%q -> %q", in, got)
		}
	})
}
