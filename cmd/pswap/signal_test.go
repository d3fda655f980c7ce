package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/testenv"
)

// pswapBinary returns a path that runs this test binary as pswap (see
// TestMain).
func pswapBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "pswap")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

type procResult struct {
	code           int
	stdout, stderr string
}

func runPswap(t *testing.T, bin string, stdin io.Reader, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return procResult{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

// signalTable is the table the signal tests write: a local folder, and a
// prefix of the MinIO bucket when S3 tests are enabled.
func signalTables(t *testing.T) map[string]string {
	tables := map[string]string{"file": "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "sales"))}
	if testenv.S3Enabled() {
		tables["s3"] = testenv.S3URL(t) + "/signal/sales"
	}
	return tables
}

// A real pswap process, interrupted by a real SIGINT or SIGTERM while it
// reads a commit's input from a pipe, exits 130 or 143 (never 2, "bad
// input"), says that nothing was committed and which generation readers
// still see, and leaves that generation current.
func TestInterruptedCommit(t *testing.T) {
	t.Parallel()
	bin := pswapBinary(t)
	for name, table := range signalTables(t) {
		t.Run(name, func(t *testing.T) {
			const part = "dt=2026-11-29"
			first := runPswap(t, bin, strings.NewReader("id,v\n1,a\n2,b\n"),
				"commit", "--table", table, "--partition", part, "--run-id", "r1", "--input-format", "csv", "--json", "-")
			if first.code != 0 {
				t.Fatalf("first commit: exit %d: %s", first.code, first.stderr)
			}
			var res struct{ Generation string }
			if err := json.Unmarshal([]byte(first.stdout), &res); err != nil || res.Generation == "" {
				t.Fatalf("first commit: %v: %s", err, first.stdout)
			}
			for i, tc := range []struct {
				sig  syscall.Signal
				name string
				code int
				json bool
			}{
				{syscall.SIGINT, "SIGINT", exitInterrupted, false},
				{syscall.SIGTERM, "SIGTERM", exitTerminated, false},
				{syscall.SIGINT, "SIGINT", exitInterrupted, true},
			} {
				args := []string{"commit", "--table", table, "--partition", part, "--run-id", fmt.Sprintf("r-sig-%d", i), "--input-format", "csv", "-"}
				if tc.json {
					args = append(args, "--json")
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				w, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// Write far more than a pipe holds: once these writes
				// return, the process is running and reading the input.
				chunk := []byte(strings.Repeat("3,ccccccccccccccccccccccccccccc\n", 1024))
				if _, err := w.Write([]byte("id,v\n")); err != nil {
					t.Fatal(err)
				}
				for range 16 {
					if _, err := w.Write(chunk); err != nil {
						t.Fatal(err)
					}
				}
				if err := cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					cmd.Process.Kill()
					t.Fatalf("%s: pswap did not stop within 30s", tc.name)
				}
				w.Close()
				stderr := errb.String()
				if got := cmd.ProcessState.ExitCode(); got != tc.code {
					t.Fatalf("%s: exit %d, want %d: %s", tc.name, got, tc.code, stderr)
				}
				if strings.Contains(stderr, "bad input") || strings.Contains(stderr, "bad_input") {
					t.Errorf("%s: reported as bad input: %s", tc.name, stderr)
				}
				wantState := "nothing was committed: " + part + " still shows generation " + res.Generation
				if !strings.Contains(stderr, "interrupted by "+tc.name) || !strings.Contains(stderr, wantState) {
					t.Errorf("%s: stderr does not say it was interrupted and what is visible (want %q):\n%s", tc.name, wantState, stderr)
				}
				if tc.json {
					var doc errorDoc
					if err := json.Unmarshal(errb.Bytes(), &doc); err != nil || doc.Error.Code != "interrupted" || doc.Error.Exit != tc.code {
						t.Errorf("%s --json: stderr is not the interrupted error document (%v): %s", tc.name, err, stderr)
					}
				}
				if out.Len() != 0 {
					t.Errorf("%s: stdout of an interrupted commit: %q", tc.name, out.String())
				}
				// The store agrees: the first generation is current and whole.
				show := runPswap(t, bin, nil, "show", "--table", table, "--partition", part, "--json")
				if show.code != 0 || !strings.Contains(show.stdout, res.Generation) || !strings.Contains(show.stdout, `"r1"`) {
					t.Fatalf("%s: after the interrupt: exit %d: %s %s", tc.name, show.code, show.stdout, show.stderr)
				}
				if v := runPswap(t, bin, nil, "verify", "--table", table, "--partition", part); v.code != 0 {
					t.Fatalf("%s: verify after the interrupt: exit %d: %s %s", tc.name, v.code, v.stdout, v.stderr)
				}
			}
		})
	}
}

// --timeout bounds the whole command: a commit whose input never ends
// stops with code "timeout" (exit 1), says nothing was committed, and
// leaves nothing visible.
func TestTimeoutBoundsTheCommand(t *testing.T) {
	t.Parallel()
	bin := pswapBinary(t)
	table := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "sales"))
	cmd := exec.Command(bin, "commit", "--table", table, "--partition", "dt=2026-11-29", "--input-format", "csv",
		"--timeout", "300ms", "--json", "-")
	cmd.Env = append(cleanEnv(), "PSWAP_TIMEOUT=1h") // the flag wins over the variable
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte("id\n1\n")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("--timeout 300ms: still running after 60s")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFailure {
		t.Fatalf("exit %d, want 1: %s", code, errb.String())
	}
	var doc errorDoc
	if err := json.Unmarshal(errb.Bytes(), &doc); err != nil {
		t.Fatalf("stderr is not a JSON error document: %v: %s", err, errb.String())
	}
	if doc.Error.Code != "timeout" || !strings.Contains(doc.Error.Message, "timed out after 300ms (--timeout)") ||
		!strings.Contains(doc.Error.Message, "nothing was committed: dt=2026-11-29 still has no data") || doc.Error.Hint == "" {
		t.Errorf("error document: %+v", doc.Error)
	}
	// The slow step was the input, on a local table: the hint must not
	// blame the store alone.
	if !strings.Contains(doc.Error.Hint, "reading and converting the inputs") || strings.Contains(doc.Error.Hint, "store answered too slowly") {
		t.Errorf("hint blames the store for a slow input: %q", doc.Error.Hint)
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out.String())
	}
	if r := runPswap(t, bin, nil, "show", "--table", table, "--partition", "dt=2026-11-29"); r.code != 1 {
		t.Errorf("show after the timeout: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}
