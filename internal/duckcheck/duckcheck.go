package duckcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// ErrUnavailable is returned when node or the DuckDB npm package is missing.
var ErrUnavailable = errors.New("duckcheck: node or @duckdb/node-api not installed (run `npm ci` in internal/duckcheck)")

// Result is the outcome of [Run].
type Result struct {
	// Rows of the last statement, as JSON values: DuckDB's JSON conversion
	// renders BIGINT, HUGEINT and DECIMAL as strings, DOUBLE as numbers,
	// timestamps as strings and NULL as nil.
	Rows []map[string]any
	// All holds the rows of every statement, in order.
	All [][]map[string]any
	// Durations is the wall time of each statement, measured inside node.
	Durations []time.Duration
}

var (
	once     sync.Once
	dir      string
	nodeBin  string
	availErr error
)

func locate() {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		availErr = fmt.Errorf("%w: cannot locate package source", ErrUnavailable)
		return
	}
	dir = filepath.Dir(file)
	var err error
	nodeBin, err = exec.LookPath("node")
	if err != nil {
		availErr = fmt.Errorf("%w: %v", ErrUnavailable, err)
		return
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		availErr = fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
}

// Available reports whether queries can run; the error says what is missing.
func Available() error {
	once.Do(locate)
	return availErr
}

// TB is the subset of testing.TB used by SkipIfUnavailable.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
}

// SkipIfUnavailable skips the test or benchmark when DuckDB cannot run.
func SkipIfUnavailable(t TB) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("skipping DuckDB check: %v", err)
	}
}

// Run executes the statements in order in one in-memory DuckDB database.
func Run(ctx context.Context, statements ...string) (Result, error) {
	if err := Available(); err != nil {
		return Result{}, err
	}
	in, err := json.Marshal(map[string]any{"statements": statements})
	if err != nil {
		return Result{}, err
	}
	cmd := exec.CommandContext(ctx, nodeBin, filepath.Join(dir, "query.mjs"))
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("duckcheck: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var out struct {
		Rows   [][]map[string]any `json:"rows"`
		Millis []float64          `json:"millis"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return Result{}, fmt.Errorf("duckcheck: decode output: %w", err)
	}
	r := Result{All: out.Rows}
	if len(out.Rows) > 0 {
		r.Rows = out.Rows[len(out.Rows)-1]
	}
	for _, ms := range out.Millis {
		r.Durations = append(r.Durations, time.Duration(ms*float64(time.Millisecond)))
	}
	return r, nil
}

// Query runs one SQL query and returns its rows.
func Query(ctx context.Context, sql string) ([]map[string]any, error) {
	r, err := Run(ctx, sql)
	return r.Rows, err
}

// Quote returns s as a SQL string literal, e.g. for a file path.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
