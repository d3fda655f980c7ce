package lakehouse_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// manifestNames are the names of the current snapshot's manifests, sorted.
func manifestNames(t *testing.T, st store.Store) []string {
	t.Helper()
	_, es := currentEntries(t, st)
	var out []string
	for _, e := range es {
		if n := path.Base(e.manifest); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// A table of 60 daily partitions has one manifest for its newest month,
// named a group's with its members, and one cold manifest (cold.go) of the
// months before, named with its watermark and members, and every reader
// sees every partition.
func TestManifestsGroupedByMonth(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	for i := range 60 {
		commit(t, mem, fmt.Sprintf("dt=2026-%02d-%02d", i/28+1, i%28+1), 1+i%3, "x", swap.Options{})
	}
	r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
	if err != nil || r.Partitions != 60 {
		t.Fatalf("publish: %+v, %v", r, err)
	}
	names := manifestNames(t, mem)
	if len(names) != 2 {
		t.Fatalf("%d manifests %v, want 2 (January and February cold, March)", len(names), names)
	}
	members := 0
	for _, n := range names {
		var hash string
		var m, snap int
		var digest string
		f := strings.ReplaceAll(strings.TrimSuffix(n, ".avro"), "-", " ")
		_, err := fmt.Sscanf(f, "pswap g%s %d %d %s", &hash, &m, &snap, &digest)
		if strings.HasPrefix(n, "pswap-c") {
			var mark int
			if _, err = fmt.Sscanf(f, "pswap c%s %d %d %d %s", &hash, &mark, &m, &snap, &digest); err == nil && mark != 202602 {
				t.Fatalf("cold manifest %s: watermark %d, want 202602", n, mark)
			}
		}
		if err != nil {
			t.Fatalf("manifest %s is not named as a group's or a cold one: %v", n, err)
		}
		members += m
	}
	if members != 60 {
		t.Fatalf("the groups' names count %d members, want 60", members)
	}
	if got := checkReaders(t, mem); len(got) != 60 {
		t.Fatalf("readers see %d partitions", len(got))
	}
	// One commit rewrites the manifest that holds its partition only.
	publish(t, mem, commit(t, mem, "dt=2026-02-10", 9, "y", swap.Options{OnConflict: swap.Overwrite}))
	after := manifestNames(t, mem)
	if len(after) != 2 || len(slices.DeleteFunc(slices.Clone(after), func(n string) bool { return slices.Contains(names, n) })) != 1 {
		t.Fatalf("manifests before %v, after one commit %v: want one rewritten", names, after)
	}
	if got := checkReaders(t, mem); got["dt=2026-02-10"] != 9 || len(got) != 60 {
		t.Fatalf("readers see %v", got)
	}
}

// loadLegacy is a table that pswap 0.2 published (one Iceberg manifest per
// partition, named after it): dt=2026-01-30, -01-31 (replaced once),
// -02-01 and -02-02, with 3, 6, 5 and 6 rows.
func loadLegacy(t *testing.T) *memstore.Store {
	t.Helper()
	data, err := os.ReadFile("testdata/legacy-v0.2.txtar")
	if err != nil {
		t.Fatal(err)
	}
	mem := memstore.New(memstore.Options{})
	for _, f := range txtar.Parse(data).Files {
		body, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(f.Data)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Put(ctx, f.Name, body, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

// A table published before grouping reads as it is, and a partition moves
// into its group's manifest at its next publish: its own manifest leaves
// the list, its files are recorded as deleted, the others stay as they
// are until they change.
func TestLegacyManifestsMoveIntoGroups(t *testing.T) {
	mem := loadLegacy(t)
	want := map[string]int64{"dt=2026-01-30": 3, "dt=2026-01-31": 6, "dt=2026-02-01": 5, "dt=2026-02-02": 6}
	if got := checkReaders(t, mem); !mapsEqual(got, want) {
		t.Fatalf("the legacy table reads %v, want %v", got, want)
	}
	before := manifestNames(t, mem)
	if len(before) != 4 {
		t.Fatalf("legacy manifests %v", before)
	}
	old := commitResult(t, mem, "dt=2026-01-30")
	res := commit(t, mem, "dt=2026-01-30", 8, "new", swap.Options{OnConflict: swap.Overwrite})
	r := publish(t, mem, res)
	if r.Partitions != 4 {
		t.Fatalf("publish: %+v", r)
	}
	after := manifestNames(t, mem)
	var groups []string
	for _, n := range after {
		if strings.HasPrefix(n, "pswap-g") {
			groups = append(groups, n)
		} else if !slices.Contains(before, n) {
			t.Fatalf("a new manifest %s not named as a group's", n)
		}
	}
	if len(groups) != 1 || len(after) != 4 {
		t.Fatalf("manifests after the first commit %v, want the three other legacy ones and one group's", after)
	}
	tbl, es := currentEntries(t, mem)
	cur := tbl.CurrentSnapshot().SnapshotID
	deleted := pathsWith(es, func(e entry) bool { return e.status == iceberg.EntryStatusDELETED && e.added == cur })
	if !slices.Equal(deleted, dataPaths(t, mem, old)) {
		t.Fatalf("deleted entries %v, want the legacy generation's files %v", deleted, dataPaths(t, mem, old))
	}
	want["dt=2026-01-30"] = 8
	if got := checkReaders(t, mem); !mapsEqual(got, want) {
		t.Fatalf("after the commit readers see %v, want %v", got, want)
	}
	// A reconcile leaves the up-to-date legacy manifests as they are.
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || r.Changed {
		t.Fatalf("reconcile of an up-to-date mixed table: %+v, %v", r, err)
	}
	// The next commit of the month joins the group; the group's member
	// from before is carried.
	publish(t, mem, commit(t, mem, "dt=2026-01-31", 2, "new", swap.Options{OnConflict: swap.Overwrite}))
	want["dt=2026-01-31"] = 2
	if got := checkReaders(t, mem); !mapsEqual(got, want) {
		t.Fatalf("after the second commit readers see %v, want %v", got, want)
	}
	if n := len(manifestNames(t, mem)); n != 3 {
		t.Fatalf("%d manifests after January's two commits, want 3 (January's group, two legacy)", n)
	}
	// A lost legacy manifest is found by the reconcile's listing and
	// written anew, into its group.
	for _, n := range manifestNames(t, mem) {
		if !strings.HasPrefix(n, "pswap-g") {
			if err := mem.Delete(ctx, lakehouse.MetadataPrefix+n); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{}); err != nil || !r.Changed || r.Partitions != 4 {
		t.Fatalf("reconcile after a lost legacy manifest: %+v, %v", r, err)
	}
	if got := checkReaders(t, mem); !mapsEqual(got, want) {
		t.Fatalf("after the repair readers see %v, want %v", got, want)
	}
}

// commitResult is the current generation of part as a swap.Result.
func commitResult(t *testing.T, st store.Store, part string) swap.Result {
	t.Helper()
	b, err := swap.ReadPointer(ctx, st, part)
	if err != nil {
		t.Fatal(err)
	}
	return swap.Result{Partition: part, Generation: b.Pointer.Generation, Seq: b.Pointer.Seq}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
