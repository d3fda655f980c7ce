package integration

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
)

// TestRequestsPerCommitByStore commits the same partitions on every
// remote store that is configured (MinIO, Azurite, fake-gcs-server), in
// the same run, and
// reports the HTTP requests one commit sends (counted by the proxy in
// front of the server) and its median time. Every store must need the
// same requests per commit, give or take one: a driver that reads more
// than S3's would show here.
func TestRequestsPerCommitByStore(t *testing.T) {
	type result struct {
		kind    string
		first   int64 // the table's first commit (creates table.json)
		next    int64 // a later commit of a new partition
		replace int64 // a commit that replaces a partition's generation
		median  time.Duration
		commits int
	}
	var envs []*tableEnv
	if testenv.S3Enabled() {
		envs = append(envs, newMinioEnv(t))
	}
	if testenv.AzureEnabled() {
		envs = append(envs, newAzuriteEnv(t))
	}
	if testenv.GCSEnabled() {
		envs = append(envs, newGCSEnv(t))
	}
	if len(envs) == 0 {
		t.Skip("needs MinIO, Azurite or fake-gcs-server; scripts/test.sh starts them")
	}
	// The stores' commits interleave (one on each in turn), so that the
	// machine's load weighs on both alike.
	results := make([]result, len(envs))
	times := make([][]time.Duration, len(envs))
	stores := make([]store.Store, len(envs))
	count := func(e *tableEnv, f func()) int64 {
		e.proxy.ResetCounts()
		f()
		return e.proxy.Requests()
	}
	for j, e := range envs {
		stores[j] = e.viaProxy(t, 0)
		results[j].kind = e.kind
		results[j].first = count(e, func() {
			mustCommitRows(t, stores[j], "dt=2026-12-00", 100, "first", pswap.CommitOptions{RunID: "first"})
		})
	}
	const n = 8
	for i := range n {
		part := fmt.Sprintf("dt=2026-12-%02d", i+1)
		for j, e := range envs {
			start := time.Now()
			got := count(e, func() { mustCommitRows(t, stores[j], part, 100, part, pswap.CommitOptions{RunID: "new-" + part}) })
			times[j] = append(times[j], time.Since(start))
			if i == 0 {
				results[j].next = got
			}
		}
		for j, e := range envs {
			start := time.Now()
			got := count(e, func() {
				mustCommitRows(t, stores[j], part, 100, part+"-v2", pswap.CommitOptions{RunID: "replace-" + part})
			})
			times[j] = append(times[j], time.Since(start))
			if i == 0 {
				results[j].replace = got
			}
		}
	}
	for j := range envs {
		r := &results[j]
		slices.Sort(times[j])
		r.median, r.commits = times[j][len(times[j])/2], len(times[j])
		t.Logf("%s: requests per commit: first %d, new partition %d, replacement %d; median commit %v over %d commits",
			r.kind, r.first, r.next, r.replace, r.median.Round(time.Millisecond), r.commits)
	}
	base := results[0]
	for _, r := range results[1:] {
		for _, c := range [][3]any{{"first", base.first, r.first}, {"new partition", base.next, r.next}, {"replacement", base.replace, r.replace}} {
			if d := c[2].(int64) - c[1].(int64); d > 1 || d < -1 {
				t.Errorf("%s: %s commit sends %d requests, %s %d", r.kind, c[0], c[2], base.kind, c[1])
			}
		}
		t.Logf("%s/%s: median commit time ratio %.2f", r.kind, base.kind, float64(r.median)/float64(base.median))
	}
}
