package engines

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
)

// jvmOptions are the Java options of every JVM the package starts (the
// engines' Spark session, the README's Spark snippets, Spark's own launcher
// JVM before each), through JDK_JAVA_OPTIONS unless the environment sets
// it. A test's JVM lives for minutes at most and runs mostly code it runs
// once: the C1 compiler alone (no C2 tier) and the serial collector take
// 0.57x the JVM's CPU time of the defaults on the same Spark work (58.8 s
// to 33.6 s, Delta writes, VACUUM, a Parquet table), on a 2-core machine
// that go test shares with the other packages.
const jvmOptions = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("JDK_JAVA_OPTIONS"); !ok {
		os.Setenv("JDK_JAVA_OPTIONS", jvmOptions)
	}
	flag.Parse()
	prewarm()
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
