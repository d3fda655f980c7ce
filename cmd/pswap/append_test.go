package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitAppend: commit --append adds the inputs' rows to the
// partition's, a re-run of the run is a same-run no-op naming the
// generation that took its rows (--json), and --append refuses what it
// cannot do: no run id, --on-conflict, --staged, --dry-run.
func TestCommitAppend(t *testing.T) {
	dir := t.TempDir()
	in := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := in("a.jsonl", `{"id":1}`+"\n"+`{"id":2}`+"\n")
	b := in("b.jsonl", `{"id":3}`+"\n")
	env := map[string]string{envTable: "file://" + filepath.ToSlash(filepath.Join(dir, "t"))}
	type res struct {
		Generation    string `json:"generation"`
		Changed       bool   `json:"changed"`
		Outcome       string `json:"outcome"`
		Rows          int64  `json:"rows"`
		Files         int    `json:"files"`
		RunGeneration string `json:"run_generation"`
	}
	appendRun := func(run, path string) res {
		t.Helper()
		code, out, stderr := invoke(t, env, "", "commit", "--json", "--partition", "dt=2026-11-29", "--append", "--run-id", run, path)
		if code != 0 {
			t.Fatalf("append %s: exit %d: %s", run, code, stderr)
		}
		var r res
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		return r
	}
	first := appendRun("h13", a)
	second := appendRun("h14", b)
	if !first.Changed || !second.Changed || second.Rows != 3 || second.Files != 2 {
		t.Fatalf("appends: %+v, %+v", first, second)
	}
	again := appendRun("h13", a)
	if again.Changed || again.Outcome != "same-run" || again.RunGeneration != first.Generation || again.Rows != 3 {
		t.Fatalf("re-run: %+v", again)
	}
	code, out, _ := invoke(t, env, "", "commit", "--partition", "dt=2026-11-29", "--append", "--run-id", "h15", b)
	if code != 0 || !strings.HasPrefix(out, "appended dt=2026-11-29") {
		t.Fatalf("text output: exit %d: %s", code, out)
	}
	for _, args := range [][]string{
		{"--append", b},
		{"--append", "--run-id", "x", "--on-conflict", "overwrite", b},
		{"--append", "--run-id", "x", "--dry-run", b},
		{"--append", "--run-id", "x", "--staged", "01938a3c-7b2e-7c1d-9a4f-0123456789ab"},
	} {
		code, _, stderr := invoke(t, env, "", append([]string{"commit", "--partition", "dt=2026-11-29"}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "--append") {
			t.Errorf("commit %v: exit %d, %s", args, code, stderr)
		}
	}
}
