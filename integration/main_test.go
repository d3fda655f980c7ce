package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/race"
	"github.com/pswap/pswap/internal/testing/srcdir"
)

// Knobs of the suite (environment variables):
//
//	PSWAP_STRESS=1      the full run: hundreds of kills, thousands of commits
//	                    through faults, more racing rounds (tens of minutes)
//	PSWAP_SEED=N        replay the random choices of a run (logged by each test)
//	PSWAP_TEST_S3=1     (and the AWS_* variables) the MinIO half; see scripts/minio.sh
//
// Every test logs a summary line of what it did, and TestMain prints the
// totals of the run.

// envStress turns on the full run: hundreds of kills, thousands of commits
// through faults. The default run is short enough for CI.
const envStress = "PSWAP_STRESS"

// stress reports whether the full run was asked for.
func stress() bool {
	v := strings.TrimSpace(os.Getenv(envStress))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// scale returns def, or full under PSWAP_STRESS.
func scale(def, full int) int {
	if stress() {
		return full
	}
	return def
}

// newRand returns a random source seeded from $PSWAP_SEED, or from the
// clock; the seed is logged so that a failing run can be replayed (as far
// as the scheduling of processes allows).
func newRand(t testing.TB) *rand.Rand {
	seed, err := strconv.ParseUint(os.Getenv("PSWAP_SEED"), 10, 64)
	if err != nil {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("PSWAP_SEED=%d", seed)
	return rand.New(rand.NewPCG(seed, 0x5eed))
}

// totals counts what the whole run did, for the closing summary line.
var totals struct {
	kills, killsLanded                  atomic.Int64 // processes SIGKILLed; of those, the ones whose commit had landed
	faults, requests                    atomic.Int64 // faults injected by proxies; requests they saw
	commits, failures, unknowns, reruns atomic.Int64 // commits through faults that succeeded; failed; ended unknown; re-runs
	races                               atomic.Int64 // racing processes run
	badInputs                           atomic.Int64 // bad inputs tried
	checks, violations                  atomic.Int64 // invariant checks run; invariant violations found
	duckChecks                          atomic.Int64 // partitions counted by DuckDB
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopDuck()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if totals.checks.Load() > 0 {
		fmt.Printf("integration totals: kills=%d (landed before the kill: %d) faults=%d/%d requests commits-through-faults=%d failed=%d unknown=%d re-runs=%d races=%d bad-inputs=%d invariant-checks=%d duckdb-partitions=%d violations=%d\n",
			totals.kills.Load(), totals.killsLanded.Load(), totals.faults.Load(), totals.requests.Load(),
			totals.commits.Load(), totals.failures.Load(), totals.unknowns.Load(), totals.reruns.Load(),
			totals.races.Load(), totals.badInputs.Load(), totals.checks.Load(), totals.duckChecks.Load(),
			totals.violations.Load())
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// pswapBin builds the CLI once per test run and returns its path.
func pswapBin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		// scripts/test.sh builds the CLI once for every package of the
		// run, with and without the race detector.
		env := "PSWAP_TEST_CLI"
		if race.Enabled {
			env = "PSWAP_TEST_CLI_RACE"
		}
		if p := os.Getenv(env); p != "" {
			binPath = p
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(srcdir.Of(file))
		binDir, buildErr = os.MkdirTemp("", "pswap-integration-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "pswap")
		args := []string{"build", "-o", binPath}
		if race.Enabled {
			// Reuse the race-instrumented packages the test itself was built
			// from, and check the CLI for data races while at it.
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "./cmd/pswap")...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/pswap: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// raceStores are the stores whose pswap processes are race-built under
// -race: the local directory and MinIO. On fake-gcs-server and Azurite the
// tests run the plain CLI scripts/test.sh builds ($PSWAP_TEST_CLI) when it
// names one: every test still runs on all four stores and checks what it
// checks, and the CLI's store-independent code runs under the race
// detector in the file and MinIO runs of the same tests (the GCS and Azure
// stores' own code in their packages' race-enabled tests). A race-built
// process costs several times a plain one's CPU, and the suite starts
// about 1,500 of them; the package's CPU is what bounds its time in a
// loaded go test run.
var raceStores = map[string]bool{"file": true, "minio": true}

// cliResult is one finished CLI process.
type cliResult struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// commitJSON is the --json document of commit.
type commitJSON struct {
	Table      string `json:"table"`
	Partition  string `json:"partition"`
	Generation string `json:"generation"`
	Changed    bool   `json:"changed"`
	Outcome    string `json:"outcome"`
	Rows       int64  `json:"rows"`
	RunID      string `json:"run_id"`
	Seq        int64  `json:"seq"`
	Staged     string `json:"staged_generation"`
}

func (r cliResult) commit(t testing.TB) commitJSON {
	t.Helper()
	var c commitJSON
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("commit --json printed %q: %v (stderr %q)", r.stdout, err, r.stderr)
	}
	return c
}

// cli prepares a pswap process on an environment (args after "pswap").
func (e *tableEnv) cli(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	bin := pswapBin(t)
	if plain := os.Getenv("PSWAP_TEST_CLI"); race.Enabled && plain != "" && !raceStores[e.kind] {
		bin = plain
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = e.cliEnv()
	return cmd
}

// runCLI runs pswap to completion.
func (e *tableEnv) runCLI(t testing.TB, args ...string) cliResult {
	t.Helper()
	return startProc(t, e.cli(t, args...)).wait()
}

// proc is a started process with captured output.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	t0             time.Time
}

// startProc starts cmd, capturing its output.
func startProc(t testing.TB, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd}
	cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
	p.t0 = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// kill sends SIGKILL.
func (p *proc) kill() { _ = p.cmd.Process.Kill() }

// wait waits for the process to end and returns its result (code -1: killed
// by a signal).
func (p *proc) wait() cliResult {
	err := p.cmd.Wait()
	r := cliResult{elapsed: time.Since(p.t0), stdout: p.stdout.String(), stderr: p.stderr.String()}
	if err != nil {
		r.code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.code = ee.ExitCode()
		}
	}
	return r
}

// gcCmd prepares a `pswap gc` process on the table: keep one retired
// generation and no reader window, and the given orphan age (0: the
// default). A short orphan age comes with an equally short commit window:
// callers that pass one promise that no writer is running.
func (e *tableEnv) gcCmd(t testing.TB, orphanAge time.Duration) *exec.Cmd {
	t.Helper()
	args := []string{"gc", "--table", e.url, "--keep", "1", "--min-age", "0", "--json"}
	if orphanAge > 0 {
		args = append(args, "--orphan-age", orphanAge.String(), "--commit-window", orphanAge.String())
	}
	return e.cli(t, args...)
}
