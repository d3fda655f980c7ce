package lakehouse_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// coldAndHot splits a snapshot's manifest names into the cold ones
// (pswap-c..., pswap-m... before segments) and the others.
func coldAndHot(names []string) (cold, hot []string) {
	for _, n := range names {
		if strings.HasPrefix(n, "pswap-c") || strings.HasPrefix(n, "pswap-m") {
			cold = append(cold, n)
		} else {
			hot = append(hot, n)
		}
	}
	return cold, hot
}

// A reconcile of a table of four months of daily partitions writes two
// manifests, the newest month's and a cold one of the three before it,
// whatever the number of partitions; a commit writes only the manifest
// that holds its partition (hot or cold), and the first commit of a new
// month merges the month before into the cold manifest: still two.
func TestColdManifests(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	for i := range 112 {
		commit(t, mem, fmt.Sprintf("dt=2026-%02d-%02d", i/28+1, i%28+1), 1+i%3, "x", swap.Options{})
	}
	r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
	if err != nil || r.Partitions != 112 {
		t.Fatalf("publish: %+v, %v", r, err)
	}
	names := manifestNames(t, mem)
	cold, hot := coldAndHot(names)
	if len(cold) != 1 || len(hot) != 1 || !strings.Contains(cold[0], "-202603-84-") || !strings.Contains(hot[0], "-28-") {
		t.Fatalf("manifests %v: want a cold one of 84 partitions up to 2026-03, and April's of 28", names)
	}
	if got := checkReaders(t, mem); len(got) != 112 {
		t.Fatalf("readers see %d partitions", len(got))
	}

	// A commit of the hot month rewrites its manifest only.
	publish(t, mem, commit(t, mem, "dt=2026-04-10", 9, "y", swap.Options{OnConflict: swap.Overwrite}))
	c2, h2 := coldAndHot(manifestNames(t, mem))
	if !slices.Equal(c2, cold) || len(h2) != 1 || h2[0] == hot[0] {
		t.Fatalf("after a hot commit: cold %v hot %v, before cold %v hot %v", c2, h2, cold, hot)
	}

	// A backfill of a cold partition rewrites the cold manifest only, and
	// records the replaced files there as deleted.
	old := commitResult(t, mem, "dt=2026-02-03")
	publish(t, mem, commit(t, mem, "dt=2026-02-03", 7, "z", swap.Options{OnConflict: swap.Overwrite}))
	c3, h3 := coldAndHot(manifestNames(t, mem))
	if len(c3) != 1 || c3[0] == cold[0] || !strings.Contains(c3[0], "-202603-84-") || !slices.Equal(h3, h2) {
		t.Fatalf("after a cold commit: cold %v hot %v, before cold %v hot %v", c3, h3, c2, h2)
	}
	tbl, es := currentEntries(t, mem)
	cur := tbl.CurrentSnapshot().SnapshotID
	deleted := pathsWith(es, func(e entry) bool { return e.status == iceberg.EntryStatusDELETED && e.added == cur })
	if !slices.Equal(deleted, dataPaths(t, mem, old)) {
		t.Fatalf("deleted entries %v, want the replaced generation's files %v", deleted, dataPaths(t, mem, old))
	}

	// The first commit of May merges April into the cold manifest.
	publish(t, mem, commit(t, mem, "dt=2026-05-01", 4, "n", swap.Options{}))
	c4, h4 := coldAndHot(manifestNames(t, mem))
	if len(c4) != 1 || !strings.Contains(c4[0], "-202604-112-") || len(h4) != 1 || !strings.Contains(h4[0], "-1-") {
		t.Fatalf("after May's first commit: cold %v hot %v, want the cold one up to April and May's", c4, h4)
	}
	// A partition of a month between is cold; one of a new old month too.
	publish(t, mem, commit(t, mem, "dt=2025-12-31", 2, "o", swap.Options{}))
	c5, h5 := coldAndHot(manifestNames(t, mem))
	if len(c5) != 1 || !strings.Contains(c5[0], "-202604-113-") || !slices.Equal(h5, h4) {
		t.Fatalf("after a commit of an old month: cold %v hot %v", c5, h5)
	}
	got := checkReaders(t, mem)
	if len(got) != 114 || got["dt=2026-04-10"] != 9 || got["dt=2026-02-03"] != 7 || got["dt=2026-05-01"] != 4 || got["dt=2025-12-31"] != 2 {
		t.Fatalf("readers see %d partitions: %v", len(got), got)
	}
	// A reconcile finds everything up to date.
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Changed || r.Partitions != 114 {
		t.Fatalf("reconcile of an up-to-date table: %+v, %v", r, err)
	}
}

// A table published in monthly groups (before cold manifests) merges them
// at its first commit of a new month: every group but the newest goes
// into the cold manifest.
func TestGroupsMergeIntoCold(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	for i := range 3 {
		commit(t, mem, fmt.Sprintf("dt=2026-%02d-01", i+1), 2, "x", swap.Options{})
		publish(t, mem, commitResult(t, mem, fmt.Sprintf("dt=2026-%02d-01", i+1)))
	}
	// Publishing one month at a time in order: each new month merged the
	// one before.
	cold, hot := coldAndHot(manifestNames(t, mem))
	if len(cold) != 1 || len(hot) != 1 || !strings.Contains(cold[0], "-202602-2-") {
		t.Fatalf("cold %v hot %v", cold, hot)
	}
	if got := checkReaders(t, mem); len(got) != 3 {
		t.Fatalf("readers see %v", got)
	}
}

// The requests of a commit's publish do not grow with the table: a hot
// commit and a cold one cost the 9 of TestRequestsPerPublish on a table
// of 2 and of 14 months; the first commit of a new month (a new
// partition: no replaced files) reads the hint, the version, its list, the
// pointer, the hot group's manifest and the cold one, and writes the new
// month's manifest, the cold one, the list, the version and the hint: 11.
func TestRequestsPerPublishCold(t *testing.T) {
	type counts struct{ hot, cold, month int }
	var all []counts
	for _, months := range []int{2, 14} {
		mem := memstore.New(memstore.Options{})
		for i := range months * 3 {
			commit(t, mem, fmt.Sprintf("dt=%04d-%02d-%02d", 2025+i/36, i/3%12+1, i%3+1), 2, "x", swap.Options{})
		}
		if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
			t.Fatal(err)
		}
		var c counts
		for i, part := range []string{fmt.Sprintf("dt=%04d-%02d-02", 2025+(months-1)/12, (months-1)%12+1), "dt=2025-01-01", "dt=2027-12-01"} {
			res := commit(t, mem, part, 5, "y", swap.Options{OnConflict: swap.Overwrite})
			m, err := swap.ReadManifest(ctx, mem, res.Partition, res.Generation)
			if err != nil {
				t.Fatal(err)
			}
			st := storetest.NewCounting(mem)
			r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: m}, lakehouse.Options{WaitForView: true})
			if err != nil || !r.Changed {
				t.Fatalf("publish %s: %+v, %v", part, r, err)
			}
			t.Logf("%d months, %s: %d requests %v", months, part, st.Total(), st.Counts())
			*[]*int{&c.hot, &c.cold, &c.month}[i] = st.Total()
			if n := len(manifestNames(t, mem)); n != 2 {
				t.Fatalf("%d manifests after the publish of %s, want 2", n, part)
			}
		}
		if got := checkReaders(t, mem); len(got) != months*3+1 {
			t.Fatalf("readers see %d partitions", len(got))
		}
		all = append(all, c)
	}
	if want := (counts{9, 9, 11}); all[0] != want || all[1] != want {
		t.Fatalf("requests per publish (hot, cold, new month) %v, want %v at both sizes", all, want)
	}
}

// A table published before cold manifests (one manifest per month) is
// merged by `pswap publish` even when every partition is up to date: one
// version, the newest month's manifest and the cold one; the next
// reconcile has nothing to do.
func TestReconcileMergesAnUpToDateTable(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	for i := range 5 {
		commit(t, mem, fmt.Sprintf("dt=2026-%02d-01", i+1), 2, "x", swap.Options{})
	}
	restore := lakehouse.KeepHot(100)
	r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
	restore()
	if err != nil || len(manifestNames(t, mem)) != 5 {
		t.Fatalf("the table before cold manifests: %+v, %v, manifests %v", r, err, manifestNames(t, mem))
	}
	r, err = lakehouse.Publish(ctx, mem, lakehouse.Options{})
	if err != nil || !r.Changed || r.Version != 2 || len(r.Repairs) != 1 || r.Partitions != 5 {
		t.Fatalf("reconcile: %+v, %v, want one version that merges", r, err)
	}
	cold, hot := coldAndHot(manifestNames(t, mem))
	if len(cold) != 1 || !strings.Contains(cold[0], "-202604-4-") || len(hot) != 1 {
		t.Fatalf("after the merge: cold %v hot %v", cold, hot)
	}
	if got := checkReaders(t, mem); len(got) != 5 || got["dt=2026-03-01"] != 2 {
		t.Fatalf("readers see %v", got)
	}
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("reconcile after the merge: %+v, %v, want nothing to do", r, err)
	}
}

// A new month's first commit whose merge would read a lost group manifest
// does not merge (it publishes as before, carrying it); the reconcile
// writes the lost one anew from the pointers and merges.
func TestMergeSkipsALostGroup(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	for i := range 3 {
		commit(t, mem, fmt.Sprintf("dt=2026-%02d-01", i+1), 2, "x", swap.Options{})
	}
	if _, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil {
		t.Fatal(err)
	}
	_, hot := coldAndHot(manifestNames(t, mem))
	if len(hot) != 1 {
		t.Fatalf("hot manifests %v", hot)
	}
	if err := mem.Delete(ctx, lakehouse.MetadataPrefix+hot[0]); err != nil {
		t.Fatal(err)
	}
	if r := publish(t, mem, commit(t, mem, "dt=2026-04-01", 3, "y", swap.Options{})); !r.Changed || r.Partitions != 4 {
		t.Fatalf("the new month's publish: %+v", r)
	}
	r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
	if err != nil || !r.Changed || r.Partitions != 4 {
		t.Fatalf("reconcile: %+v, %v", r, err)
	}
	if cold, hot := coldAndHot(manifestNames(t, mem)); len(cold) != 1 || !strings.Contains(cold[0], "-202603-3-") || len(hot) != 1 {
		t.Fatalf("after the reconcile: cold %v hot %v", cold, hot)
	}
	if got := checkReaders(t, mem); len(got) != 4 || got["dt=2026-03-01"] != 2 || got["dt=2026-04-01"] != 3 {
		t.Fatalf("readers see %v", got)
	}
}

// coldMarks is the watermarks of a snapshot's cold manifests, in order.
func coldMarks(t *testing.T, names []string) []string {
	t.Helper()
	cold, _ := coldAndHot(names)
	var out []string
	for _, n := range cold {
		f := strings.Split(n, "-")
		if len(f) != 6 {
			t.Fatalf("cold manifest %s", n)
		}
		out = append(out, f[2])
	}
	slices.Sort(out)
	return out
}

// A prefix's cold manifests are segments of at most ColdCap entries, cut
// between months: a commit's publish reads and writes one segment (the
// one holding its partition, or the newest for a merge), whatever the
// table's size; a segment that grows past the cap is cut in two by the
// publish that writes it; readers see every partition throughout.
func TestColdSegmentsBounded(t *testing.T) {
	defer lakehouse.ColdCap(6)()
	mem := memstore.New(memstore.Options{})
	for i := range 30 { // ten months of three days, a file each
		commit(t, mem, fmt.Sprintf("dt=2025-%02d-%02d", i/3+1, i%3+1), 2, "x", swap.Options{})
	}
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Partitions != 30 {
		t.Fatalf("publish: %+v, %v", r, err)
	}
	names := manifestNames(t, mem)
	want := []string{"202502", "202504", "202506", "202508", "202509"}
	if got := coldMarks(t, names); !slices.Equal(got, want) {
		t.Fatalf("cold manifests %v: want watermarks %v (two months of 3 files each, the 6 of the cap)", names, want)
	}
	if len(names) != len(want)+1 {
		t.Fatalf("manifests %v: want the cold ones and October's", names)
	}
	if got := checkReaders(t, mem); len(got) != 30 {
		t.Fatalf("readers see %d partitions", len(got))
	}

	// step commits part, publishes it through a counting store, and
	// returns the manifests that are new in the snapshot and those gone.
	step := func(part string, wantReq int) (added, gone []string) {
		t.Helper()
		before := manifestNames(t, mem)
		res := commit(t, mem, part, 5, "y", swap.Options{OnConflict: swap.Overwrite})
		m, err := swap.ReadManifest(ctx, mem, res.Partition, res.Generation)
		if err != nil {
			t.Fatal(err)
		}
		st := storetest.NewCounting(mem)
		if r, err := lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: m}, lakehouse.Options{WaitForView: true}); err != nil || !r.Changed {
			t.Fatalf("publish %s: %+v, %v", part, r, err)
		}
		after := manifestNames(t, mem)
		for _, n := range after {
			if !slices.Contains(before, n) {
				added = append(added, n)
			}
		}
		for _, n := range before {
			if !slices.Contains(after, n) {
				gone = append(gone, n)
			}
		}
		if st.Total() != wantReq {
			t.Errorf("publish of %s: %d requests %v, want %d", part, st.Total(), st.Counts(), wantReq)
		}
		return added, gone
	}
	segment := func(names []string) []string { return coldMarks(t, names) }

	// A cold partition: its segment only, 9 requests.
	added, gone := step("dt=2025-03-02", 9)
	if !slices.Equal(segment(added), []string{"202504"}) || !slices.Equal(segment(gone), []string{"202504"}) || len(added) != 1 {
		t.Fatalf("cold commit: added %v, gone %v: want the segment up to 2025-04 only", added, gone)
	}
	// A new partition in that segment passes the cap: cut in two.
	added, gone = step("dt=2025-03-15", 9+1)
	if !slices.Equal(segment(added), []string{"202503", "202504"}) || !slices.Equal(segment(gone), []string{"202504"}) {
		t.Fatalf("a segment past the cap: added %v, gone %v: want 2025-03's and 2025-04's", added, gone)
	}
	// November's first commit merges October into the newest segment
	// (3 + 3 entries: at the cap, one segment).
	added, gone = step("dt=2025-11-01", 11)
	if !slices.Equal(segment(added), []string{"202510"}) || !slices.Equal(segment(gone), []string{"202509"}) {
		t.Fatalf("November: added %v, gone %v: want the newest segment up to October", added, gone)
	}
	// December's merges November: 7 entries, cut.
	added, gone = step("dt=2025-12-01", 12)
	if !slices.Equal(segment(added), []string{"202510", "202511"}) || !slices.Equal(segment(gone), []string{"202510"}) {
		t.Fatalf("December: added %v, gone %v: want the segment up to October again and November's", added, gone)
	}
	names = manifestNames(t, mem)
	if got := coldMarks(t, names); !slices.Equal(got, []string{"202502", "202503", "202504", "202506", "202508", "202510", "202511"}) || len(names) != 8 {
		t.Fatalf("manifests at the end: %v", names)
	}
	if got := checkReaders(t, mem); len(got) != 33 {
		t.Fatalf("readers see %d partitions, want 33", len(got))
	}
	// A reconcile finds it up to date.
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("reconcile: %+v, %v", r, err)
	}
}
