package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/layout"
)

// A backfill's batch record that cannot be read does not stop audit, and
// is not skipped in silence (it was: audit printed its rows and exited 0,
// naming nothing): every row is printed, the command exits 1 naming the
// record with a repair hint, as for a corrupt pointer, and in --json the
// error document on stderr says the same; audit --publish publishes every
// row, then exits 1.
func TestAuditNamesAnUnreadableBatchRecord(t *testing.T) {
	table := backfillTwoDays(t, t.TempDir())
	batches, err := filepath.Glob(filepath.Join(table, filepath.FromSlash(layout.BatchesPrefix), "*.json"))
	if err != nil || len(batches) != 1 {
		t.Fatalf("batch records %v, %v", batches, err)
	}
	if err := os.WriteFile(batches[0], []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(filepath.Base(batches[0]), ".json")

	code, out, errOut := invoke(t, nil, "", "audit", "--table", table, "--format", "json")
	if code != exitFailure {
		t.Fatalf("audit: exit %d, want 1: %s %s", code, out, errOut)
	}
	var report struct {
		Rows []struct{ Partition, Status, RunID string } `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil || len(report.Rows) != 2 {
		t.Fatalf("audit's report (%v): %s", err, out)
	}
	if !strings.Contains(errOut, "1 batch attempt record(s) that cannot be read") || !strings.Contains(errOut, id) {
		t.Errorf("stderr does not name the unreadable record %s: %s", id, errOut)
	}
	if !strings.Contains(errOut, "hint:") || !strings.Contains(errOut, "delete it") {
		t.Errorf("no repair hint: %s", errOut)
	}

	code, out, errOut = invoke(t, nil, "", "audit", "--table", table, "--json")
	var doc struct {
		Error struct{ Code, Message, Hint string } `json:"error"`
	}
	if code != exitFailure || json.Unmarshal([]byte(errOut), &doc) != nil || doc.Error.Code != "corrupt" ||
		!strings.Contains(doc.Error.Message, id) || doc.Error.Hint == "" || !strings.Contains(out, `"rows"`) {
		t.Errorf("audit --json: exit %d, stdout %s, stderr %s", code, out, errOut)
	}

	code, out, errOut = invoke(t, nil, "", "audit", "--table", table, "--publish", "--json")
	var pub struct {
		Rows int `json:"rows"`
	}
	if code != exitFailure || json.Unmarshal([]byte(out), &pub) != nil || pub.Rows != 2 || !strings.Contains(errOut, id) {
		t.Errorf("audit --publish: exit %d, stdout %s, stderr %s; want 2 rows published, then exit 1 naming the record", code, out, errOut)
	}
}

// An audit that meets both a damaged pointer and a damaged batch record
// names both and gives each its repair: the hint once told only the
// pointer's.
func TestAuditHintsEveryDamage(t *testing.T) {
	table := backfillTwoDays(t, t.TempDir())
	batches, err := filepath.Glob(filepath.Join(table, filepath.FromSlash(layout.BatchesPrefix), "*.json"))
	if err != nil || len(batches) != 1 {
		t.Fatalf("batch records %v, %v", batches, err)
	}
	pointers, err := filepath.Glob(filepath.Join(table, "_pswap", "p", "*", "pointer.json"))
	if err != nil || len(pointers) != 2 {
		t.Fatalf("pointers %v, %v", pointers, err)
	}
	for _, f := range []string{batches[0], pointers[0]} {
		if err := os.WriteFile(f, []byte("{not json"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := invoke(t, nil, "", "audit", "--table", table, "--json")
	var doc struct {
		Error struct{ Code, Message, Hint string } `json:"error"`
	}
	if code != exitFailure || json.Unmarshal([]byte(errOut), &doc) != nil {
		t.Fatalf("audit --json: exit %d, stdout %s, stderr %s", code, out, errOut)
	}
	for _, want := range []string{"a pointer (_pswap/p/KEY/pointer.json", "a backfill's batch attempt record"} {
		if !strings.Contains(doc.Error.Hint, want) {
			t.Errorf("the hint lacks %q: %s", want, doc.Error.Hint)
		}
	}
}

// backfillTwoDays commits two days of one row each, dt=2026-11-01 and
// dt=2026-11-02, with one commit --partitioned run (run id "bf") into
// DIR/sales, and returns the table's path.
func backfillTwoDays(t *testing.T, dir string) string {
	t.Helper()
	table := filepath.Join(dir, "sales")
	src := filepath.Join(dir, "out")
	for _, day := range []string{"dt=2026-11-01", "dt=2026-11-02"} {
		if err := os.MkdirAll(filepath.Join(src, day), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, day, "part-0.csv"), []byte("id,amount\n1,1.5\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := invoke(t, nil, "", "commit", "--table", table, "--partitioned", src, "--run-id", "bf"); code != exitOK {
		t.Fatalf("the backfill: exit %d %s %s", code, out, errOut)
	}
	return table
}
