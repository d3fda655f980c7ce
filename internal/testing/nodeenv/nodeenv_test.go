package nodeenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@scope", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", "@scope", "pkg", "package.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	t.Setenv("PATH", bin) // no node
	if _, err := Find(dir, "@scope/pkg"); !errors.Is(err, ErrNoNode) {
		t.Fatalf("without node: %v, want ErrNoNode", err)
	}
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	node, err := Find(dir, "@scope/pkg")
	if err != nil || node != filepath.Join(bin, "node") {
		t.Fatalf("Find = %q, %v", node, err)
	}
	_, err = Find(dir, "other")
	if err == nil || errors.Is(err, ErrNoNode) || !strings.Contains(err.Error(), "npm ci") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("missing package: %v, want a non-ErrNoNode error naming npm ci and %s", err, dir)
	}
}

// fakeTB records what Require did.
type fakeTB struct{ skipped, failed, logged string }

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skipf(format string, a ...any)  { f.skipped = fmt.Sprintf(format, a...) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }
func (f *fakeTB) Logf(format string, a ...any)   { f.logged = fmt.Sprintf(format, a...) }

func TestRequire(t *testing.T) {
	for _, c := range []struct {
		err          error
		skip, failed bool
	}{
		{nil, false, false},
		{fmt.Errorf("x: %w", ErrNoNode), true, false},
		{errors.New("npm package p is not installed"), false, true},
	} {
		var f fakeTB
		Require(&f, "reader", c.err)
		if (f.skipped != "") != c.skip || (f.failed != "") != c.failed {
			t.Errorf("Require(%v): skipped %q failed %q", c.err, f.skipped, f.failed)
		}
		var u fakeTB
		ok := Usable(&u, "reader", c.err)
		if ok != (c.err == nil) || (u.logged != "") != c.skip || (u.failed != "") != c.failed {
			t.Errorf("Usable(%v) = %v: logged %q failed %q", c.err, ok, u.logged, u.failed)
		}
	}
}

// TestReader: a reader's folder is that of the file declaring it; with
// node on PATH, a missing package fails naming the folder and wraps the
// reader's sentinel; without node, the error is ErrNoNode; the answer is
// found once.
func TestReader(t *testing.T) {
	errGone := errors.New("test reader cannot run")
	r := NewReader("test", errGone, "no-such-package-pswap")
	wd, _ := os.Getwd()
	if r.Dir() != wd {
		t.Fatalf("Dir = %q, want %q", r.Dir(), wd)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	err := r.Available()
	if !errors.Is(err, errGone) || errors.Is(err, ErrNoNode) || !strings.Contains(err.Error(), "npm ci") || !strings.Contains(err.Error(), wd) {
		t.Fatalf("missing package: %v", err)
	}
	var f fakeTB
	r.Require(&f)
	if f.failed == "" || f.skipped != "" {
		t.Fatalf("Require: skipped %q failed %q", f.skipped, f.failed)
	}
	t.Setenv("PATH", t.TempDir())
	if err2 := r.Available(); err2 != err {
		t.Fatalf("not found once: %v, then %v", err, err2)
	}
	none := NewReader("test", errGone, "x")
	if err := none.Available(); !errors.Is(err, ErrNoNode) || !errors.Is(err, errGone) {
		t.Fatalf("without node: %v", err)
	}
	var u fakeTB
	if none.Usable(&u) || u.logged == "" {
		t.Fatalf("Usable without node: logged %q", u.logged)
	}
}
