package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/swap"
)

// TestMergeLostReplies loses one reply of a merge on MinIO (the pointer
// swap applied but unanswered, the manifest PUT likewise, a 503 on the read
// of the current data): the merge ends in success with exactly one merge
// generation, derived from the one it replaced, and the same merge again
// is a same-run no-op.
func TestMergeLostReplies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		action faultproxy.Action
		match  func(r faultproxy.Request) bool
	}{
		{"pointer/drop-reply", faultproxy.DropReply, func(r faultproxy.Request) bool {
			return r.IsPut() && strings.HasSuffix(r.Path, "/pointer.json")
		}},
		{"pointer/applied-then-503", faultproxy.ReplyThen503, func(r faultproxy.Request) bool {
			return r.IsPut() && strings.HasSuffix(r.Path, "/pointer.json")
		}},
		{"manifest/drop-reply", faultproxy.DropReply, func(r faultproxy.Request) bool {
			return r.IsPut() && pathKind(r.Path) == layout.KindManifest
		}},
		{"current-data/503", faultproxy.SlowDown, func(r faultproxy.Request) bool {
			return r.IsRead() && pathKind(r.Path) == layout.KindData && strings.HasSuffix(r.Path, ".parquet")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, proxy := s3ViaProxy(t, 1)
			tbl := pswap.NewTable(st)
			dir := t.TempDir()
			part := mergeParts[0]
			seed := filepath.Join(dir, "seed.csv")
			os.WriteFile(seed, []byte(rowsCSV(seedRows(0)[:2000])), 0o644)
			p, _ := tbl.Partition(part)
			w, err := p.Begin(ctx, pswap.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AddPath(ctx, seed, pswap.FormatAuto); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			in := mergeInput{part: mergeInputOf(1)[part]}
			path := filepath.Join(dir, "changes.csv")
			os.WriteFile(path, []byte(in.csv()), 0o644)
			var fired atomic.Bool
			proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
				if tc.match(r) && fired.CompareAndSwap(false, true) {
					return tc.action
				}
				return faultproxy.Pass
			})
			opts := pswap.MergeOptions{Keys: []string{"order_id"}, DeleteWhen: "op=D", Partition: part,
				Commit: pswap.CommitOptions{RunID: "lost", BaseDelay: 10 * time.Millisecond}}
			res, err := tbl.Merge(ctx, []string{path}, opts)
			if err != nil {
				t.Fatalf("merge after a lost reply: %v", err)
			}
			if !fired.Load() {
				t.Fatal("the fault never fired")
			}
			proxy.SetRule(nil)
			pm := res.Partitions[0]
			hist, err := swap.History(ctx, st, part, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 2 || hist[0].RunID != "lost/"+part {
				t.Fatalf("history %+v, want the seed and one merge", hist)
			}
			if n := checkMergeChains(t, st, map[string]mergeInput{"lost": in}, nil); n != 1 {
				t.Fatalf("%d merge generations checked", n)
			}
			again, err := tbl.Merge(ctx, []string{path}, opts)
			if err != nil || again.Partitions[0].Result.Outcome != swap.SameRun {
				t.Fatalf("the same merge again: %+v, %v", again.Partitions, err)
			}
			t.Logf("%s: %s after %d repeated attempt(s), %s", tc.name, pm.Result.Outcome, pm.Rebases, fmt.Sprint(proxy.Counts()))
		})
	}
}
