package integration

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/faultproxy"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// TestRequestsPerCommit counts the requests of a commit (three data files,
// then the swap) on each store behind the proxy, and logs them with the
// median time of a commit. On GCS a commit makes the requests it makes on
// S3, one for one (a conditional write is one request on both), except
// that the first miss of a new store (the first commit's read of a pointer
// that is not there yet) costs one listing: GCS answers a read of a
// missing bucket as of a missing object, and gcsstore asks once, until a
// response has shown the bucket to exist.
func TestRequestsPerCommit(t *testing.T) {
	got := map[string][]int64{}
	viaProxyStores(t, func(t *testing.T, viaProxy func(t testing.TB, sdkAttempts int) (store.Store, *faultproxy.Proxy)) {
		st, proxy := viaProxy(t, 1)
		var reqs []int64
		var took []time.Duration
		for i := range 7 {
			proxy.ResetCounts()
			start := time.Now()
			txn, err := swap.Begin(ctx, st, "dt=2026-11-29", swap.Options{RunID: fmt.Sprintf("r%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := txn.Commit(ctx, stage(t, txn, 3, fmt.Sprint("seed", i))); err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(start))
			reqs = append(reqs, proxy.Requests())
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		got[t.Name()] = reqs
		t.Logf("requests per commit (first, then six more): %v; median commit %v", reqs, took[len(took)/2].Round(100*time.Microsecond))
	})
	s3, gcs := got["TestRequestsPerCommit/minio"], got["TestRequestsPerCommit/gcs"]
	if s3 == nil || gcs == nil {
		return
	}
	for i := range s3 {
		want := s3[i]
		if i == 0 {
			want++ // the probe of the first miss
		}
		if gcs[i] != want {
			t.Errorf("requests per commit: S3 %v, GCS %v", s3, gcs)
			break
		}
	}
}
