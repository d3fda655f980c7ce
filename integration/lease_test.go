package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// The publish lease (docs/design.md, "The publish lease") tested with real
// processes: bursts of `pswap commit` processes on MinIO, and a real
// holder killed with SIGKILL while it holds the lease.

// leaseCommitDoc is what these tests read of commit's --json document.
type leaseCommitDoc struct {
	Partition        string `json:"partition"`
	Generation       string `json:"generation"`
	Outcome          string `json:"outcome"`
	Rows             int64  `json:"rows"`
	Seq              int64  `json:"seq"`
	Published        bool   `json:"published"`
	MetadataLocation string `json:"metadata_location"`
	Views            []struct {
		View         string `json:"view"`
		Published    bool   `json:"published"`
		Version      *int64 `json:"version"`
		State        string `json:"state"`
		PendingAfter *int64 `json:"pending_after"`
		Error        string `json:"error"`
	} `json:"views"`
}

// leaseOutcome classifies a commit's Iceberg view: "published" (in the
// view on return, a version named), "pending" (a live holder's next
// version holds it, pending_after named), or the reason it is neither.
func (d leaseCommitDoc) leaseOutcome() string {
	if len(d.Views) != 1 || d.Views[0].View != "iceberg" {
		return fmt.Sprintf("views %+v: want the Iceberg view alone", d.Views)
	}
	v := d.Views[0]
	switch {
	case v.Error != "":
		return "error: " + v.Error
	case d.Published && v.Published && v.State == "" && v.Version != nil && *v.Version > 0 && d.MetadataLocation != "":
		return "published"
	case !d.Published && !v.Published && v.State == "pending" && v.PendingAfter != nil && *v.PendingAfter >= 0:
		return "pending"
	}
	return fmt.Sprintf("neither published nor pending: published=%v %+v", d.Published, v)
}

// parseLeaseCommit reads a finished commit process's --json document.
func parseLeaseCommit(t testing.TB, r cliResult) leaseCommitDoc {
	t.Helper()
	var d leaseCommitDoc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("commit --json printed %q: %v (stderr %q)", r.stdout, err, r.stderr)
	}
	return d
}

// leaseCommitted is what one commit process put in a partition: the rows
// of writeCSVInput(n, note).
type leaseCommitted struct {
	gen  string
	n    int
	note string
}

// leaseWant is the view every partition must show: its latest commit's
// rows, exactly.
type leaseWant map[string]leaseCommitted

// viewPart is what an Iceberg reader read of one partition: its rows, the
// sums of the id and amount columns, and the rows per note value.
type viewPart struct {
	rows      int64
	idSum     int64
	amountSum float64
	notes     map[string]int64
}

// latestIcebergVersion finds the table's newest vN.metadata.json by
// listing the metadata folder (not through pswap's reader or the hint).
func latestIcebergVersion(t testing.TB, st store.Store) int {
	t.Helper()
	latest := 0
	for a, err := range st.List(ctx, lakehouse.MetadataPrefix) {
		if err != nil {
			t.Fatalf("list the metadata: %v", err)
		}
		name := strings.TrimPrefix(a.Key, lakehouse.MetadataPrefix)
		var v int
		if _, err := fmt.Sscanf(name, "v%d.metadata.json", &v); err == nil && name == fmt.Sprintf("v%d.metadata.json", v) {
			latest = max(latest, v)
		}
	}
	return latest
}

// readIcebergView scans the table's newest Iceberg version with iceberg-go
// (a reader pswap did not write; pswap's store only serves it the bytes)
// and returns what it read per partition, keyed "dt=<date>".
func readIcebergView(t testing.TB, st store.Store) (int, map[string]*viewPart) {
	t.Helper()
	v := latestIcebergVersion(t, st)
	if v == 0 {
		t.Fatalf("no Iceberg version in %s", st.URI(lakehouse.MetadataPrefix))
	}
	loc := st.URI(lakehouse.MetadataKey(v))
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"pswap", "sales"}, loc,
		func(context.Context) (iceio.IO, error) { return lakehouse.IO(ctx, st), nil }, nil)
	if err != nil {
		t.Fatalf("iceberg-go: open %s: %v", loc, err)
	}
	scan := tbl.Scan()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		t.Fatalf("iceberg-go: plan v%d: %v", v, err)
	}
	spec := tbl.Spec()
	out := map[string]*viewPart{}
	for _, task := range tasks {
		var keys []string
		for _, f := range spec.Fields() {
			pv := task.File.Partition()[f.FieldID]
			if d, ok := pv.(iceberg.Date); ok {
				pv = time.UnixMilli(0).UTC().AddDate(0, 0, int(d)).Format(time.DateOnly)
			}
			keys = append(keys, fmt.Sprintf("%s=%v", f.Name, pv))
		}
		key := strings.Join(keys, "/")
		p := out[key]
		if p == nil {
			p = &viewPart{notes: map[string]int64{}}
			out[key] = p
		}
		_, recs, err := scan.ReadTasks(ctx, []table.FileScanTask{task})
		if err != nil {
			t.Fatalf("iceberg-go: read %s: %v", task.File.FilePath(), err)
		}
		for rec, err := range recs {
			if err != nil {
				t.Fatalf("iceberg-go: read %s: %v", task.File.FilePath(), err)
			}
			p.rows += rec.NumRows()
			p.idSum += int64(math.Round(columnSum(t, rec, "id")))
			p.amountSum += columnSum(t, rec, "amount")
			idx := rec.Schema().FieldIndices("note")
			if len(idx) == 0 {
				t.Fatalf("iceberg-go: no note column in %s", task.File.FilePath())
			}
			notes, ok := rec.Column(idx[0]).(*array.String)
			if !ok {
				t.Fatalf("iceberg-go: note is %s", rec.Column(idx[0]).DataType())
			}
			for i := range notes.Len() {
				p.notes[notes.Value(i)]++
			}
			rec.Release()
		}
	}
	return v, out
}

// columnSum adds up a numeric column of a record.
func columnSum(t testing.TB, rec arrow.RecordBatch, name string) float64 {
	t.Helper()
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		t.Fatalf("iceberg-go: no column %s", name)
	}
	var s float64
	switch c := rec.Column(idx[0]).(type) {
	case *array.Int64:
		for i := range c.Len() {
			s += float64(c.Value(i))
		}
	case *array.Int32:
		for i := range c.Len() {
			s += float64(c.Value(i))
		}
	case *array.Float64:
		for i := range c.Len() {
			s += c.Value(i)
		}
	case *array.Float32:
		for i := range c.Len() {
			s += float64(c.Value(i))
		}
	default:
		t.Fatalf("iceberg-go: column %s is %s", name, c.DataType())
	}
	return s
}

// checkView asserts that the newest Iceberg version holds exactly want:
// every partition with its latest commit's rows (count, both sums, every
// row's note), and no other partition or row: nothing lost, nothing
// doubled, nothing stale.
func checkView(t testing.TB, st store.Store, want leaseWant) int {
	t.Helper()
	v, got := readIcebergView(t, st)
	for part, c := range want {
		p := got[part]
		n := int64(c.n)
		wantID, wantAmount := n*(n-1)/2, float64(n*(n-1))/8
		switch {
		case p == nil:
			t.Errorf("v%d: partition %s missing from the view (want %d rows of %s)", v, part, n, c.note)
		case p.rows != n || p.idSum != wantID || math.Abs(p.amountSum-wantAmount) > 1e-6 || p.notes[c.note] != n:
			t.Errorf("v%d: partition %s reads %d rows (id sum %d, amount sum %.2f, notes %v); want %d rows of %s (id sum %d, amount sum %.2f)",
				v, part, p.rows, p.idSum, p.amountSum, p.notes, n, c.note, wantID, wantAmount)
		}
	}
	for part := range got {
		if _, ok := want[part]; !ok {
			t.Errorf("v%d: partition %s in the view, committed by nobody", v, part)
		}
	}
	return v
}

// checkPointers asserts that every partition's pointer names the
// generation its latest commit reported, with its rows.
func checkPointers(t testing.TB, st store.Store, want leaseWant) {
	t.Helper()
	for part, c := range want {
		s, err := swap.Resolve(ctx, st, part)
		switch {
		case err != nil:
			t.Errorf("%s: %v", part, err)
		case s.Pointer.Generation != c.gen || s.Manifest.Rows != int64(c.n):
			t.Errorf("%s: pointer names %s of %d rows, the commit reported %s of %d", part, s.Pointer.Generation, s.Manifest.Rows, c.gen, c.n)
		}
	}
}

// leaseLeft lists what the lease leaves in the store: the lease object
// (if any) and the fold markers.
func leaseLeft(t testing.TB, st store.Store) (lease bool, markers []string) {
	t.Helper()
	_, err := st.Stat(ctx, layout.LeaseKey)
	switch {
	case err == nil:
		lease = true
	case !errors.Is(err, store.ErrNotFound):
		t.Fatalf("stat the lease: %v", err)
	}
	for a, err := range st.List(ctx, layout.FoldPrefix) {
		if err != nil {
			t.Fatalf("list the fold markers: %v", err)
		}
		markers = append(markers, a.Key)
	}
	return lease, markers
}

// viewsState runs `pswap views --json` and returns whether the Iceberg
// view is current, and the partitions it lags.
func (e *tableEnv) viewsState(t testing.TB) (bool, []string) {
	t.Helper()
	r := e.runCLI(t, "views", "--table", e.url, "--json")
	if r.code != 0 {
		t.Fatalf("views: exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Current bool `json:"current"`
		Views   []struct {
			View    string   `json:"view"`
			Current bool     `json:"current"`
			Behind  []string `json:"behind"`
			Error   string   `json:"error"`
		} `json:"views"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("views --json printed %q: %v", r.stdout, err)
	}
	if len(doc.Views) != 1 || doc.Views[0].View != "iceberg" || doc.Views[0].Error != "" || doc.Views[0].Current != doc.Current {
		t.Fatalf("views --json: %s", r.stdout)
	}
	return doc.Current, doc.Views[0].Behind
}

// leaseMinio is a fresh table on MinIO, or a skip.
func leaseMinio(t *testing.T) *tableEnv {
	t.Helper()
	if !testenv.S3Enabled() {
		t.Skip("MinIO not configured (" + testenv.EnvS3 + "); scripts/test.sh starts one")
	}
	return newMinioEnv(t)
}

// TestLeaseBurstProcesses starts many `pswap commit` processes of
// distinct partitions of one table on MinIO at once, with the publish on
// (the default), in rounds (the later ones replace every partition). Each
// process reports its Iceberg view published (a version named) or pending
// (pending_after named); the pointers name what each reported; and once
// the last process of a round has exited, with no `pswap publish` and no
// wait, the newest Iceberg version read by iceberg-go holds exactly every
// partition's latest rows (count, sums, notes), no lease and no fold
// marker is left, and `pswap views` says current: the holder of the lease
// folded every pending commit before it exited.
func TestLeaseBurstProcesses(t *testing.T) {
	t.Parallel()
	e := leaseMinio(t)
	procs, rounds := scale(16, 32), scale(2, 4)
	dir := t.TempDir()
	want := leaseWant{}
	var published, pending int
	for round := range rounds {
		var cmds []*proc
		var parts []string
		var runs []leaseCommitted
		// Prepare every process first, then start them back to back.
		type prepared struct {
			part string
			c    leaseCommitted
			args []string
		}
		var ps []prepared
		for i := range procs {
			part := fmt.Sprintf("dt=2026-12-%02d", i+1)
			note := fmt.Sprintf("r%d-p%02d", round, i)
			n := 3 + 2*i + round
			ps = append(ps, prepared{part, leaseCommitted{n: n, note: note}, []string{"commit", "--table", e.url, "--partition", part,
				"--run-id", note, "--json", writeCSVInput(t, dir, note+".csv", n, note)}})
		}
		execs := make([]*exec.Cmd, len(ps))
		for i, p := range ps {
			execs[i] = e.cli(t, p.args...)
		}
		for i, p := range ps {
			cmds = append(cmds, startProc(t, execs[i]))
			parts = append(parts, p.part)
			runs = append(runs, p.c)
		}
		outcomes := map[string]int{}
		for i, p := range cmds {
			r := p.wait()
			totals.races.Add(1)
			if r.code != 0 {
				t.Fatalf("round %d, %s: exit %d: %s", round, parts[i], r.code, r.stderr)
			}
			d := parseLeaseCommit(t, r)
			if d.Outcome != string(swap.Committed) || d.Rows != int64(runs[i].n) || d.Partition != parts[i] {
				t.Errorf("round %d, %s: %s", round, parts[i], r.stdout)
			}
			o := d.leaseOutcome()
			outcomes[o]++
			switch o {
			case "published":
				published++
			case "pending":
				pending++
			default:
				t.Errorf("round %d, %s: %s (stderr %q)", round, parts[i], o, r.stderr)
			}
			c := runs[i]
			c.gen = d.Generation
			want[parts[i]] = c
		}
		// The burst is over: nothing may be left for a later publish.
		if lease, markers := leaseLeft(t, e.st); lease || len(markers) > 0 {
			t.Errorf("round %d: after the last process exited: lease left %v, fold markers left %v", round, lease, markers)
		}
		checkPointers(t, e.st, want)
		v := checkView(t, e.st, want)
		if cur, behind := e.viewsState(t); !cur {
			t.Errorf("round %d: views says behind on %v after the burst", round, behind)
		}
		t.Logf("round %d: %d processes: %v; Iceberg v%d read by iceberg-go", round, procs, outcomes, v)
	}
	e.check(t, checkOpts{expect: slices.Sorted(maps.Keys(want)), duck: true})
	t.Logf("minio: %d rounds of %d commit processes at once: %d published in line, %d pending (folded by the lease's holder)",
		rounds, procs, published, pending)
}

// TestLeaseKilledHolder makes a real `pswap commit` process hold the
// publish lease on MinIO and stalls it there (a proxy delays every request
// it sends after its PUT of the lease), starts writers that return pending
// behind it, and kills the holder with SIGKILL while it holds the lease.
// Then, as docs/design.md states: the killed holder's lease stays live
// for its length, so a commit meanwhile is pending too; `pswap views` shows
// the view behind on exactly the pending partitions, and iceberg-go still
// reads the view as it was; and the pending commits are in the view at
// `pswap publish` (subtest publish) or at the next commit after the lease
// expires (subtest expiry: it waits out the lease, about 20 s, while the
// rest of the suite runs), with nothing lost or doubled.
func TestLeaseKilledHolder(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"publish", "expiry"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			leaseKilledHolder(t, name == "expiry")
		})
	}
}

func leaseKilledHolder(t *testing.T, expiry bool) {
	e := leaseMinio(t)
	dir := t.TempDir()
	want := leaseWant{}
	// direct runs a commit process that talks to MinIO itself, not
	// through the proxy that stalls the holder (exec.Cmd keeps the last
	// value of a variable given twice).
	direct := func(args ...string) *exec.Cmd {
		cmd := e.cli(t, args...)
		cmd.Env = append(cmd.Env, "AWS_ENDPOINT_URL="+os.Getenv("AWS_ENDPOINT_URL"))
		return cmd
	}
	// --lease-first: alone, a commit publishes optimistically and never
	// takes the lease; this test stalls a holder of the lease with writers
	// pending behind it, as an orchestrator's fan-out that passes it does.
	// (Without it, the holder of a burst that never wrote a version that
	// carried another commit leaves no sign for a lone commit after the
	// expiry: README, "The bound".)
	commitArgs := func(part string, n int, note string) []string {
		return []string{"commit", "--table", e.url, "--partition", part, "--run-id", note, "--json", "--lease-first",
			writeCSVInput(t, dir, note+".csv", n, note)}
	}
	commitDirect := func(part string, n int, note string) (leaseCommitDoc, cliResult) {
		r := startProc(t, direct(commitArgs(part, n, note)...)).wait()
		if r.code != 0 {
			t.Fatalf("commit %s: exit %d: %s", part, r.code, r.stderr)
		}
		d := parseLeaseCommit(t, r)
		want[part] = leaseCommitted{gen: d.Generation, n: n, note: note}
		return d, r
	}

	// Two partitions published in line: the view the kill must not lose.
	for i, part := range []string{"dt=2026-11-01", "dt=2026-11-02"} {
		if d, r := commitDirect(part, 5+i, fmt.Sprintf("seed-%d", i)); d.leaseOutcome() != "published" {
			t.Fatalf("seed commit %s: %s: %s", part, d.leaseOutcome(), r.stdout)
		}
	}
	before := maps.Clone(want)

	// The holder: every request it sends after its PUT of the lease waits
	// in the proxy (until the client goes away).
	var held atomic.Bool
	e.proxy.SetDelay(10 * time.Minute)
	e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if held.Load() {
			return faultproxy.Delay
		}
		if r.IsPut() && strings.HasSuffix(r.Path, "/"+layout.LeaseKey) {
			held.Store(true)
		}
		return faultproxy.Pass
	})
	const holderPart, holderRows, holderNote = "dt=2026-11-03", 9, "holder"
	holder := startProc(t, e.cli(t, commitArgs(holderPart, holderRows, holderNote)...))
	exited := make(chan cliResult, 1)
	go func() { exited <- holder.wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := e.st.Stat(ctx, layout.LeaseKey); err == nil {
			break
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		select {
		case r := <-exited:
			t.Fatalf("the holder exited (%d) before it held the lease: %s %s", r.code, r.stdout, r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			holder.kill()
			t.Fatal("no lease within 2 minutes")
		}
	}
	data, leaseAttrs, err := store.ReadAll(ctx, e.st, layout.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	var lease struct {
		Holder  string `json:"holder"`
		Version int64  `json:"version"`
		Seconds int    `json:"seconds"`
	}
	if err := json.Unmarshal(data, &lease); err != nil || lease.Holder == "" || lease.Seconds <= 0 {
		t.Fatalf("lease %q: %v", data, err)
	}
	// tooSlow skips the test when the machine took longer than the
	// lease's length to run the writers behind it: they found it expired
	// and rightly led, which proves nothing either way.
	tooSlow := func(what string) {
		t.Helper()
		now, err := store.Now(ctx, e.st)
		if err == nil && now.Sub(leaseAttrs.ModTime) >= time.Duration(lease.Seconds-1)*time.Second {
			t.Skipf("%s ran %s after the lease was written: it had expired (a machine too loaded for this test)", what, now.Sub(leaseAttrs.ModTime))
		}
	}

	// Writers behind the live holder, started together: each returns
	// pending, naming the version the holder had written.
	pendingParts := []string{"dt=2026-11-01", "dt=2026-11-04", "dt=2026-11-05", "dt=2026-11-06"} // the first replaces a published one
	var ps []*proc
	for i, part := range pendingParts {
		ps = append(ps, startProc(t, direct(commitArgs(part, 11+i, fmt.Sprintf("pending-%d", i))...)))
	}
	for i, p := range ps {
		r := p.wait()
		if r.code != 0 {
			t.Fatalf("pending writer %s: exit %d: %s", pendingParts[i], r.code, r.stderr)
		}
		d := parseLeaseCommit(t, r)
		if o := d.leaseOutcome(); o != "pending" || *d.Views[0].PendingAfter != lease.Version {
			tooSlow("writer " + pendingParts[i])
			t.Errorf("writer %s behind the live holder: %s, pending_after %v, want pending after v%d: %s", pendingParts[i], o, d.Views[0].PendingAfter, lease.Version, r.stdout)
		}
		want[pendingParts[i]] = leaseCommitted{gen: d.Generation, n: 11 + i, note: fmt.Sprintf("pending-%d", i)}
	}
	select {
	case r := <-exited:
		t.Fatalf("the holder exited (%d) before the kill: %s %s", r.code, r.stdout, r.stderr)
	default:
	}
	holder.kill()
	totals.kills.Add(1)
	if r := <-exited; r.code != -1 {
		t.Fatalf("the holder was not killed: exit %d: %s", r.code, r.stderr)
	}
	e.proxy.SetRule(nil) // the other processes of the test go through it too

	// The holder committed its pointer before it took the lease.
	hs, err := swap.Resolve(ctx, e.st, holderPart)
	if err != nil {
		t.Fatalf("the killed holder's partition: %v", err)
	}
	want[holderPart] = leaseCommitted{gen: hs.Pointer.Generation, n: holderRows, note: holderNote}
	totals.killsLanded.Add(1)
	checkPointers(t, e.st, want)

	// The killed holder's lease is still there, unchanged, with a marker
	// for every pending commit and its own; a commit meanwhile is pending
	// behind it.
	if again, _, err := store.ReadAll(ctx, e.st, layout.LeaseKey); err != nil || string(again) != string(data) {
		t.Fatalf("after the kill the lease reads %q, %v; want the holder's %q", again, err, data)
	}
	d, r := commitDirect("dt=2026-11-07", 17, "after-kill")
	if d.leaseOutcome() != "pending" {
		tooSlow("the commit after the kill")
		t.Errorf("a commit behind the killed holder's live lease: %s: %s", d.leaseOutcome(), r.stdout)
	}
	lagging := []string{"dt=2026-11-01", "dt=2026-11-03", "dt=2026-11-04", "dt=2026-11-05", "dt=2026-11-06", "dt=2026-11-07"}
	// The holder announced its own commit too (--lease-first: its
	// marker, then the lease).
	if _, markers := leaseLeft(t, e.st); len(markers) != len(lagging) {
		t.Errorf("fold markers %v: want one per pending commit and the holder's (%d)", markers, len(lagging))
	}
	// Meanwhile: views says behind, on the partitions the view lags, and
	// the view is still exactly what it was.
	if cur, behind := e.viewsState(t); cur || !slices.Equal(slices.Sorted(slices.Values(behind)), lagging) {
		t.Errorf("views after the kill: current=%v behind %v, want behind %v", cur, behind, lagging)
	}
	checkView(t, e.st, before)

	if !expiry {
		// `pswap publish` folds them at once.
		if r := startProc(t, direct("publish", "--table", e.url, "--json")).wait(); r.code != 0 {
			t.Fatalf("publish: exit %d: %s", r.code, r.stderr)
		}
		if _, markers := leaseLeft(t, e.st); len(markers) > 0 {
			t.Errorf("fold markers left after publish: %v", markers)
		}
	} else {
		// The next commit after the lease expires (its length after the
		// holder's write of it, on the store's clock) takes it over and
		// folds them.
		a, err := e.st.Stat(ctx, layout.LeaseKey)
		if err != nil {
			t.Fatal(err)
		}
		until := a.ModTime.Add(time.Duration(lease.Seconds)*time.Second + time.Second)
		for {
			now, err := store.Now(ctx, e.st)
			if err != nil {
				t.Fatal(err)
			}
			if now.After(until) {
				break
			}
			time.Sleep(min(until.Sub(now), time.Second))
		}
		if cur, behind := e.viewsState(t); cur || len(behind) != len(lagging) {
			t.Errorf("views once the lease expired, before any write: current=%v behind %v, want behind %v", cur, behind, lagging)
		}
		d, r := commitDirect("dt=2026-11-08", 19, "next")
		if d.leaseOutcome() != "published" {
			t.Errorf("the next commit after the lease expired: %s: %s", d.leaseOutcome(), r.stdout)
		}
		if lease, markers := leaseLeft(t, e.st); lease || len(markers) > 0 {
			t.Errorf("after the next commit: lease left %v, fold markers left %v", lease, markers)
		}
		// Every pending commit is in the view now. The killed holder's
		// own commit had no marker (a holder that created the lease never
		// writes one) and its lease does not name it, so the next commit
		// cannot fold it: it is in the view at `pswap publish`, or at
		// its partition's next commit, as any commit whose writer died
		// between its pointer swap and its publish; `pswap views` names it
		// meanwhile.
		_, got := readIcebergView(t, e.st)
		folded := maps.Clone(want)
		if got[holderPart] == nil {
			delete(folded, holderPart)
			t.Logf("the killed holder's own commit (%s) is not in the view after the next commit: no marker named it", holderPart)
		}
		checkView(t, e.st, folded)
		cur, behind := e.viewsState(t)
		if len(folded) == len(want) && !cur || len(folded) < len(want) && !slices.Equal(behind, []string{holderPart}) {
			t.Errorf("views after the next commit: current=%v behind %v; the view holds %d of %d partitions", cur, behind, len(folded), len(want))
		}
		if r := startProc(t, direct("publish", "--table", e.url, "--json")).wait(); r.code != 0 {
			t.Fatalf("publish: exit %d: %s", r.code, r.stderr)
		}
	}
	checkPointers(t, e.st, want)
	v := checkView(t, e.st, want)
	if cur, behind := e.viewsState(t); !cur {
		t.Errorf("views behind on %v once the pending commits were folded", behind)
	}
	how := "pswap publish folded them"
	if expiry {
		how = "the next commit after the lease expired folded the pending ones, pswap publish the rest"
	}
	t.Logf("minio: holder killed while holding the lease (it named v%d) with %d commits behind it: views behind meanwhile; %s: v%d holds every commit exactly",
		lease.Version, len(lagging), how, v)
}
