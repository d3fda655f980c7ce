package engines

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pswap/pswap/partition"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopReader()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestEngineVersions logs the versions the suite ran with.
func TestEngineVersions(t *testing.T) {
	var v map[string]string
	if err := call(t, map[string]any{"op": "versions"}, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"duckdb", "pyiceberg", "pyspark"} {
		if v[k] == "" {
			t.Errorf("no version for %s: %v", k, v)
		}
	}
	t.Logf("engines: %v", v)
}

// TestCSV: three days from CSV, one replaced, one re-run as a retry.
func TestCSV(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		data := filepath.Join(repoRoot(), "examples", "data")
		for _, d := range []string{"2026-11-27", "2026-11-28", "2026-11-29"} {
			tb.run("commit", "--partition", "dt="+d, "--run-id", "daily-"+d, filepath.Join(data, "sales", d+".csv"))
			tb.record("commit " + d)
		}
		tb.run("commit", "--partition", "dt=2026-11-28", "--run-id", "fix-2026-11-28", filepath.Join(data, "sales-corrected"))
		tb.record("replace 2026-11-28")
		tb.checkEngines("dt")
	})
}

// TestEscapedPartitionValues: a two-column layout whose string column
// holds values that need escaping in a folder name.
func TestEscapedPartitionValues(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		regions := []string{"us east", "50%", "zürich", "x:y", "a#b"}
		for i, r := range regions {
			in := tb.write(fmt.Sprintf("r%d.csv", i), fmt.Sprintf("id,amount\n%d,%d.5\n%d,%d.25\n", i, i, i+100, i))
			tb.run("commit", "--partition", "dt=2026-11-29/region="+escape(r), in)
			tb.record("commit " + r)
		}
		tb.checkEngines("region")
	})
}

// escape is Hive's escaping of a partition value (partition.Escape).
func escape(v string) string { return partition.Escape(v) }

// TestDuckDBParquetPartitioned: DuckDB's PARTITION_BY output, with the
// types engines write (decimal, date, timestamps with and without zone,
// list, struct, map), committed with commit --partitioned, then a second
// load replacing one day.
func TestDuckDBParquetPartitioned(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		query := func(seed int) string {
			return fmt.Sprintf(`SELECT i AS id,
				CAST(i * 1.25 + %[1]d AS DECIMAL(12,2)) AS price,
				DATE '2026-01-01' + CAST(i AS INTEGER) AS day,
				TIMESTAMP '2026-11-29 10:00:00' + INTERVAL (i) MINUTE AS local_ts,
				TIMESTAMPTZ '2026-11-29 10:00:00+00' + INTERVAL (i * 7) SECOND AS ts,
				[i, i + %[1]d] AS tags,
				{'a': i, 'b': 'x' || i} AS info,
				MAP {'k' || i: i * 2} AS attrs,
				'2026-11-2' || (7 + i %% 3) AS dt
				FROM range(30) t(i)`, seed)
		}
		out := filepath.Join(tb.dir, "duck1")
		tb.duckWrite(query(0), out, "FORMAT parquet, PARTITION_BY (dt)")
		tb.run("commit", "--partitioned", out)
		tb.record("partitioned load")
		out2 := filepath.Join(tb.dir, "duck2")
		tb.duckWrite(query(5)+" WHERE i % 3 = 1", out2, "FORMAT parquet, PARTITION_BY (dt)")
		tb.run("commit", "--partitioned", out2)
		tb.record("partitioned replace")
		tb.checkEngines("dt")
	})
}
