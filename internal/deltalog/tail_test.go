package deltalog_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/deltalog"
	"github.com/pswap/pswap/internal/testing/race"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

// cpReads counts the GETs of checkpoints (the file list a flat publish
// of an append does not read).
type cpReads struct {
	store.Store
	n atomic.Int64
}

func (c *cpReads) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	if strings.HasSuffix(key, ".checkpoint.parquet") {
		c.n.Add(1)
	}
	return c.Store.Get(ctx, key)
}

// versionActions counts the adds and removes of a log version.
func versionActions(t *testing.T, st store.Store, v int64) (adds, removes int) {
	t.Helper()
	data, _, err := store.ReadAll(context.Background(), st, deltalog.CommitKey(v))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := deltalog.DecodeCommit(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acts {
		if a.Add != nil {
			adds++
		}
		if a.Remove != nil {
			removes++
		}
	}
	return adds, removes
}

// partEqualsPointer fails t unless the log's current version has
// exactly the files of the generation part's pointer names.
func partEqualsPointer(t *testing.T, st store.Store, part string) {
	t.Helper()
	ctx := context.Background()
	snap, err := swap.Resolve(ctx, st, part)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range snap.Files {
		want = append(want, deltalog.EscapePath(f.Key))
	}
	s, err := deltalog.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for path, a := range s.Files {
		if a.Tags[deltalog.TagPartition] == part {
			got = append(got, path)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the log (version %d) has %d files of %s, its pointer %d:\n%v\n%v", s.Version, len(got), part, len(want), got, want)
	}
}

// TestAppendTailMatchesReplay: random appends, replaces, rollbacks,
// commits left unpublished and reconciles over three partitions, with a checkpoint
// every 3 versions. After every publish the log holds exactly every
// pointer's files; an append published while the log held its parent
// adds the run's file alone and reads no checkpoint unless one is due.
// Eight seeds; two under -race (see race.Share).
func TestAppendTailMatchesReplay(t *testing.T) {
	for seed := range uint64(race.Share(8, 2)) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(seed, 42))
			mem := memstore.New()
			cp := &cpReads{Store: mem}
			tbl := pswap.NewTable(cp)
			opts := deltalog.Options{CheckpointInterval: 3}
			parts := []string{"dt=2026-11-01", "dt=2026-11-02", "dt=2026-11-03"}
			gens := map[string][]string{}
			inLog := map[string]string{} // the generation the log holds of each partition
			reconciled := map[string]bool{}
			flat := 0
			for i := range 120 {
				part := parts[rng.IntN(len(parts))]
				p, err := tbl.Partition(part)
				if err != nil {
					t.Fatal(err)
				}
				var res pswap.Result
				op := rng.IntN(10)
				switch {
				case op < 6 || len(gens[part]) == 0: // an append
					w, err := p.Append(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: fmt.Sprintf("run-%d", i)}})
					if err != nil {
						t.Fatal(err)
					}
					if err := pswap.Write(w, sale{int64(i), "x", 1}); err != nil {
						t.Fatal(err)
					}
					if res, err = w.Commit(ctx); err != nil {
						t.Fatal(err)
					}
				case op < 8: // a replace
					res, _ = commitOnly(t, tbl, part, fmt.Sprintf("run-%d", i), sale{int64(i), "y", 2})
				default: // a rollback to an earlier generation
					g := gens[part][rng.IntN(len(gens[part]))]
					if res, err = p.Rollback(ctx, g, pswap.CommitOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				parent := ""
				if n := len(gens[part]); n > 0 {
					parent = gens[part][n-1]
				}
				gens[part] = append(gens[part], res.Generation)
				if rng.IntN(6) == 0 {
					continue // left unpublished: the log falls behind
				}
				if rng.IntN(8) == 0 {
					// A reconcile: one version of every partition behind.
					if _, err := deltalog.Publish(ctx, cp, opts); err != nil {
						t.Fatalf("step %d: reconcile: %v", i, err)
					}
					logEqualsPointers(t, mem)
					for _, q := range parts {
						// A version of several partitions does not say
						// their counts: the next append of each replays.
						reconciled[q] = true
						if n := len(gens[q]); n > 0 {
							inLog[q] = gens[q][n-1]
						}
					}
					continue
				}
				cp.n.Store(0)
				r, err := deltalog.PublishCommit(ctx, cp, deltalog.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: res.Manifest}, opts)
				if err != nil {
					t.Fatalf("step %d: publish %s: %v", i, part, err)
				}
				if op < 6 && parent != "" && inLog[part] == parent && r.Changed {
					// The log held the parent: the run's file alone.
					if adds, removes := versionActions(t, mem, r.Version); adds != 1 || removes != 0 {
						t.Fatalf("step %d: the append's version %d has %d adds and %d removes", i, r.Version, adds, removes)
					}
					if !r.Checkpoint && !reconciled[part] && cp.n.Load() > 0 {
						t.Fatalf("step %d: the publish of an append on its parent read %d checkpoints", i, cp.n.Load())
					}
					flat++
				}
				inLog[part] = res.Generation
				reconciled[part] = false
				partEqualsPointer(t, mem, part)
			}
			if flat == 0 {
				t.Fatal("no append was published on its parent")
			}
			t.Logf("%d appends published from the tail", flat)
		})
	}
}

// TestAppendTailFallsBack: a summary that is missing or does not decode,
// or another writer's version since the checkpoint, makes the publish of
// an append replay the checkpoint: the log stays exact, and another
// writer's file is refused (ErrForeign) as by every publish.
func TestAppendTailFallsBack(t *testing.T) {
	ctx := context.Background()
	appendOne := func(t *testing.T, tbl *pswap.Table, part, run string) (pswap.Result, error) {
		t.Helper()
		res := appendRow(t, tbl, part, run, sale{1, run, 1})
		_, err := deltalog.PublishCommit(ctx, tbl.Store(), commitOf(res), deltalog.Options{})
		return res, err
	}
	setup := func(t *testing.T) (*memstore.Store, *pswap.Table) {
		st := memstore.New()
		tbl := pswap.NewTable(st)
		for i := range 11 { // a checkpoint at version 10
			if _, err := appendOne(t, tbl, "dt=2026-11-01", fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
		}
		return st, tbl
	}
	summary := "_delta_log/_pswap/checkpoint-00000000000000000010.json.gz"
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, st store.Store)
	}{
		{"missing summary", func(t *testing.T, st store.Store) {
			if err := st.Delete(ctx, summary); err != nil {
				t.Fatal(err)
			}
		}},
		{"summary that is not gzip", func(t *testing.T, st store.Store) {
			if _, err := st.Put(ctx, summary, []byte(`{"format":"pswap-delta-summary"}`), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"summary that does not decode", func(t *testing.T, st store.Store) {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			w.Write([]byte(`{"format":"pswap-delta-summary"}`))
			w.Close()
			if _, err := st.Put(ctx, summary, b.Bytes(), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"summary of a partition at another generation", func(t *testing.T, st store.Store) {
			gz, _, err := store.ReadAll(ctx, st, summary)
			if err != nil {
				t.Fatal(err)
			}
			z, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(z)
			if err != nil {
				t.Fatal(err)
			}
			// Claims one file fewer: the tail cannot place the partition
			// at the append's parent.
			bad := strings.Replace(string(data), `"files":11`, `"files":10`, 1)
			if bad == string(data) {
				t.Fatalf("summary %s", data)
			}
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			w.Write([]byte(bad))
			w.Close()
			if _, err := st.Put(ctx, summary, b.Bytes(), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, tbl := setup(t)
			tc.damage(t, st)
			if _, err := appendOne(t, tbl, "dt=2026-11-01", "after"); err != nil {
				t.Fatal(err)
			}
			logEqualsPointers(t, st)
		})
	}
	t.Run("foreign add", func(t *testing.T) {
		st, tbl := setup(t)
		foreign := `{"commitInfo":{"operation":"WRITE"}}` + "\n" +
			`{"add":{"path":"dt=2026-11-01/part-0.parquet","partitionValues":{"dt":"2026-11-01"},"size":1,"modificationTime":1,"dataChange":true}}` + "\n"
		if _, err := st.Put(ctx, deltalog.CommitKey(11), []byte(foreign), store.PutOptions{IfNoneMatch: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := appendOne(t, tbl, "dt=2026-11-01", "after"); !errors.Is(err, deltalog.ErrForeign) {
			t.Fatalf("err %v, want ErrForeign", err)
		}
		if _, _, err := store.ReadAll(ctx, st, deltalog.CommitKey(12)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a version was written: %v", err)
		}
	})
	t.Run("republished", func(t *testing.T) {
		st, tbl := setup(t)
		res, err := appendOne(t, tbl, "dt=2026-11-01", "again")
		if err != nil {
			t.Fatal(err)
		}
		r, err := deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq}, deltalog.Options{})
		if err != nil || r.Changed || r.Version != 11 {
			t.Fatalf("publish again: %+v %v, want version 11 unchanged", r, err)
		}
	})
}

// TestRacingAppendPublishers: appends to different partitions published
// at once all land, each in its own version, through lost races.
func TestRacingAppendPublishers(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	tbl := pswap.NewTable(st)
	const n = 8
	var results []pswap.Result
	for round := range 3 {
		results = results[:0]
		for i := range n {
			p, err := tbl.Partition(fmt.Sprintf("dt=2026-11-%02d", 1+i))
			if err != nil {
				t.Fatal(err)
			}
			w, err := p.Append(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: fmt.Sprintf("r%d-%d", round, i)}})
			if err != nil {
				t.Fatal(err)
			}
			if err := pswap.Write(w, sale{int64(i), "x", 1}); err != nil {
				t.Fatal(err)
			}
			res, err := w.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, res)
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, res := range results {
			wg.Go(func() {
				_, errs[i] = deltalog.PublishCommit(ctx, st, deltalog.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: res.Manifest}, deltalog.Options{CheckpointInterval: 4})
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		logEqualsPointers(t, st)
	}
	s, err := deltalog.Load(ctx, st)
	// Version 0 holds the first round's every partition (a new log
	// reconciles), then one version an append.
	if err != nil || s.Version != 2*n || len(s.Files) != 3*n {
		t.Fatalf("version %d with %d files (%v), want %d and %d", s.Version, len(s.Files), err, 2*n, 3*n)
	}
}

// TestMultiFileAppendsAcrossPacks: appends of three files each, so that
// the head's packs (a segment every 32 files) cut runs in two: each
// version adds the run's three files, found in the head's tail and the
// newest segment, and the log holds the pointer's files.
func TestMultiFileAppendsAcrossPacks(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	cp := &cpReads{Store: mem}
	tbl := pswap.NewTable(cp)
	part := "dt=2026-11-01"
	p, err := tbl.Partition(part)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		w, err := p.Append(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: fmt.Sprint(i)},
			Staging: staging.Options{TargetFileSize: 1, RowGroupRows: 1024}})
		if err != nil {
			t.Fatal(err)
		}
		// Three chunks of 1,024 rows (staging's smallest), a file each.
		rows := make([]sale, 3*1024)
		for k := range rows {
			rows[k] = sale{int64(len(rows)*i + k), "a", 1}
		}
		if err := pswap.Write(w, rows...); err != nil {
			t.Fatal(err)
		}
		res, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cp.n.Store(0)
		r, err := deltalog.PublishCommit(ctx, cp, deltalog.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq, Manifest: res.Manifest}, deltalog.Options{})
		if err != nil || !r.Changed {
			t.Fatalf("append %d: %+v %v", i, r, err)
		}
		if adds, removes := versionActions(t, mem, r.Version); i > 0 && (adds != 3 || removes != 0) {
			t.Fatalf("append %d: version %d has %d adds, %d removes; want 3, 0", i, r.Version, adds, removes)
		}
		if i > 0 && !r.Checkpoint && cp.n.Load() > 0 {
			t.Fatalf("append %d: the publish read %d checkpoints", i, cp.n.Load())
		}
		partEqualsPointer(t, mem, part)
	}
}

// TestExpireDeletesSummaries: Expire deletes a checkpoint's summary with
// the checkpoint, and keeps the summary of the checkpoint it keeps; the
// next append still publishes from the tail.
func TestExpireDeletesSummaries(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	cp := &cpReads{Store: mem}
	tbl := pswap.NewTable(cp)
	appendOne := func(run string) deltalog.Result {
		res := appendRow(t, tbl, "dt=2026-11-01", run, sale{1, run, 1})
		cp.n.Store(0)
		r, err := deltalog.PublishCommit(ctx, cp, commitOf(res), deltalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i := range 25 {
		appendOne(fmt.Sprint(i))
	}
	res, err := deltalog.Expire(ctx, mem, time.Now().Add(40*24*time.Hour))
	if err != nil || res.KeptFrom != 20 {
		t.Fatalf("expire: %+v %v, want kept from 20", res, err)
	}
	deleted := strings.Join(res.Deleted, " ")
	if !strings.Contains(deleted, "_delta_log/_pswap/checkpoint-00000000000000000010.json.gz") || strings.Contains(deleted, "checkpoint-00000000000000000020") {
		t.Fatalf("deleted %s: want the summary of 10, not of 20", deleted)
	}
	if r := appendOne("after"); r.Version != 25 || cp.n.Load() != 0 {
		t.Fatalf("after the expiry: version %d, %d checkpoints read", r.Version, cp.n.Load())
	}
	partEqualsPointer(t, mem, "dt=2026-11-01")
}
