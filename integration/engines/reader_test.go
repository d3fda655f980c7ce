package engines

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/srcdir"
)

// The engines' process (reader.py) is started once per test package, on
// the first request, and serves every test: Spark's JVM starts once.
var (
	readerMu   sync.Mutex
	readerProc *readerProcess
	readerErr  error
)

// readerProcess is the running reader.py with its pipes.
type readerProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

// repoRoot is the module's root folder.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(srcdir.Of(file)))
}

// enginesDir is the folder scripts/engines.sh installed the engines in:
// $PSWAP_ENGINES, or what the script prints (it installs them the first
// time, then reuses them).
func enginesDir() (string, error) {
	if d := os.Getenv("PSWAP_ENGINES"); d != "" {
		return d, nil
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(), "scripts", "engines.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/engines.sh (installs the engines the tests read with): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func startReader() (*readerProcess, error) {
	dir, err := enginesDir()
	if err != nil {
		return nil, err
	}
	py := filepath.Join(dir, "venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return nil, fmt.Errorf("the engines' Python environment is missing (run scripts/engines.sh): %w", err)
	}
	cmd := exec.Command(py, "-u", filepath.Join(repoRoot(), "integration", "engines", "reader.py"))
	cmd.Env = append(os.Environ(), "PSWAP_ENGINE_JARS="+filepath.Join(dir, "jars"), "TZ=UTC", "PYSPARK_PYTHON="+py)
	p := &readerProcess{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.stdout = bufio.NewReaderSize(out, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the engines' reader: %w", err)
	}
	return p, nil
}

// prewarm starts, in the background, what the first tests would
// otherwise wait for one after the other: the CLI's build, and the
// engines' reader with its Spark session (a JVM's start, the longest
// single wait of the package) and DuckDB. A test's first call waits for
// the reader's start (it holds readerMu), while the tests that run the
// CLI first go on. It does nothing when a -run pattern picks tests (they
// may need neither), or when the engines' folder is not given by
// $PSWAP_ENGINES (finding it may install the engines: the first call
// does that, as before).
func prewarm() {
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		return
	}
	if os.Getenv("PSWAP_ENGINES") == "" {
		return
	}
	go buildCLI() //nolint:errcheck // pswapBin reports it
	readerMu.Lock()
	go func() {
		defer readerMu.Unlock()
		readerProc, readerErr = startReader()
		if readerErr != nil {
			return
		}
		// An engine's failure here is left for the tests' own calls to
		// report; a reader that dies is recorded as call records it.
		if err := send(map[string]any{"op": "warm"}); err != nil {
			readerErr = fmt.Errorf("%w\n%s", err, tail(readerProc.stderr.String(), 4000))
		}
	}()
}

// send sends one request to the running reader and reads its answer line,
// ignoring what it says; readerMu is held.
func send(req map[string]any) error {
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := readerProc.stdin.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("the engines' reader: %w", err)
	}
	if _, err := readerProc.stdout.ReadBytes('\n'); err != nil {
		return fmt.Errorf("the engines' reader died: %w", err)
	}
	return nil
}

// lockedWriter keeps the reader's stderr safe to read while it writes.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 1<<20 {
		l.w.Reset()
	}
	return l.w.Write(p)
}

func stopReader() {
	readerMu.Lock()
	defer readerMu.Unlock()
	if readerProc != nil {
		readerProc.stdin.Close()
		done := make(chan struct{})
		go func() { readerProc.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			readerProc.cmd.Process.Kill()
		}
		readerProc = nil
	}
}

// errEngine is an engine's own error (the request reached it and it
// refused or failed), as opposed to the reader process failing.
var errEngine = errors.New("engine error")

// call sends one request to the engines' reader and decodes its answer
// into out. An engine that fails returns errEngine with its message; a
// reader that cannot start or dies fails the test.
func call(t testing.TB, req map[string]any, out any) error {
	t.Helper()
	readerMu.Lock()
	defer readerMu.Unlock()
	if readerProc == nil && readerErr == nil {
		readerProc, readerErr = startReader()
	}
	if readerErr != nil {
		t.Fatalf("the engines cannot start: %v", readerErr)
	}
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readerProc.stdin.Write(append(line, '\n')); err != nil {
		t.Fatalf("engines' reader: %v\n%s", err, readerProc.stderr)
	}
	ans, err := readerProc.stdout.ReadBytes('\n')
	if err != nil {
		readerErr = fmt.Errorf("the engines' reader died: %v", err)
		t.Fatalf("%v\n%s", readerErr, tail(readerProc.stderr.String(), 4000))
	}
	var msg struct {
		OK    json.RawMessage `json:"ok"`
		Error string          `json:"error"`
		Trace string          `json:"trace"`
	}
	if err := json.Unmarshal(ans, &msg); err != nil {
		t.Fatalf("engines' reader answered %q: %v", tail(string(ans), 400), err)
	}
	if msg.Error != "" {
		return fmt.Errorf("%w: %s", errEngine, msg.Error)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(msg.OK, out)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
