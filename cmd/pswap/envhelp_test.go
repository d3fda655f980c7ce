package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envName is a string literal that names an environment variable pswap's
// own code reads (the AWS SDK's and pgx's are theirs, named in --help as
// families).
var envName = regexp.MustCompile(`^(PSWAP_|AIRFLOW_CTX_|PG|AWS_|MINIO_)[A-Z0-9_]*[A-Z0-9]$`)

// TestHelpListsEveryEnvironmentVariable: `pswap --help` names every
// environment variable that the code linked into pswap reads (it left out
// PSWAP_CATALOG, PSWAP_PUBLISH and PSWAP_DELTA: issue 40 item 8). The
// variables are found in the source of every package of this module that
// cmd/pswap links, so a new one read anywhere fails this test until
// --help lists it.
func TestHelpListsEveryEnvironmentVariable(t *testing.T) {
	names := linkedEnvNames(t)
	for _, want := range []string{"PSWAP_TABLE", "PSWAP_CATALOG", "PSWAP_PUBLISH", "PSWAP_DELTA"} {
		if !slices.Contains(names, want) {
			t.Fatalf("the source scan found %v, not %s: the scan is broken", names, want)
		}
	}
	var stdout, stderr bytes.Buffer
	a := &app{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		getenv: func(string) string { return "" }}
	if err := execute(a, []string{"--help"}); err != nil {
		t.Fatalf("pswap --help: %v\n%s", err, stderr.String())
	}
	help := stdout.String()
	_, env, ok := strings.Cut(help, "\nEnvironment:\n")
	if !ok {
		t.Fatalf("pswap --help has no Environment section:\n%s", help)
	}
	// The section's lines are indented; the next section's title is not.
	if i := regexp.MustCompile(`(?m)^[^ \n]`).FindStringIndex(env); i != nil {
		env = env[:i[0]]
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### Environment variables\n")
	if !ok {
		t.Fatal("the README has no Environment variables section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	for _, name := range names {
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(env) {
			t.Errorf("pswap --help's Environment section does not name %s, which the code reads", name)
		}
		if !strings.Contains(section, "`"+name) {
			t.Errorf("the README's Environment variables section does not name %s, which the code reads", name)
		}
	}
}

// linkedEnvNames returns the environment variable names (envName) that
// appear as string literals in the non-test Go files of this module's
// packages that cmd/pswap links.
func linkedEnvNames(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.Module}}|{{.Dir}}|{{join .GoFiles ","}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) != 3 || !strings.HasPrefix(parts[0], "github.com/pswap/pswap") || parts[2] == "" {
			continue
		}
		for _, name := range strings.Split(parts[2], ",") {
			f, err := parser.ParseFile(fset, filepath.Join(parts[1], name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && envName.MatchString(s) && !slices.Contains(names, s) {
					names = append(names, s)
				}
				return true
			})
		}
	}
	slices.Sort(names)
	return names
}
