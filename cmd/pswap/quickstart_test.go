package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's quick start is for "a machine with only Go installed": every
// program its shell blocks run is pswap, the repository's scripts or a shell
// builtin, unless the prose right before the block says how to install it.
func TestQuickStartNeedsOnlyWhatItInstalls(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "\n## Quick start\n")
	if start < 0 {
		t.Fatal("README.md has no Quick start section")
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	if !strings.Contains(section, "only Go installed") {
		t.Skip("the quick start no longer promises a machine with only Go")
	}
	have := []string{"bin/pswap", "./examples/daily.sh", "scripts/test.sh", "export", "cd", "go", "echo"}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatchIndex(section, -1)
	if len(blocks) == 0 {
		t.Fatal("the quick start has no shell block")
	}
	prev := 0
	for _, m := range blocks {
		prose, code := section[prev:m[0]], section[m[2]:m[3]]
		prev = m[1]
		for _, line := range strings.Split(code, "\n") {
			line, _, _ = strings.Cut(line, "#")
			for _, seg := range regexp.MustCompile(`\||&&|;`).Split(line, -1) {
				fields := strings.Fields(seg)
				if len(fields) == 0 {
					continue
				}
				prog := fields[0]
				if slices.Contains(have, prog) {
					continue
				}
				name := path.Base(prog)
				if !strings.Contains(prose, "install") || !strings.Contains(prose, name) {
					t.Errorf("the quick start runs %q (%q) without saying how to install it", prog, strings.TrimSpace(line))
				}
			}
		}
	}
}
