package orchestrators

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeExamples checks that each python block the README marks
// "<!-- example: FILE -->" is in FILE word for word, so that the code the
// README shows is the code TestAirflow and TestDagster run.
func TestReadmeExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(readme), "<!-- example: ")[1:]
	if len(parts) != 2 {
		t.Fatalf("README has %d examples, want the Airflow and the Dagster one", len(parts))
	}
	for _, part := range parts {
		file, rest, _ := strings.Cut(part, " -->")
		_, code, ok := strings.Cut(rest, "```python\n")
		code, _, ok2 := strings.Cut(code, "```")
		if !ok || !ok2 || strings.TrimSpace(code) == "" {
			t.Fatalf("README: example %s has no python block", file)
		}
		src, err := os.ReadFile(filepath.Join(repoRoot(), file))
		if err != nil {
			t.Fatalf("README names %s: %v", file, err)
		}
		if !strings.Contains(string(src), code) {
			t.Errorf("README's block for %s is not in it:\n%s", file, code)
		}
	}
}
