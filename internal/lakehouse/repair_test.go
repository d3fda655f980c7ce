package lakehouse_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

// hintOf reads version-hint.text (0: missing).
func hintOf(t *testing.T, st store.Store) int {
	t.Helper()
	data, _, err := store.ReadAll(ctx, st, lakehouse.VersionHintKey)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

// A version hint lost after the expiry deleted v1 and the versions after
// it: the next publish must find the latest version by listing, not probe
// from v1 and write a new v1 holding one partition (before: readers saw
// one of two partitions, and later versions rebased on that).
func TestLostHintAfterExpiry(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	t0 := time.Now().Add(-3 * time.Hour)
	at := func(d time.Duration) context.Context {
		return clocked(func() time.Time { return t0.Add(d) })
	}
	pub := func(res swap.Result, d time.Duration) {
		t.Helper()
		if _, err := lakehouse.PublishCommit(at(d), mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	over := swap.Options{OnConflict: swap.Overwrite}
	pub(commit(t, mem, "dt=2026-11-01", 4, "a", swap.Options{}), 0)
	pub(commit(t, mem, "dt=2026-11-02", 5, "b", swap.Options{}), time.Minute)
	pub(commit(t, mem, "dt=2026-11-01", 6, "c", over), 2*time.Minute)
	if _, err := lakehouse.Expire(ctx, mem, lakehouse.ExpireOptions{
		Retention: time.Hour, MinAge: time.Millisecond, Now: func() time.Time { return time.Now().Add(time.Hour) },
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat(ctx, lakehouse.MetadataKey(1)); err == nil {
		t.Fatal("the expiry kept v1: the test needs it gone")
	}
	_, before, _ := lakehouse.Latest(ctx, mem)
	if err := mem.Delete(ctx, lakehouse.VersionHintKey); err != nil {
		t.Fatal(err)
	}
	pub(commit(t, mem, "dt=2026-11-02", 7, "d", over), 2*time.Hour+time.Minute)
	_, v, err := lakehouse.Latest(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	if v != before+1 || hintOf(t, mem) != v {
		t.Fatalf("after the lost hint the publish wrote version %d (hint %d), want %d after %d", v, hintOf(t, mem), before+1, before)
	}
	if got := checkReaders(t, mem); len(got) != 2 {
		t.Fatalf("readers see %v, want both partitions", got)
	}
}

// A hint left behind (its PUT failed once, or the publisher died after its
// version): the commit's publish retries it; a publish that finds the
// metadata up to date points a lagging hint at the latest version and
// says so (before: "up to date", the hint left on the old version, which
// readers that trust it read).
func TestHintLeftBehindIsFixed(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	publish(t, mem, commit(t, mem, "dt=2026-11-01", 4, "a", swap.Options{}))
	// One 503 on the hint PUT: retried.
	failOnce := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "put" && c.Key == lakehouse.VersionHintKey && c.N == 1 {
			return storetest.Fault{Before: fmt.Errorf("%w: 503 Slow Down", store.ErrTransient)}
		}
		return storetest.Fault{}
	})
	res := commit(t, mem, "dt=2026-11-02", 5, "b", swap.Options{})
	r, err := lakehouse.PublishCommit(ctx, failOnce, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := hintOf(t, mem); h != r.Version {
		t.Fatalf("one 503 on the hint PUT left the hint at %d, version %d", h, r.Version)
	}
	// A publisher killed after its version: the hint names the one before.
	res = commit(t, mem, "dt=2026-11-03", 6, "c", swap.Options{})
	noHint := storetest.NewFaulty(mem, func(c storetest.Call) storetest.Fault {
		if c.Op == "put" && c.Key == lakehouse.VersionHintKey {
			return storetest.Fault{Before: fmt.Errorf("killed")}
		}
		return storetest.Fault{}
	})
	r, err = lakehouse.PublishCommit(ctx, noHint, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := hintOf(t, mem); h != r.Version-1 {
		t.Fatalf("the hint is %d, want it left at %d for the test", h, r.Version-1)
	}
	again, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || !again.HintFixed || again.HintWas != r.Version-1 || hintOf(t, mem) != r.Version {
		t.Fatalf("publish of an up-to-date table with a lagging hint: %+v, hint now %d, want it fixed to %d", again, hintOf(t, mem), r.Version)
	}
	if got, want := checkReaders(t, mem), pointerRows(t, mem); !maps.Equal(got, want) || len(got) != 3 {
		t.Fatalf("readers see %v, want %v", got, want)
	}
	// A hint naming a version that does not exist: the latest that does.
	if _, err := mem.Put(ctx, lakehouse.VersionHintKey, []byte(strconv.Itoa(r.Version+5)), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err = lakehouse.Publish(ctx, mem, lakehouse.Options{})
	if err != nil || again.Version != r.Version || !again.HintFixed || hintOf(t, mem) != r.Version {
		t.Fatalf("publish with a hint past the latest version: %+v, %v; hint %d, want %d", again, err, hintOf(t, mem), r.Version)
	}
}

// A manifest of a partition that later commits do not touch is deleted or
// truncated: pswap publish (a reconcile) finds it by one listing of the
// manifests and writes it anew from the partition's pointer, where it said
// "up to date" and carried it into every version while readers failed.
func TestPublishRewritesDamagedManifests(t *testing.T) {
	for _, damage := range []string{"delete", "truncate"} {
		t.Run(damage, func(t *testing.T) {
			mem := memstore.New(memstore.Options{})
			publish(t, mem, commit(t, mem, "dt=2026-11-01", 4, "a", swap.Options{}))
			publish(t, mem, commit(t, mem, "dt=2026-11-02", 5, "b", swap.Options{}))
			var victim string
			for a, err := range mem.List(ctx, lakehouse.MetadataPrefix+"pswap-") {
				if err != nil {
					t.Fatal(err)
				}
				// The group's manifest of the current version (2 members).
				if strings.HasPrefix(a.Key, lakehouse.MetadataPrefix+"pswap-g") && strings.Contains(a.Key[len(lakehouse.MetadataPrefix)+23:], "-2-") && victim == "" {
					victim = a.Key
				}
			}
			data, _, err := store.ReadAll(ctx, mem, victim)
			if err != nil {
				t.Fatal(err)
			}
			if damage == "delete" {
				err = mem.Delete(ctx, victim)
			} else {
				_, err = mem.Put(ctx, victim, data[:len(data)/2], store.PutOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Changed || r.Partitions != 2 {
				t.Fatalf("publish after a %sd manifest: %+v, want a new version with both partitions", damage, r)
			}
			if got := checkReaders(t, mem); len(got) != 2 {
				t.Fatalf("readers see %v", got)
			}
			again, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
			if err != nil || again.Changed {
				t.Fatalf("a second publish: %+v, %v; want up to date", again, err)
			}
		})
	}
}

// The latest version truncated, or the current snapshot's manifest list
// lost: pswap publish (a reconcile) rebuilds a correct new version from the
// pointers, continuing the history from the newest version it can read,
// says what it repaired, and the commit's own publish and the expiry work
// again after it (before: every publish, and gc, failed on it for good).
func TestPublishRepairsDamagedMetadata(t *testing.T) {
	for _, damage := range []string{"truncated version", "lost manifest list"} {
		t.Run(damage, func(t *testing.T) {
			mem := memstore.New(memstore.Options{})
			publish(t, mem, commit(t, mem, "dt=2026-11-01", 4, "a", swap.Options{}))
			publish(t, mem, commit(t, mem, "dt=2026-11-02", 5, "b", swap.Options{}))
			r := publish(t, mem, commit(t, mem, "dt=2026-11-03", 6, "c", swap.Options{}))
			key := lakehouse.MetadataKey(r.Version)
			data, _, err := store.ReadAll(ctx, mem, key)
			if err != nil {
				t.Fatal(err)
			}
			if damage == "truncated version" {
				_, err = mem.Put(ctx, key, data[:len(data)/2], store.PutOptions{})
			} else {
				var md struct {
					Current   int64 `json:"current-snapshot-id"`
					Snapshots []struct {
						ID   int64  `json:"snapshot-id"`
						List string `json:"manifest-list"`
					} `json:"snapshots"`
				}
				if err := json.Unmarshal(data, &md); err != nil {
					t.Fatal(err)
				}
				for _, s := range md.Snapshots {
					if s.ID == md.Current {
						err = mem.Delete(ctx, lakehouse.MetadataPrefix+path.Base(s.List))
					}
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			// The commit's publish cannot: it refuses, naming the damage.
			res := commit(t, mem, "dt=2026-11-04", 7, "d", swap.Options{})
			if _, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{}); !errors.Is(err, lakehouse.ErrCorrupt) {
				t.Fatalf("a commit's publish over a %s: %v, want ErrCorrupt", damage, err)
			}
			rep, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
			if err != nil {
				t.Fatalf("pswap publish over a %s: %v", damage, err)
			}
			if !rep.Changed || rep.Version != r.Version+1 || len(rep.Repairs) != 1 || rep.Partitions != 4 {
				t.Fatalf("pswap publish over a %s: %+v, want version %d with 4 partitions and one repair", damage, rep, r.Version+1)
			}
			t.Logf("repair: %s", rep.Repairs[0])
			if got, want := checkReaders(t, mem), pointerRows(t, mem); !maps.Equal(got, want) {
				t.Fatalf("readers see %v, want %v", got, want)
			}
			publish(t, mem, commit(t, mem, "dt=2026-11-05", 8, "e", swap.Options{}))
			if _, err := lakehouse.Expire(ctx, mem, lakehouse.ExpireOptions{}); err != nil {
				t.Fatalf("the expiry after the repair: %v", err)
			}
			if got := checkReaders(t, mem); len(got) != 5 {
				t.Fatalf("readers see %v", got)
			}
		})
	}
}

// A file:// table moved to another folder (its metadata names the old
// root), or reached through a symbolic link: a commit's publish refuses the
// moved one, naming both locations (before: "outside the table" from every
// publish and gc, for good); pswap publish rewrites every manifest under
// the new root and says so; readers and the expiry work on it after that.
// Through a symlink the table is the same table: nothing to do.
func TestMovedAndSymlinkedTable(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	st, err := filestore.New(old)
	if err != nil {
		t.Fatal(err)
	}
	publish(t, st, commit(t, st, "dt=2026-11-01", 4, "a", swap.Options{}))
	publish(t, st, commit(t, st, "dt=2026-11-02", 5, "b", swap.Options{}))
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	st, err = filestore.New(moved)
	if err != nil {
		t.Fatal(err)
	}
	res := commit(t, st, "dt=2026-11-03", 6, "c", swap.Options{})
	_, err = lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{})
	if !errors.Is(err, lakehouse.ErrCorrupt) || !strings.Contains(err.Error(), old) || !strings.Contains(err.Error(), "pswap publish") {
		t.Fatalf("a commit's publish on a moved table: %v, want ErrCorrupt naming %s and pswap publish", err, old)
	}
	// The same through a prefetch (pswap commit's publish starts one).
	pf := lakehouse.StartPrefetch(ctx, st, lakehouse.Options{})
	_, err = lakehouse.PublishCommit(ctx, st, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, lakehouse.Options{Prefetch: pf})
	if !errors.Is(err, lakehouse.ErrCorrupt) || !strings.Contains(err.Error(), old) {
		t.Fatalf("a commit's publish from a prefetch on a moved table: %v, want ErrCorrupt naming %s", err, old)
	}
	r, err := lakehouse.Publish(ctx, st, lakehouse.Options{})
	if err != nil || !r.Changed || r.Partitions != 3 || len(r.Repairs) != 1 {
		t.Fatalf("pswap publish on a moved table: %+v, %v", r, err)
	}
	loc, _, _ := lakehouse.Latest(ctx, st)
	data, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), old+"/") {
		t.Fatalf("the repaired version still names the old root %s", old)
	}
	if got := checkReaders(t, st); len(got) != 3 {
		t.Fatalf("readers see %v", got)
	}
	publish(t, st, commit(t, st, "dt=2026-11-04", 7, "d", swap.Options{}))
	if _, err := lakehouse.Expire(ctx, st, lakehouse.ExpireOptions{}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(moved, link); err != nil {
		t.Fatal(err)
	}
	viaLink, err := filestore.New(link)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := lakehouse.Publish(ctx, viaLink, lakehouse.Options{}); err != nil || r.Changed || len(r.Repairs) != 0 {
		t.Fatalf("pswap publish through a symlink: %+v, %v; want up to date", r, err)
	}
}

// rootURIStore is a store whose root's URI ends in "//", as a bucket's or
// the simulation's does ("sim://"): its keys' URIs are "x://" + key.
type rootURIStore struct{ *memstore.Store }

func (rootURIStore) URI(key string) string { return "x://" + key }

// A table whose root URI ends in "//" is not a moved table: a commit's
// publish after the first one succeeds, and pswap publish finds it up to
// date (found by the simulation's lost-manifest faults: every publish
// after v1 failed, and every pswap publish dropped the older snapshots).
func TestRootURIIsNotAMove(t *testing.T) {
	st := rootURIStore{memstore.New(memstore.Options{})}
	publish(t, st, commit(t, st, "dt=2026-11-01", 4, "a", swap.Options{}))
	publish(t, st, commit(t, st, "dt=2026-11-02", 5, "b", swap.Options{}))
	r, err := lakehouse.Publish(ctx, st, lakehouse.Options{})
	if err != nil || r.Changed || len(r.Repairs) != 0 {
		t.Fatalf("pswap publish: %+v, %v; want up to date", r, err)
	}
}

// A corrupt pointer does not stop a reconcile: its partition keeps the
// manifest the metadata has (readers still see its last published rows),
// every other partition is published, and the error names the corrupt
// pointer. Before, the reconcile failed whole and nothing was published.
func TestReconcileSkipsCorruptPointer(t *testing.T) {
	mem := memstore.New()
	for i, part := range []string{"dt=2026-01-01", "dt=2026-01-02", "dt=2026-01-03"} {
		publish(t, mem, commit(t, mem, part, 3+i, "a", swap.Options{}))
	}
	commit(t, mem, "dt=2026-01-03", 9, "b", swap.Options{OnConflict: swap.Overwrite}) // not published
	if _, err := mem.Put(ctx, layout.PointerKey("dt=2026-01-02"), []byte("{not json"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := lakehouse.Publish(ctx, mem, lakehouse.Options{})
	if err == nil || !errors.Is(err, swap.ErrCorrupt) || !strings.Contains(err.Error(), "dt=2026-01-02") {
		t.Fatalf("reconcile with a corrupt pointer: %v, want an error naming dt=2026-01-02", err)
	}
	if !r.Changed || r.Partitions != 3 {
		t.Fatalf("reconcile: %+v, want the other partitions published and the corrupt one kept", r)
	}
	loc, _, err := lakehouse.Latest(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := icebergRows(t, mem, loc)
	if got["dt=2026-01-01"] != 3 || got["dt=2026-01-02"] != 4 || got["dt=2026-01-03"] != 9 {
		t.Fatalf("rows per partition %v: want 3, the corrupt one's last published 4, and the new 9", got)
	}
}
