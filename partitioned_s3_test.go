package pswap_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/testenv"
)

// TestCommitPartitionedRequestsOnMinIO counts the requests of a backfill
// of new partitions from local folders on the wire to MinIO (SDK retries
// and clock probes included), at three sizes: each partition more costs 3
// (its data, manifest and pointer PUTs; the publish takes the pointers
// from the commits' results, where it read each, 4, before
// swap.Result.SwappedAt); the run's attempt record is one PUT whatever the
// partitions. Before the batch record it was 5 (one attempt record per
// partition). The whole run of 100 partitions stays within issue 41's 4
// requests a partition.
func TestCommitPartitionedRequestsOnMinIO(t *testing.T) {
	totals := map[int]int{}
	for _, n := range []int{10, 30, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := &wire{counts: map[string]int{}}
			table := pswap.NewTable(countedS3(t, w))
			root := hiveDays(t, n)
			w.take()
			res, err := table.CommitPartitioned(ctx, root, pswap.PartitionedOptions{Publish: &pswap.PublishOptions{},
				Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "backfill"}}})
			if err != nil || res.Committed != n || res.PublishErr != nil || res.AttemptErr != nil {
				t.Fatalf("committed %d failed %d, %v %v %v", res.Committed, res.Failed, res.PublishErr, res.AttemptErr, err)
			}
			c := w.take()
			totals[n] = total(c)
			t.Logf("%d new partitions on MinIO: %d requests (%.2f per partition): %s", n, total(c), float64(total(c))/float64(n), show(c))
			// The same run again: every partition a same-run no-op, whose
			// ends are one rewrite of the batch record (a PUT per
			// partition before it).
			res, err = table.CommitPartitioned(ctx, root, pswap.PartitionedOptions{Publish: &pswap.PublishOptions{},
				Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "backfill"}}})
			if err != nil || res.Unchanged != n || res.AttemptErr != nil {
				t.Fatalf("the same run again: unchanged %d, %v %v", res.Unchanged, res.AttemptErr, err)
			}
			c = w.take()
			t.Logf("the same run again: %d requests (%.2f per partition): %s", total(c), float64(total(c))/float64(n), show(c))
			if c["put"] != 2 {
				t.Errorf("the same run again: %d PUTs, want 2 (the batch record, then its no-ops)", c["put"])
			}
		})
	}
	if t.Failed() || len(totals) != 3 {
		return
	}
	if d := totals[30] - totals[10]; d != 3*20 {
		t.Fatalf("requests: %d for 10 partitions, %d for 30: %.2f per partition more, want 3", totals[10], totals[30], float64(d)/20)
	}
	if totals[100] > 4*100 {
		t.Fatalf("requests: %d for 100 partitions, %.2f a partition, want at most 4", totals[100], float64(totals[100])/100)
	}
}

// TestAuditPartitionedFromS3: a backfill from an s3:// prefix (copied
// server-side) where one partition's objects are not Parquet: the others
// commit, that one fails; the audit shows each attempt with its run id
// and identity (the run's batch record), the failed one with its error
// (its own record). The same run again: the committed ones are no-op
// rows pointing at their commits.
func TestAuditPartitionedFromS3(t *testing.T) {
	w := &wire{counts: map[string]int{}}
	st := countedS3(t, w)
	srcBucket, _ := testenv.S3Bucket(t)
	src, err := st.Sibling(srcBucket, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		putObj(t, src, fmt.Sprintf("out/dt=2026-09-%02d/part-0.parquet", i+1), parquetBytes(t, i*10, 10))
	}
	putObj(t, src, "out/dt=2026-09-04/part-0.parquet", []byte("not parquet"))
	table := pswap.NewTable(st)
	id := pswap.Identity{Job: "spark_backfill", Task: "copy", JobRunID: "scheduled__9"}
	opts := pswap.PartitionedOptions{Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "bf", Identity: id}}}
	res, err := table.CommitPartitioned(ctx, "s3://"+srcBucket+"/out", opts)
	if err != nil || res.Committed != 3 || res.Failed != 1 || res.AttemptErr != nil {
		t.Fatalf("the backfill: %+v, %v", res, err)
	}
	by, err := auditBy(t, table)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		p := fmt.Sprintf("dt=2026-09-%02d", i+1)
		if r := by[p]; len(r) != 1 || r[0].Status != "succeeded" || r[0].RunID != "bf/"+p || r[0].Job != id.Job || r[0].JobRunID != id.JobRunID {
			t.Errorf("%s: %+v, want one succeeded row with the run's identity", p, r)
		}
	}
	if r := by["dt=2026-09-04"]; len(r) != 1 || r[0].Status != "failed" || r[0].RunID != "bf/dt=2026-09-04" || r[0].Job != id.Job || r[0].Why == "" || r[0].FinishedAt == nil {
		t.Errorf("the failed partition: %+v, want one failed row with its error", r)
	}

	res, err = table.CommitPartitioned(ctx, "s3://"+srcBucket+"/out", opts)
	if err != nil || res.Unchanged != 3 || res.Failed != 1 {
		t.Fatalf("the same run again: %+v, %v", res, err)
	}
	by, err = auditBy(t, table)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		p := fmt.Sprintf("dt=2026-09-%02d", i+1)
		if r := by[p]; len(r) != 2 || r[1].Status != "no-op" || r[1].NoOpOf != r[0].Generation || r[1].Job != id.Job {
			t.Errorf("%s after the same run again: %+v, want its commit and a no-op row", p, r)
		}
	}
	if r := by["dt=2026-09-04"]; len(r) != 2 || r[0].Status != "failed" || r[1].Status != "failed" {
		t.Errorf("the failed partition, failed twice: %+v", r)
	}
}

// TestAuditPartitionedNewTableFails: a backfill into a new table whose
// every partition fails leaves nothing, its batch record included (a
// wrong URL or bad input makes no table).
func TestAuditPartitionedNewTableFails(t *testing.T) {
	dir := t.TempDir()
	root := hiveFolder(t, 2, 0)
	for _, p := range []string{"dt=2026-09-01", "dt=2026-09-02"} {
		if err := os.WriteFile(filepath.Join(root, p, "data.parquet"), []byte("not parquet"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	table, err := pswap.Open(ctx, filepath.Join(dir, "t"), pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := table.CommitPartitioned(ctx, root, pswap.PartitionedOptions{Write: pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "bf"}}})
	if err != nil || res.Failed != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	var left []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			left = append(left, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("a failed backfill into a new table left %v", left)
	}
}

// hiveDays writes n partition folders dt=YYYY-MM-DD/data.parquet of 10
// rows each, from 2026-01-01 on, and returns the root.
func hiveDays(t testing.TB, n int) string {
	t.Helper()
	root := t.TempDir()
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		dir := filepath.Join(root, "dt="+day.AddDate(0, 0, i).Format("2006-01-02"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "data.parquet"), parquetBytes(t, 10*i, 10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
