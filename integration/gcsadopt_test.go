package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/store"
)

// TestReservationAdoptedOnGCS is adoption on fake-gcs-server: an engine
// writes Parquet files into a generation that
// `stage --reserve` handed out on a gs:// table, and `commit --staged`
// adopts them where they lie (reads of their footers, not a byte
// uploaded). Each round is first killed at a random moment and then run
// again, which must converge: committed once, every row there, verify
// clean, and a further re-run a no-op.
//
// (Server-side copies of objects already in the bucket, commit
// s3://... and --partitioned s3://..., are S3-only in pswap today: there
// is no gs:// form to test. gcsstore's Copy, the rewrite, is covered by the
// conformance suite on the emulator and, with the preconditions the
// emulator ignores, by TestCopyPreconditionsOnRealPath.)
func TestReservationAdoptedOnGCS(t *testing.T) {
	t.Parallel()
	e := gcsOnly(t)
	rng := newRand(t)
	type sale struct {
		ID     int64   `parquet:"id"`
		Amount float64 `parquet:"amount"`
	}
	var dataPuts atomic.Int64
	outcomes := map[string]int{}
	span := 2 * time.Second
	for round := range 3 {
		part := fmt.Sprintf("dt=2026-10-%02d", round+1)
		r := e.runCLI(t, "stage", "--reserve", "--table", e.url, "--partition", part, "--json")
		var res reserveJSON
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 || !strings.HasPrefix(res.Prefix, "gs://"+e.bucket+"/") {
			t.Fatalf("stage --reserve: %d %q %s (%v)", r.code, r.stdout, r.stderr, err)
		}
		key := strings.TrimPrefix(res.Prefix, "gs://"+e.bucket+"/")
		for f := range 3 {
			rows := make([]sale, 100)
			for i := range rows {
				id := int64(round*1000 + f*100 + i)
				rows[i] = sale{ID: id, Amount: float64(id) / 4}
			}
			var buf bytes.Buffer
			if err := parquet.Write(&buf, rows); err != nil {
				t.Fatal(err)
			}
			if _, err := e.raw.Put(ctx, fmt.Sprintf("%s/part-%05d.parquet", key, f), buf.Bytes(), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		e.proxy.SetRule(func(r faultproxy.Request) faultproxy.Action {
			if r.IsPut() && pathKind(r.Path) == layout.KindData {
				dataPuts.Add(1)
			}
			return faultproxy.Pass
		})
		args := []string{"commit", "--table", e.url, "--partition", part, "--staged", res.Generation, "--json"}
		p := startProc(t, e.cli(t, args...))
		// Anywhere in a whole run's time: before, during or after the
		// commit (a process start under -race alone takes most of it).
		time.Sleep(time.Duration(rng.Int64N(int64(span))))
		p.kill()
		first := p.wait()
		again := e.runCLI(t, args...)
		span = max(span, again.elapsed)
		e.proxy.SetRule(nil)
		if again.code != 0 {
			t.Fatalf("round %d: re-run after a kill (first exit %d): %d %s", round, first.code, again.code, again.stderr)
		}
		cj := again.commit(t)
		outcomes[fmt.Sprintf("first exit %d, re-run %s", first.code, cj.Outcome)]++
		if cj.Rows != 300 || cj.Generation != res.Generation {
			t.Fatalf("round %d: committed %+v, want the reserved generation %s with 300 rows", round, cj, res.Generation)
		}
		if v := e.runCLI(t, "verify", "--table", e.url, "--partition", part); v.code != 0 {
			t.Fatalf("round %d: verify: %s %s", round, v.stdout, v.stderr)
		}
		if r := e.runCLI(t, args...); r.code != 0 || r.commit(t).Changed {
			t.Fatalf("round %d: a further re-run: %d %s %s", round, r.code, r.stdout, r.stderr)
		}
		totals.kills.Add(1)
	}
	if n := dataPuts.Load(); n != 0 {
		t.Errorf("adoption uploaded %d data files, want none (the files are adopted where they lie)", n)
	}
	state := e.check(t, checkOpts{expect: []string{"dt=2026-10-01", "dt=2026-10-02", "dt=2026-10-03"}, duck: true})
	for part, ps := range state {
		if ps.snap.Manifest.Content.Rows != 300 {
			t.Errorf("%s: %d rows in the manifest, want 300", part, ps.snap.Manifest.Content.Rows)
		}
	}
	t.Logf("killed adoptions on GCS, then re-run: %v", outcomes)
}
