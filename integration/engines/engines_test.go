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
