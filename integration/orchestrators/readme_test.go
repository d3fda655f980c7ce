package orchestrators

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeExamples checks that each python block the README marks
// "<!-- example: FILE -->" is in FILE word for word, so that the code the
// README shows is the code TestAirflow and TestDagster run, and that the
// block shows how the example calls the pswap package and decides a retry:
// by PswapError.retryable, pswap's one retry rule (docs/cli.md).
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
		if !strings.Contains(code, "e.retryable") || !strings.Contains(code, "pswap.PswapError") || strings.Contains(code, "subprocess") {
			t.Errorf("README's block for %s does not show the retry decision by pswap.PswapError's retryable:\n%s", file, code)
		}
	}
}

// readmeBlock returns the code block that follows the README's line
// "<!-- MARKER -->", the only one so marked.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(readme), "<!-- "+marker+" -->\n")
	if len(parts) != 2 {
		t.Fatalf("README has %d blocks marked %q, want 1", len(parts)-1, marker)
	}
	_, code, ok := strings.Cut(parts[1], "```sh\n")
	code, _, ok2 := strings.Cut(code, "```")
	if !ok || !ok2 {
		t.Fatalf("README: %s has no sh block", marker)
	}
	return code
}

// TestReadmeRunsTheExamples runs the README's "Running the orchestrator
// examples" as written: its install line must be the pinned file the
// orchestrators' environment (scripts/orchestrators.sh) is built from, so
// the block that runs the examples runs in that environment (cached, as
// for every test here, instead of a pip install per run), from a folder
// laid out as the repository's root (examples/, bin/pswap). Dagster loads
// one day and Airflow the next; the table holds both days' rows and the
// notification log one line per day.
func TestReadmeRunsTheExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Airflow and Dagster take a minute or two")
	}
	t.Parallel()
	setup := readmeBlock(t, "orchestrators-setup")
	var pips []string
	for _, line := range strings.Split(setup, "\n") {
		if strings.Contains(line, "pip install") {
			pips = append(pips, strings.TrimSpace(line))
		}
	}
	// The orchestrators, then the pswap package's wheel, which the examples
	// import: here its wheel installed beside the environment (pswapSite).
	if want := []string{"pip install -r integration/orchestrators/requirements.txt", "pip install dist/pswap-*.whl"}; !slices.Equal(pips, want) {
		t.Fatalf("the README installs the orchestrators with %q, want %q only (the environment the tests run)", pips, want)
	}
	run := readmeBlock(t, "orchestrators-run")
	root := t.TempDir()
	if err := os.Symlink(filepath.Join(repoRoot(), "examples"), filepath.Join(root, "examples")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pswapDir(t), filepath.Join(root, "bin")); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Dir(filepath.Dir(orchPython(t)))
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", run)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "AIRFLOW") && !strings.HasPrefix(name, "DAGSTER") && !strings.HasPrefix(name, "SALES_") && name != "PATH" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// What ". .cache/orchestrators/bin/activate" does.
	cmd.Env = append(cmd.Env, "VIRTUAL_ENV="+venv, "PATH="+filepath.Join(venv, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PYTHONPATH="+pswapSite(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's orchestrator block: %v\n%s", err, tail(string(out), 6000))
	}
	notes := readNotifications(t, filepath.Join(root, "lake", "notifications.jsonl"))
	var got []string
	for _, n := range notes {
		got = append(got, fmt.Sprintf("%s:%d", n.Partition, n.Rows))
	}
	want := []string{"dt=2026-11-28:" + fmt.Sprint(csvRows(t, "2026-11-28")), "dt=2026-11-29:" + fmt.Sprint(csvRows(t, "2026-11-29"))}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("notifications %v, want %v (Dagster's day, then Airflow's)", got, want)
	}
}

// csvRows counts the rows of a day of the quick start's sales.
func csvRows(t *testing.T, day string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "data", "sales", day+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(strings.TrimSpace(string(b)), "\n")
}

// TestReadmeLinks: every relative link of README.md and docs/*.md names a
// file that exists and, with a #fragment, a heading of that file (GitHub's
// anchors), so that the reference moved out of the README stays reachable.
func TestReadmeLinks(t *testing.T) {
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(repoRoot(), "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	fence := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repoRoot(), f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
			target, frag, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") {
				continue
			}
			path := filepath.Join(repoRoot(), f)
			if target != "" {
				path = filepath.Join(filepath.Dir(path), target)
			}
			checked++
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
				continue
			}
			if frag != "" && !slices.Contains(anchors(t, path), frag) {
				t.Errorf("%s links to %s: no such heading", f, m[1])
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d links, want the README's and docs' (the link pattern is broken)", checked)
	}
}

// anchors returns the GitHub anchors of a markdown file's headings.
func anchors(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
	var out []string
	text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(b), "") // "# comments" in code are no headings
	for _, line := range strings.Split(text, "\n") {
		if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
			a := strings.ToLower(drop.ReplaceAllString(strings.TrimSpace(h), ""))
			out = append(out, strings.ReplaceAll(a, " ", "-"))
		}
	}
	return out
}
