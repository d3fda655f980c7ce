package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
)

// gcsRead is what one engine read of a GCS table: now, and (steps) at
// each commit's snapshot or version.
type gcsRead struct {
	Rows        int     `json:"rows"`
	Sum         float64 `json:"sum"`
	PrunedFiles int     `json:"pruned_files"`
	PrunedRows  int     `json:"pruned_rows"`
	Files       int     `json:"files"`
	Version     int     `json:"version"`
	Steps       []struct {
		Rows       int     `json:"rows"`
		Sum        float64 `json:"sum"`
		SnapshotID int64   `json:"snapshot_id"`
	} `json:"steps"`
}

// TestGCSViews commits a table on Google Cloud Storage (fake-gcs-server)
// with its Iceberg and Delta views, four commits (three partitions, one of
// them replaced), and has every engine read both views on the emulator,
// exactly (row count and sum): PyIceberg through gcsfs and delta-rs through
// its object store, now and at every commit's snapshot or version (time
// travel); DuckDB's iceberg_scan (at every snapshot) and delta_scan through
// its GCS (XML API) support; DuckDB's read_parquet of the files pswap
// lists. A filter on one partition must plan its one file.
func TestGCSViews(t *testing.T) {
	if !testenv.GCSEnabled() {
		t.Skip("GCS tests need fake-gcs-server: run scripts/test.sh")
	}
	url := testenv.GCSURL(t)
	tb := &table{t: t, store: "gcs", url: url, root: url, dir: t.TempDir()}
	// Rows id, amount = id * 1.5 + add: every sum is exact in a float.
	input := func(name string, n int, add float64) string {
		var b strings.Builder
		b.WriteString("id,amount\n")
		for i := range n {
			fmt.Fprintf(&b, "%d,%g\n", i, float64(i)*1.5+add)
		}
		return tb.write(name, b.String())
	}
	sum := func(n int, add float64) float64 { return float64(n*(n-1))/2*1.5 + float64(n)*add }
	type step struct {
		Metadata     string `json:"metadata"`
		DeltaVersion int    `json:"delta_version"`
		rows         int
		sum          float64
	}
	commits := []struct {
		part string
		n    int
		add  float64
	}{
		{"dt=2026-12-01", 100, 0},
		{"dt=2026-12-02", 50, 0},
		{"dt=2026-12-02", 70, 1000}, // replaces the 50 rows
		{"dt=2026-12-03", 30, 500},
	}
	current := map[string][2]float64{} // partition -> rows, sum
	var steps []step
	for i, c := range commits {
		out := tb.run("commit", "--partition", c.part, "--delta", "--json", input(fmt.Sprintf("in-%d.csv", i), c.n, c.add))
		var res struct {
			Metadata     string `json:"metadata_location"`
			DeltaVersion *int   `json:"delta_version"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || !strings.HasPrefix(res.Metadata, "gs://") || res.DeltaVersion == nil {
			t.Fatalf("commit %d output: %v %q", i, err, out)
		}
		current[c.part] = [2]float64{float64(c.n), sum(c.n, c.add)}
		s := step{Metadata: res.Metadata, DeltaVersion: *res.DeltaVersion}
		for _, v := range current {
			s.rows += int(v[0])
			s.sum += v[1]
		}
		steps = append(steps, s)
	}
	last := steps[len(steps)-1]
	tableLoc := strings.TrimSuffix(last.Metadata, "/metadata/"+filepath.Base(last.Metadata))
	if tableLoc != url {
		t.Fatalf("the Iceberg metadata %s is not under the table %s", last.Metadata, url)
	}

	dir, err := enginesDir()
	if err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(dir, "venv", "bin", "python")
	if err := exec.Command(py, "-c", "import gcsfs, deltalake, duckdb_extension_httpfs").Run(); err != nil {
		t.Fatalf("the engines' environment has no gcsfs (%v): rerun scripts/engines.sh, which installs it pinned", err)
	}
	req, err := json.Marshal(map[string]any{
		"table": url, "metadata": last.Metadata, "steps": steps,
		"files": strings.Fields(tb.run("files", "--format", "uris")),
		"sum":   "amount", "part_col": "dt", "part_value": "2026-12-02",
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join(repoRoot(), "integration", "engines", "gcs_views.py"))
	cmd.Env = append(os.Environ(), "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false")
	cmd.Stdin = strings.NewReader(string(req))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("gcs_views.py: %v\n%s", err, stderr.String())
	}
	var got map[string]gcsRead
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("gcs_views.py output %q: %v", raw, err)
	}
	for _, engine := range []string{"pyiceberg", "deltalake", "duckdb_iceberg", "duckdb_delta", "duckdb_files"} {
		g, ok := got[engine]
		if !ok || g.Rows != last.rows || g.Sum != last.sum {
			t.Errorf("%s read %d rows summing to %g (present %v), want %d rows summing to %g", engine, g.Rows, g.Sum, ok, last.rows, last.sum)
		}
	}
	// Time travel: every commit's snapshot (Iceberg) and version (Delta).
	snapshots := map[int64]bool{}
	for _, engine := range []string{"pyiceberg", "deltalake", "duckdb_iceberg"} {
		g := got[engine]
		if len(g.Steps) != len(steps) {
			t.Errorf("%s read %d snapshots or versions, want %d", engine, len(g.Steps), len(steps))
			continue
		}
		for i, s := range steps {
			if g.Steps[i].Rows != s.rows || g.Steps[i].Sum != s.sum {
				t.Errorf("%s at commit %d (%s, Delta version %d) read %d rows summing to %g, want %d summing to %g",
					engine, i+1, filepath.Base(s.Metadata), s.DeltaVersion, g.Steps[i].Rows, g.Steps[i].Sum, s.rows, s.sum)
			}
			if engine == "pyiceberg" {
				snapshots[g.Steps[i].SnapshotID] = true
			}
		}
	}
	if len(snapshots) != len(steps) {
		t.Errorf("the %d commits have %d distinct Iceberg snapshots", len(steps), len(snapshots))
	}
	if g := got["pyiceberg"]; g.PrunedFiles != 1 || g.PrunedRows != 70 {
		t.Errorf("pyiceberg planned %d files (%d rows) for dt=2026-12-02, want 1 (70)", g.PrunedFiles, g.PrunedRows)
	}
	if g := got["deltalake"]; g.Files != 3 || g.Version != last.DeltaVersion {
		t.Errorf("delta-rs sees %d files at version %d, want 3 (one per partition) at %d", g.Files, g.Version, last.DeltaVersion)
	}
	if g := got["duckdb_files"]; g.Files != 3 {
		t.Errorf("pswap files listed %d files, want 3", g.Files)
	}
	t.Logf("on fake-gcs-server: %s", raw)
}
