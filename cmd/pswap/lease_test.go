package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitPendingUnderLease: a commit with --lease-first that finds the
// table's publish lease held by a live writer returns at once, its Iceberg view "pending"
// in --json (naming the version after which the holder's next one holds
// it) and in the text output; `pswap views` shows the view behind; --wait-view
// publishes in line; and `pswap publish` brings the view up to date and
// deletes the commit's fold marker.
func TestCommitPendingUnderLease(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	in := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{envTable: "file://" + filepath.ToSlash(root)}
	if code, _, stderr := invoke(t, env, "", "commit", "--partition", "dt=2026-11-01", in); code != 0 {
		t.Fatalf("first commit: %d %s", code, stderr)
	}
	// Another writer holds the lease (a file written now: live for 20 s).
	lease := filepath.Join(root, "_pswap", "publish.lease")
	if err := os.WriteFile(lease, []byte(`{"holder":"other","version":1,"seconds":20}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := invoke(t, env, "", "commit", "--json", "--lease-first", "--partition", "dt=2026-11-02", in)
	if code != 0 {
		t.Fatalf("commit: %d %s", code, stderr)
	}
	var doc struct {
		Published bool `json:"published"`
		Views     []struct {
			View         string `json:"view"`
			Published    bool   `json:"published"`
			State        string `json:"state"`
			PendingAfter *int64 `json:"pending_after"`
			Error        string `json:"error"`
		} `json:"views"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if doc.Published || len(doc.Views) != 1 || doc.Views[0].State != "pending" || doc.Views[0].Published ||
		doc.Views[0].PendingAfter == nil || *doc.Views[0].PendingAfter != 1 || doc.Views[0].Error != "" {
		t.Fatalf("--json under a live lease: %s", out)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("a pending view is no failure: %s", stderr)
	}
	code, out, _ = invoke(t, env, "", "commit", "--lease-first", "--partition", "dt=2026-11-03", in)
	if code != 0 || !strings.Contains(out, "Iceberg metadata: pending:") || !strings.Contains(out, "after v1") {
		t.Fatalf("text output: %d %s", code, out)
	}
	if code, out, _ = invoke(t, env, "", "views"); !strings.Contains(out, "behind") {
		t.Fatalf("views with pending commits: %d %s", code, out)
	}
	code, out, stderr = invoke(t, env, "", "commit", "--json", "--wait-view", "--partition", "dt=2026-11-04", in)
	if code != 0 || !strings.Contains(out, `"published": true`) || strings.Contains(out, "pending") {
		t.Fatalf("--wait-view: %d %s %s", code, out, stderr)
	}
	if code, _, stderr = invoke(t, env, "", "publish"); code != 0 {
		t.Fatalf("publish: %d %s", code, stderr)
	}
	if code, out, _ = invoke(t, env, "", "views"); code != 0 || strings.Contains(out, "behind") {
		t.Fatalf("views after publish: %d %s", code, out)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "_pswap", "fold", "*", "*")); len(left) != 0 {
		t.Fatalf("fold markers left after publish: %v", left)
	}
}
