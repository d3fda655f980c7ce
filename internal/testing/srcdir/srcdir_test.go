package srcdir

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOf(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(wd))) // internal/testing/srcdir
	if got := Root(); got != root {
		t.Fatalf("Root() = %q, want %q", got, root)
	}
	// The name runtime.Caller gives, with or without -trimpath.
	_, file, _, _ := runtime.Caller(0)
	if got := Of(file); got != wd {
		t.Errorf("Of(%q) = %q, want %q", file, got, wd)
	}
	for file, want := range map[string]string{
		Module + "/internal/testing/srcdir/srcdir_test.go": wd,
		Module + "/integration/main_test.go":               filepath.Join(root, "integration"),
		Module + "/pswap_test.go":                          root,
		filepath.Join(root, "scripts", "x.go"):             filepath.Join(root, "scripts"),
	} {
		if got := Of(file); got != want {
			t.Errorf("Of(%q) = %q, want %q", file, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(Of(file), "..", "..", "..", "scripts", "test.sh")); err != nil {
		t.Errorf("scripts/test.sh is not where Of says the module is: %v", err)
	}
}
