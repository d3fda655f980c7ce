package pswap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store/memstore"
)

// An engine wrote a backfill as dt=... folders (DuckDB's COPY ...
// PARTITION_BY, Spark's partitionBy); one call commits each folder as its
// own partition, each atomically, and publishes the table's views once.
func ExampleTable_CommitPartitioned() {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "backfill")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	type sale struct {
		ID     int64   `parquet:"id"`
		Amount float64 `parquet:"amount"`
	}
	for _, day := range []string{"2026-11-27", "2026-11-28", "2026-11-29"} {
		dir := filepath.Join(root, "dt="+day)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			panic(err)
		}
		if err := parquet.WriteFile(filepath.Join(dir, "data_0.parquet"), []sale{{1, 9.5}, {2, 3.25}}); err != nil {
			panic(err)
		}
	}

	t := pswap.NewTable(memstore.New())
	res, err := t.CommitPartitioned(ctx, root, pswap.PartitionedOptions{
		Write:   pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "backfill-2026-11"}},
		Publish: &pswap.PublishOptions{},
	})
	if err != nil {
		panic(err) // a folder that is no partition: nothing was committed
	}
	for _, p := range res.Partitions {
		if p.Err != nil {
			fmt.Println(p.Partition, "failed:", p.Err)
			continue
		}
		fmt.Println(p.Partition, p.Result.Outcome, p.Result.Rows, "rows, run", p.RunID)
	}
	fmt.Println(res.Committed, "committed; Iceberg version", res.Published.Version)
	// Output:
	// dt=2026-11-27 committed 2 rows, run backfill-2026-11/dt=2026-11-27
	// dt=2026-11-28 committed 2 rows, run backfill-2026-11/dt=2026-11-28
	// dt=2026-11-29 committed 2 rows, run backfill-2026-11/dt=2026-11-29
	// 3 committed; Iceberg version 1
}
