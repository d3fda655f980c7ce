package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOneFrontDoor: the CLI uses only the facade (package pswap) and the
// public packages, so that everything it does a Go program can do too
// (issue 38, build 5). Tests may import internal packages. The one
// exception is internal/editdist, the "did you mean" of mistyped flags
// and commands: user interface, not table behaviour.
func TestOneFrontDoor(t *testing.T) {
	allowed := map[string]bool{"github.com/pswap/pswap/internal/editdist": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "/pswap/internal/") && !allowed[path] {
				t.Errorf("%s imports %s: give the facade what the CLI needs instead", name, path)
			}
		}
	}
}
