package duckcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/testing/nodeenv"
)

// ErrUnavailable is returned when node or the DuckDB npm package is missing.
var ErrUnavailable = errors.New("duckcheck: DuckDB cannot run")

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

// duckdb is DuckDB's npm package, installed in this folder.
var duckdb = nodeenv.NewReader("DuckDB", ErrUnavailable, "@duckdb/node-api")

// Available reports whether queries can run; the error says what is missing.
func Available() error { return duckdb.Available() }

// Dir is the folder whose node_modules holds DuckDB's npm package, for a
// node program of another folder that loads it (integration's long-lived
// DuckDB server).
func Dir() string { return duckdb.Dir() }

// TB is the subset of testing.TB used by SkipIfUnavailable.
type TB = nodeenv.TB

// SkipIfUnavailable skips the test or benchmark when node is missing, and
// fails it when node is there but DuckDB's package is not installed (in CI
// the check must run).
func SkipIfUnavailable(t TB) {
	t.Helper()
	duckdb.Require(t)
}

// Usable reports whether DuckDB can run: false (logged) when node is
// missing; a fatal test error when node is there but DuckDB is not installed.
func Usable(t interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}) bool {
	t.Helper()
	return duckdb.Usable(t)
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
	cmd := duckdb.Command(ctx, "query.mjs")
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
