package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeReportsEveryView: a merge into a table whose Delta view cannot
// be published (another writer added a file to the log) says so in its --json,
// per view and in delta_published, and published is false; it used to
// report "published": true with only a warning on stderr (issue 38 item
// 4). The merge itself stands.
func TestMergeReportsEveryView(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "sales")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := map[string]string{}
	code, out, errOut := invoke(t, env, "", "commit", "--table", table, "--partition", "dt=2026-11-27", "--delta",
		"--json", write("a.csv", "id,amount\n1,1.5\n2,2.5\n"))
	if code != exitOK {
		t.Fatalf("commit: exit %d %s %s", code, out, errOut)
	}
	// Another writer adds a file of its own to the Delta log: pswap's
	// Delta publishes refuse from then on (the pointers are the truth).
	foreign := `{"add":{"path":"x.parquet","partitionValues":{"dt":"2026-11-27"},"size":1,"modificationTime":0,"dataChange":true}}` + "\n"
	if err := os.WriteFile(filepath.Join(table, "_delta_log", "00000000000000000001.json"), []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = invoke(t, env, "", "merge", "--table", table, "--key", "id", "--json", write("b.csv", "id,amount,dt\n2,9.5,2026-11-27\n"))
	if code != exitOK {
		t.Fatalf("merge: exit %d %s %s", code, out, errOut)
	}
	var doc mergeJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if doc.Committed != 1 || doc.Published || doc.DeltaPublished == nil || *doc.DeltaPublished || doc.DeltaPublishError == "" ||
		!hasView(doc.Views, "iceberg", true) || !hasView(doc.Views, "delta", false) || !strings.Contains(errOut, "the Delta log was not published") {
		t.Fatalf("merge with the Delta view failing: %s\nstderr: %s", out, errOut)
	}
}
