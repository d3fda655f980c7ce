// Package nodeenv finds node and the npm packages of the independent
// readers that tests check pswap's output with (DuckDB and hyparquet in
// internal/testing/duckcheck, icebird in internal/testing/icecheck, Polars in
// bench/polars). Each reader's folder has a committed package-lock.json;
// scripts/test.sh and CI run `npm ci` in every such folder.
//
// The rule it enforces: a test may skip only when node itself is missing.
// When node is there but a reader's package is not installed, the test
// fails and says which `npm ci` to run, so that a check meant to run in CI
// never turns into a silent skip.
package nodeenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// ErrNoNode: node is not on PATH. Only this error lets a test skip.
var ErrNoNode = errors.New("node is not installed")

// Find returns the path of node, after checking that the npm package pkg is
// installed in dir/node_modules. Its error wraps ErrNoNode when node is
// missing, and otherwise says which folder needs `npm ci`.
func Find(dir, pkg string) (node string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoNode, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
		return "", fmt.Errorf("npm package %s is not installed in %s (run `npm ci` there): %w", pkg, dir, err)
	}
	return node, nil
}

// CallerDir is the folder of the source file that calls it: where a
// reader's package.json lies.
func CallerDir() (string, error) {
	_, file, _, ok := runtime.Caller(1)
	if !ok {
		return "", errors.New("nodeenv: cannot locate the caller's source file")
	}
	return filepath.Dir(file), nil
}

// TB is the subset of testing.TB that Require uses.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Usable applies the rule without skipping: false (logged) when err wraps
// ErrNoNode, a fatal error for any other err, true for nil. For helpers
// that compare with a reader only when one can run.
func Usable(t interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}, what string, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	if errors.Is(err, ErrNoNode) {
		t.Logf("%s check skipped: %v", what, err)
		return false
	}
	t.Fatalf("%s check cannot run: %v", what, err)
	return false
}

// Require applies the rule to the error of a reader's availability check:
// nothing on nil, a skip when it wraps ErrNoNode, a fatal error otherwise.
func Require(t TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrNoNode) {
		t.Skipf("skipping %s check: %v", what, err)
		return
	}
	t.Fatalf("%s check cannot run: %v", what, err)
}
