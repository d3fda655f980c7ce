package integration

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/internal/testing/srcdir"
)

// duck is one DuckDB process (node, testdata/duckserver.mjs) shared by the
// whole test run: an independent Parquet reader for the invariant checker.
var duck struct {
	mu    sync.Mutex
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	dead  error // set when the server cannot be started
	ready bool
}

// duckAvailable reports whether DuckDB checks can run (node and the npm
// package of internal/testing/duckcheck are installed; they are in CI).
func duckAvailable() bool { return duckcheck.Available() == nil }

// duckQuery runs one statement and returns its rows.
func duckQuery(sql string) ([]map[string]any, error) {
	duck.mu.Lock()
	defer duck.mu.Unlock()
	if duck.dead != nil {
		return nil, duck.dead
	}
	if !duck.ready {
		if err := startDuckLocked(); err != nil {
			duck.dead = err
			return nil, err
		}
	}
	line, _ := json.Marshal(map[string]string{"sql": sql})
	if _, err := duck.in.Write(append(line, '\n')); err != nil {
		duck.ready = false
		return nil, fmt.Errorf("duckdb server: %w", err)
	}
	ans, err := duck.out.ReadBytes('\n')
	if err != nil {
		duck.ready = false
		return nil, fmt.Errorf("duckdb server: %w", err)
	}
	var r struct {
		Rows  []map[string]any `json:"rows"`
		Error string           `json:"error"`
	}
	if err := json.Unmarshal(ans, &r); err != nil {
		return nil, fmt.Errorf("duckdb server answered %q: %w", ans, err)
	}
	if r.Error != "" {
		return nil, errors.New("duckdb: " + r.Error)
	}
	return r.Rows, nil
}

func startDuckLocked() error {
	if err := duckcheck.Available(); err != nil {
		return err
	}
	_, file, _, _ := runtime.Caller(0)
	here := srcdir.Of(file)
	node, err := exec.LookPath("node")
	if err != nil {
		return err
	}
	cmd := exec.Command(node, filepath.Join(here, "testdata", "duckserver.mjs"), duckcheck.Dir())
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	duck.cmd, duck.in, duck.out, duck.ready = cmd, in, bufio.NewReader(out), true
	return nil
}

// stopDuck ends the DuckDB process (TestMain, after the tests).
func stopDuck() {
	duck.mu.Lock()
	defer duck.mu.Unlock()
	if duck.cmd != nil {
		duck.in.Close()
		duck.cmd.Wait()
		duck.cmd = nil
	}
}
