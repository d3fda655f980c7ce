package engines

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopReader()
	testenv.StopPostgres()
	testenv.StopRESTCatalog()
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

// TestReadmeSnippets runs the README's engine snippets (each a python block
// after a "<!-- snippet: NAME -->" line) as a user would, each in a Python
// process of its own, on the CSV table of the quick start: each prints the
// rows of dt=2026-11-28, which must be what pswap says.
func TestReadmeSnippets(t *testing.T) {
	snippets := readmeSnippets(t, "snippet")
	if len(snippets) != 3 {
		t.Fatalf("README has %d engine snippets, want pyiceberg, duckdb and spark", len(snippets))
	}
	dir, err := enginesDir()
	if err != nil {
		t.Fatal(err)
	}
	tb := &table{t: t, store: "file", dir: t.TempDir()}
	tb.url = filepath.Join(tb.dir, "sales")
	tb.root = tb.url
	data := filepath.Join(repoRoot(), "examples", "data")
	for _, d := range []string{"2026-11-27", "2026-11-28"} {
		tb.run("commit", "--partition", "dt="+d, filepath.Join(data, "sales", d+".csv"))
	}
	tb.run("commit", "--partition", "dt=2026-11-28", filepath.Join(data, "sales-corrected"))
	cur := tb.record("load")
	var want int64
	for _, f := range cur.files {
		if f.Partition == "dt=2026-11-28" {
			want += f.Rows
		}
	}
	home := duckHome(t)
	py := filepath.Join(dir, "venv", "bin", "python")
	jars := engineJars(dir)
	for _, name := range []string{"pyiceberg", "duckdb", "spark"} {
		t.Run(name, func(t *testing.T) {
			prelude := fmt.Sprintf("table = %q\nmetadata = %q\njars = %q\n", tb.root, cur.metadata, strings.Join(jars, ","))
			if got := runPython(t, py, prelude+snippets[name], "HOME="+home); got != fmt.Sprint(want) {
				t.Errorf("the README's %s snippet printed %q, want %d (the rows pswap lists for dt=2026-11-28)", name, got, want)
			}
		})
	}
}

// duckHome returns a home folder in which DuckDB finds the extensions of
// the engines' packages as if INSTALLed (~/.duckdb/extensions/<version>/
// <platform>), so that a user's SQL (INSTALL httpfs; LOAD httpfs; LOAD
// iceberg) runs as it is, without a download.
func duckHome(t testing.TB) string {
	t.Helper()
	dir, err := enginesDir()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	setup := `import duckdb, importlib, os, glob, sys
plat = duckdb.execute("PRAGMA platform").fetchone()[0]
v = duckdb.__version__
dst = os.path.join(sys.argv[1], ".duckdb", "extensions", v if v.startswith("v") else "v" + v, plat)
os.makedirs(dst)
for name in ("iceberg", "avro", "httpfs", "aws", "delta"):
    m = importlib.import_module("duckdb_extension_" + name)
    for f in glob.glob(os.path.join(os.path.dirname(m.__file__), "extensions", "*", "*.duckdb_extension")):
        os.symlink(f, os.path.join(dst, os.path.basename(f)))
`
	py := filepath.Join(dir, "venv", "bin", "python")
	if out, err := exec.Command(py, "-c", setup, home).CombinedOutput(); err != nil {
		t.Fatalf("install the packaged DuckDB extensions: %v\n%s", err, out)
	}
	return home
}

// engineJars lists the jars of the engines folder dir (Spark's spark.jars).
func engineJars(dir string) []string {
	var jars []string
	entries, _ := os.ReadDir(filepath.Join(dir, "jars"))
	for _, e := range entries {
		jars = append(jars, filepath.Join(dir, "jars", e.Name()))
	}
	return jars
}

// readmeSnippets returns the README's code blocks that follow a
// "<!-- KIND: NAME -->" line, by name.
func readmeSnippets(t *testing.T, kind string) map[string]string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippets := map[string]string{}
	for _, part := range strings.Split(string(readme), "<!-- "+kind+": ")[1:] {
		name, rest, _ := strings.Cut(part, " -->")
		_, code, ok := strings.Cut(rest, "```")
		_, code, _ = strings.Cut(code, "\n") // the fence's language
		code, _, ok2 := strings.Cut(code, "```")
		if !ok || !ok2 {
			t.Fatalf("README: %s %s has no code block", kind, name)
		}
		snippets[name] = code
	}
	return snippets
}

// runPython runs code with the engines' Python (py), in the environment
// plus env, and returns the last line it printed; a failure fails the test.
func runPython(t *testing.T, py, code string, env ...string) string {
	t.Helper()
	cmd := exec.Command(py, "-c", code)
	cmd.Env = append(append(os.Environ(), "TZ=UTC"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(stderr.String(), 3000))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
