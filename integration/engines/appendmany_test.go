package engines

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestAppendViewsMany: many appends to one partition (40 by default,
// PSWAP_ENGINES_APPENDS), beside another partition of its month. The
// Iceberg publish of an append writes a manifest of the run's files
// alone, and merges a partition's append manifests as a counter of base
// 4 (internal/lakehouse, appends.go): the snapshots recorded cross merges
// of one, two and three levels, and a commit of the other partition of
// the month folds the appends into the group's manifest. Spark, PyIceberg
// and DuckDB read exactly the rows of every recorded snapshot, a filter
// on the appended partition plans exactly its files, and delta-rs, Polars,
// DuckDB and Spark read the Delta log's latest version.
func TestAppendViewsMany(t *testing.T) {
	n := 40
	if v, err := strconv.Atoi(os.Getenv("PSWAP_ENGINES_APPENDS")); err == nil && v > 0 {
		n = v
	}
	forEachStore(t, func(t *testing.T, tb *table) {
		dt := &deltaTable{table: tb, parts: map[string][]map[string]any{}, cols: []string{"amount", "city", "dt", "order_id"}}
		part := "dt=2026-11-29"
		commitCSV := func(part, run string, appending bool, lines ...string) int64 {
			in := tb.write(run+".csv", "order_id,city,amount\n"+strings.Join(lines, "\n")+"\n")
			args := []string{"commit", "--partition", part, "--run-id", run}
			if appending {
				args = append(args, "--append")
			}
			doc := dt.deltaCommit(append(args, in)...)
			rows := csvRows(strings.TrimPrefix(part, "dt="), lines...)
			if appending {
				dt.parts[part] = append(dt.parts[part], rows...)
			} else {
				dt.parts[part] = rows
			}
			return int64(doc["delta_version"].(float64))
		}
		commitCSV("dt=2026-11-28", "other", false, "100,Lisbon,1.5", "101,Porto,2.5")
		tb.record("the other partition")
		for i := range n {
			v := commitCSV(part, fmt.Sprintf("run-%d", i), true, fmt.Sprintf("%d,Faro,%d.5", i, i))
			if i == n/2 {
				// The other partition's commit: the group's manifest is
				// written anew and folds the appends in.
				commitCSV("dt=2026-11-28", "other-2", false, "102,Braga,3.5")
				tb.record(fmt.Sprintf("append %d, then a commit of the other partition", i+1))
				continue
			}
			if i == 3 || i == 16 || i == n-1 {
				tb.record(fmt.Sprintf("append %d", i+1))
			}
			if i == n-1 {
				dt.record(fmt.Sprintf("append %d", i+1), v)
			}
		}
		tb.checkEngines("dt")
		if tb.store == "file" {
			dt.check(fmt.Sprintf("after %d appends", n), true)
		}
	})
}
