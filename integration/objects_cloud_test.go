package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/gcsstore"
)

// TestPartitionedFromCloud is TestPartitionedFromS3 on fake-gcs-server and
// Azurite: Spark-style partitionBy output already in the table's bucket
// (container), markers included, is committed by one `commit --partitioned
// gs://...` (az://...), server-side; the re-run is a no-op for every
// partition. `commit --partition P <uri>/` takes one folder the same way,
// from the table's bucket or another (another container of the account on
// Azure); an input of another store's scheme, or of another Azure account,
// is refused (exit 2) naming the accepted one.
func TestPartitionedFromCloud(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"gcs", "azurite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var e *tableEnv
			var scheme, wrong string
			if kind == "gcs" {
				e, scheme, wrong = newGCSEnv(t), "gs://", "s3://"
			} else {
				e, scheme, wrong = newAzuriteEnv(t), "az://", "gs://"
			}
			type sale struct {
				ID   int64  `parquet:"id"`
				Name string `parquet:"name"`
			}
			days := 3
			for d := range days + 1 {
				for f := range 2 {
					rows := make([]sale, 100)
					for i := range rows {
						rows[i] = sale{ID: int64(d*1000 + f*100 + i), Name: "n"}
					}
					var buf bytes.Buffer
					if err := parquet.Write(&buf, rows); err != nil {
						t.Fatal(err)
					}
					if _, err := e.raw.Put(ctx, fmt.Sprintf("spark-out/dt=2026-09-%02d/part-%05d-abc.c000.snappy.parquet", d+1, f), buf.Bytes(), store.PutOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := e.raw.Put(ctx, "spark-out/_SUCCESS", nil, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			// The last day is committed on its own first: the backfill finds
			// the same objects there (their MD5s match) and leaves it.
			one := fmt.Sprintf("%s%s/spark-out/dt=2026-09-%02d/", scheme, e.bucket, days+1)
			r := e.runCLI(t, "commit", "--table", e.url, "--partition", fmt.Sprintf("dt=2026-09-%02d", days+1), one, "--json")
			var c struct {
				Changed bool  `json:"changed"`
				Rows    int64 `json:"rows"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &c); err != nil || r.code != 0 || !c.Changed || c.Rows != 200 {
				t.Fatalf("commit %s: %d %s %s", one, r.code, r.stdout, r.stderr)
			}
			src := scheme + e.bucket + "/spark-out"
			r = e.runCLI(t, "commit", "--table", e.url, "--partitioned", src, "--run-id", "spark-backfill", "--json")
			var doc partitionedJSON
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.Committed != days || doc.Unchanged != 1 {
				t.Fatalf("commit --partitioned %s: %d %s %s", src, r.code, r.stdout, r.stderr)
			}
			for _, p := range doc.Partitions {
				if p.Rows != 200 {
					t.Fatalf("%s: %d rows, want 200", p.Partition, p.Rows)
				}
			}
			r = e.runCLI(t, "commit", "--table", e.url, "--partitioned", src, "--run-id", "spark-backfill", "--json")
			doc = partitionedJSON{}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.Unchanged != days+1 {
				t.Fatalf("re-run: %d %s %s", r.code, r.stdout, r.stderr)
			}
			if v := e.runCLI(t, "verify", "--table", e.url); v.code != 0 {
				t.Fatalf("verify: %s %s", v.stdout, v.stderr)
			}
			// The staging layout: the job wrote to another bucket (another
			// container of the account), copied server-side all the same.
			var other string
			var staging store.Store
			var err error
			if kind == "gcs" {
				other, _ = testenv.GCSBucket(t)
				staging, err = e.raw.(*gcsstore.Store).Sibling(other, "")
			} else {
				other = testenv.AzureContainer(t)
				staging, err = e.raw.(*azstore.Store).Sibling(other, "")
			}
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := parquet.Write(&buf, []sale{{ID: 1, Name: "staged"}, {ID: 2, Name: "staged"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := staging.Put(ctx, "spark-out/dt=2026-09-10/part-00000-abc.c000.snappy.parquet", buf.Bytes(), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			staged := scheme + other + "/spark-out/dt=2026-09-10/"
			r = e.runCLI(t, "commit", "--table", e.url, "--partition", "dt=2026-09-10", staged, "--json")
			c = struct {
				Changed bool  `json:"changed"`
				Rows    int64 `json:"rows"`
			}{}
			if err := json.Unmarshal([]byte(r.stdout), &c); err != nil || r.code != 0 || !c.Changed || c.Rows != 2 {
				t.Fatalf("commit %s from another bucket: %d %s %s", staged, r.code, r.stdout, r.stderr)
			}
			if v := e.runCLI(t, "verify", "--table", e.url, "--partition", "dt=2026-09-10"); v.code != 0 {
				t.Fatalf("verify: %s %s", v.stdout, v.stderr)
			}
			if kind != "gcs" {
				foreign := "abfss://" + other + "@pswapforeign.dfs.core.windows.net/spark-out/dt=2026-09-10/"
				r = e.runCLI(t, "commit", "--table", e.url, "--partition", "dt=2026-09-11", foreign)
				if r.code != 2 || !strings.Contains(r.stderr, "pswapforeign") || !strings.Contains(r.stderr, "SAS") {
					t.Fatalf("commit %s from another account: exit %d, %s; want exit 2 naming the account and the SAS it needs", foreign, r.code, r.stderr)
				}
			}

			bad := wrong + e.bucket + "/spark-out/dt=2026-09-01/"
			r = e.runCLI(t, "commit", "--table", e.url, "--partition", "dt=2026-09-09", bad)
			if r.code != 2 || !strings.Contains(r.stderr, "takes "+scheme) {
				t.Fatalf("commit %s into a %s table: exit %d, %s; want exit 2 naming %s", bad, scheme, r.code, r.stderr, scheme)
			}
		})
	}
}
