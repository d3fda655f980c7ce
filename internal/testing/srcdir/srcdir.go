// Package srcdir finds this module's source folders from a test, also in
// test binaries built with -trimpath (scripts/test.sh builds them so, so
// that the build cache serves every checkout of the module, whatever its
// folder), where runtime.Caller names a file by its import path
// ("github.com/pswap/pswap/integration/main_test.go") instead of its path
// on disk.
package srcdir

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Module is this module's path, the prefix of a trimmed file name.
const Module = "github.com/pswap/pswap"

// Of returns the folder of a source file of this module named as
// runtime.Caller names it: the file's folder when the name is a path on
// disk, else the folder under Root that the import path names.
func Of(file string) string {
	if filepath.IsAbs(file) {
		return filepath.Dir(file)
	}
	rel := strings.TrimPrefix(filepath.ToSlash(file), Module)
	rel = strings.TrimPrefix(rel, "/")
	return filepath.Join(Root(), filepath.FromSlash(path.Dir(rel)))
}

// Root returns the module's root folder: the nearest folder, from the
// working directory up, that holds a go.mod (go test runs a package's
// tests in the package's folder). It returns the working directory when
// none does.
func Root() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}
