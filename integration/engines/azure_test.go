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

// TestAzureViews commits a table on Azure Blob Storage (Azurite) with its
// Iceberg and Delta views, replaces one partition, and has PyIceberg
// (adlfs) and delta-rs read both views: each must see exactly the rows
// committed (count and sum), and a filter on one partition must plan its
// one file; DuckDB (azure extension) reads the data files pswap lists
// exactly. (DuckDB reads abfss:// through the Data Lake endpoint, which
// Azurite lacks: its iceberg_scan of the view cannot reach the emulator.)
func TestAzureViews(t *testing.T) {
	if !testenv.AzureEnabled() {
		t.Skip("Azure tests need Azurite: run scripts/test.sh")
	}
	url := testenv.AzureURL(t)
	tb := &table{t: t, store: "azurite", url: url, root: url, dir: t.TempDir()}
	// Rows id, amount = id * 1.5 (+ 1000 for the replacement).
	input := func(name string, n int, add float64) string {
		var b strings.Builder
		b.WriteString("id,amount\n")
		for i := range n {
			fmt.Fprintf(&b, "%d,%g\n", i, float64(i)*1.5+add)
		}
		return tb.write(name, b.String())
	}
	sum := func(n int, add float64) float64 { return float64(n*(n-1))/2*1.5 + float64(n)*add }
	tb.run("commit", "--partition", "dt=2026-12-01", "--delta", input("a.csv", 100, 0))
	tb.run("commit", "--partition", "dt=2026-12-02", "--delta", input("b.csv", 50, 0))
	out := tb.run("commit", "--partition", "dt=2026-12-02", "--delta", "--json", input("c.csv", 70, 1000))
	var res struct {
		Metadata string `json:"metadata_location"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !strings.HasPrefix(res.Metadata, "abfss://") {
		t.Fatalf("commit output: %v %q", err, out)
	}
	wantRows, wantSum := 170, sum(100, 0)+sum(70, 1000)
	tableLoc := strings.TrimSuffix(res.Metadata, "/metadata/"+filepath.Base(res.Metadata))

	dir, err := enginesDir()
	if err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(dir, "venv", "bin", "python")
	if err := exec.Command(py, "-c", "import adlfs, duckdb_extension_azure").Run(); err != nil {
		t.Fatalf("the engines' environment has no adlfs or DuckDB azure extension (%v): rerun scripts/engines.sh, which installs them pinned", err)
	}
	// The current files as DuckDB's azure extension reads them on the
	// emulator: az://container/key.
	args := []string{filepath.Join(repoRoot(), "integration", "engines", "azure_views.py"),
		res.Metadata, tableLoc, "amount", "dt", "2026-12-02"}
	for _, f := range strings.Fields(tb.run("files", "--format", "uris")) {
		rest, ok := strings.CutPrefix(f, "abfss://")
		container, after, _ := strings.Cut(rest, "@")
		_, key, _ := strings.Cut(after, "/")
		if !ok || key == "" {
			t.Fatalf("files lists %q, want abfss://container@account.../key", f)
		}
		args = append(args, "az://"+container+"/"+key)
	}
	cmd := exec.Command(py, args...)
	cmd.Env = os.Environ()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("azure_views.py: %v\n%s", err, stderr.String())
	}
	var got map[string]struct {
		Rows        int     `json:"rows"`
		Sum         float64 `json:"sum"`
		PrunedFiles int     `json:"pruned_files"`
		PrunedRows  int     `json:"pruned_rows"`
		Files       int     `json:"files"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("azure_views.py output %q: %v", raw, err)
	}
	for _, engine := range []string{"pyiceberg", "deltalake", "duckdb"} {
		g, ok := got[engine]
		if !ok || g.Rows != wantRows || g.Sum != wantSum {
			t.Errorf("%s read %+v (present %v), want %d rows summing to %g", engine, g, ok, wantRows, wantSum)
		}
	}
	if g := got["pyiceberg"]; g.PrunedFiles != 1 || g.PrunedRows != 70 {
		t.Errorf("pyiceberg planned %d files (%d rows) for dt=2026-12-02, want 1 (70)", g.PrunedFiles, g.PrunedRows)
	}
	if g := got["deltalake"]; g.Files != 2 {
		t.Errorf("delta-rs sees %d files, want 2 (one per partition)", g.Files)
	}
	t.Logf("on Azurite: %s", raw)
}
