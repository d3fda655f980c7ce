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
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/pswap/pswap/internal/testing/srcdir"
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

// Reader is one independent reader: its npm packages, installed in the
// folder of the source file that declared it (NewReader's caller), found
// once, on first use.
type Reader struct {
	what        string   // named in skips and failures: "DuckDB"
	pkgs        []string // npm packages it needs
	unavailable error    // wrapped by the error of a reader that cannot run
	dir         string
	dirErr      error
	once        sync.Once
	node        string
	err         error
}

// NewReader declares a reader named what (for messages) that needs the npm
// packages pkgs in the folder of the calling source file; unavailable is
// the sentinel its availability error wraps. Declare it in a package-level
// variable of the package whose folder holds its package.json.
func NewReader(what string, unavailable error, pkgs ...string) *Reader {
	r := &Reader{what: what, pkgs: pkgs, unavailable: unavailable}
	_, file, _, ok := runtime.Caller(1)
	if !ok {
		r.dirErr = errors.New("nodeenv: cannot locate the caller's source file")
	}
	r.dir = srcdir.Of(file)
	return r
}

// Available reports whether the reader can run; the error wraps the
// reader's sentinel, and ErrNoNode when node is missing.
func (r *Reader) Available() error {
	r.once.Do(func() {
		err := r.dirErr
		for _, pkg := range r.pkgs {
			if err != nil {
				break
			}
			r.node, err = Find(r.dir, pkg)
		}
		if err != nil {
			r.err = fmt.Errorf("%w: %w", r.unavailable, err)
		}
	})
	return r.err
}

// Command returns a command running node with args in the reader's folder
// (after Available returned nil).
func (r *Reader) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, r.node, args...)
	cmd.Dir = r.dir
	return cmd
}

// Dir is the reader's folder (its scripts and node_modules).
func (r *Reader) Dir() string { return r.dir }

// Require applies the rule to the reader (see the package function).
func (r *Reader) Require(t TB) {
	t.Helper()
	Require(t, r.what, r.Available())
}

// Usable applies the rule to the reader without skipping (see the package
// function).
func (r *Reader) Usable(t interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}) bool {
	t.Helper()
	return Usable(t, r.what, r.Available())
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
