package orchestrators

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap/internal/testing/srcdir"
	"github.com/pswap/pswap/swap"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(srcdir.Of(file), "..", "..")
}

// pswapDir builds cmd/pswap from this tree once and returns the folder that
// holds it, to put first on the orchestrator's PATH.
func pswapDir(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "pswap-orch-bin-"); buildErr != nil {
			return
		}
		// scripts/test.sh builds the CLI once for every package of the run.
		if p := os.Getenv("PSWAP_TEST_CLI"); p != "" {
			buildErr = os.Symlink(p, filepath.Join(binDir, "pswap"))
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "pswap"), "./cmd/pswap")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/pswap: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

var (
	siteOnce sync.Once
	siteDir  string
	siteErr  error
)

// pswapSite builds the pswap Python package's wheel around the binary
// pswapDir built (python/build_wheel.py, as scripts/wheels.sh does),
// installs it with pip --target into a folder of its own, once, and
// returns that folder, for the orchestrators' PYTHONPATH: the examples
// import the package as a user's workers do, from its wheel, without
// changing the orchestrators' shared environment.
func pswapSite(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(pswapDir(t), "pswap")
	py := orchPython(t)
	siteOnce.Do(func() {
		siteDir = filepath.Join(binDir, "site")
		dist := filepath.Join(binDir, "dist")
		for _, args := range [][]string{
			{filepath.Join(repoRoot(), "python", "build_wheel.py"), "--binary", bin, "--version", swap.WriterVersion,
				"--platform", "linux_" + map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH], "--out", dist},
		} {
			if out, err := exec.Command(py, args...).CombinedOutput(); err != nil {
				siteErr = fmt.Errorf("build_wheel.py: %w\n%s", err, out)
				return
			}
		}
		wheels, _ := filepath.Glob(filepath.Join(dist, "pswap-*.whl"))
		if len(wheels) != 1 {
			siteErr = fmt.Errorf("build_wheel.py wrote %v, want one wheel", wheels)
			return
		}
		cmd := exec.Command(py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--no-deps",
			"--target", siteDir, wheels[0])
		if out, err := cmd.CombinedOutput(); err != nil {
			siteErr = fmt.Errorf("pip install the pswap wheel: %w\n%s", err, out)
		}
	})
	if siteErr != nil {
		t.Fatal(siteErr)
	}
	return siteDir
}

// installed returns the folder of an environment that script installs
// (scripts/orchestrators.sh, scripts/engines.sh): $envVar when set, else
// what the script prints after installing it or finding it cached.
func installed(t testing.TB, envVar, script string) string {
	t.Helper()
	if d := os.Getenv(envVar); d != "" {
		return d
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(), "scripts", script))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/%s (installs what these tests run): %v", script, err)
	}
	return strings.TrimSpace(string(out))
}

// orchPython is the Python of the orchestrators' virtual environment.
func orchPython(t testing.TB) string {
	t.Helper()
	py := filepath.Join(installed(t, "PSWAP_ORCHESTRATORS", "orchestrators.sh"), "venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("the orchestrators' Python environment is missing (run scripts/orchestrators.sh): %v", err)
	}
	return py
}

// pswapRun runs the pswap under test and returns its stdout.
func pswapRun(t testing.TB, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(filepath.Join(pswapDir(t), "pswap"), args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pswap %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// exitsRe matches the error the examples' wrappers raise for a failed
// pswap, in an orchestrator's log once per failed try (the traceback's last
// line, "RuntimeError: pswap commit exited 1: {") or as the message of an
// error Dagster recorded.
var exitsRe = regexp.MustCompile(`(?m)^(?:[\w.]*(?:Error|Exception|Failure): )?pswap (\w+) exited (-?\d+)`)

// exitsSeen counts the failed pswap runs in a log by command and exit
// status: {"commit 2": 1, ...}.
func exitsSeen(log string) map[string]int {
	n := map[string]int{}
	for _, m := range exitsRe.FindAllStringSubmatch(log, -1) {
		n[m[1]+" "+m[2]]++
	}
	return n
}

// notification is what the examples' notify step appends.
type notification struct {
	IdempotencyKey string `json:"idempotency_key"`
	Partition      string `json:"partition"`
	Rows           int64  `json:"rows"`
	RunID          string `json:"run_id"`
}

func readNotifications(t testing.TB, path string) []notification {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []notification
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var n notification
		if err := json.Unmarshal([]byte(line), &n); err != nil {
			t.Fatalf("notification %q: %v", line, err)
		}
		out = append(out, n)
	}
	return out
}

// agg is a partition's row count and sum of amounts.
type agg struct {
	Rows int64   `json:"rows"`
	Sum  float64 `json:"sum"`
}

// duckRows reads the files `pswap files` lists for the table with DuckDB
// (the engines' environment) and returns rows and sum(amount) per dt.
func duckRows(t testing.TB, env []string, table string) map[string]agg {
	t.Helper()
	var files struct {
		Files []struct{ URI string } `json:"files"`
	}
	if err := json.Unmarshal(pswapRun(t, env, "files", "--table", table, "--json"), &files); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, f := range files.Files {
		uris = append(uris, f.URI)
	}
	sort.Strings(uris)
	in, _ := json.Marshal(uris)
	dir := installed(t, "PSWAP_ENGINES", "engines.sh")
	cmd := exec.Command(filepath.Join(dir, "venv", "bin", "python"), filepath.Join(repoRoot(), "integration", "orchestrators", "duckrows.py"))
	cmd.Env = append(env, "TZ=UTC")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB read of %d files: %v\n%s", len(uris), err, stderr.String())
	}
	got := map[string]agg{}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("duckrows.py: %v: %s", err, out)
	}
	return got
}
