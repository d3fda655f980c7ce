package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
)

// gc deletes a backfill's batch attempt record once every partition's
// attempt it names is collected (they piled up, one per commit
// --partitioned run), and its dry run names it, in text and in --json,
// as it names every other key it would delete.
func TestGCBatchRecords(t *testing.T) {
	dir := t.TempDir()
	table := backfillTwoDays(t, dir)
	days := []string{"dt=2026-11-01", "dt=2026-11-02"}
	// Each day replaced: the backfill's generations are retired.
	csv := filepath.Join(dir, "b.csv")
	if err := os.WriteFile(csv, []byte("id,amount\n2,2.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, day := range days {
		if code, out, errOut := invoke(t, nil, "", "commit", "--table", table, "--partition", day, "--run-id", "fix", csv); code != exitOK {
			t.Fatalf("commit %s: exit %d %s %s", day, code, out, errOut)
		}
	}
	records, err := filepath.Glob(filepath.Join(table, filepath.FromSlash(layout.BatchesPrefix), "*.json"))
	if err != nil || len(records) != 1 {
		t.Fatalf("batch records %v, %v", records, err)
	}
	key := layout.BatchesPrefix + filepath.Base(records[0])
	flags := []string{"gc", "--table", table, "--keep", "0", "--min-age", "0", "--orphan-age", "0", "--commit-window", "0"}
	// Now: kept, even with every age at 0 (the record is younger than a
	// running backfill's rewrite, and its generations were just retired).
	code, out, errOut := invoke(t, nil, "", append(flags, "--dry-run", "--json")...)
	if code != exitOK || strings.Contains(out, key) {
		t.Fatalf("gc --dry-run of a young record: exit %d %s %s", code, out, errOut)
	}
	// Two hours on: the record, and the pointers' swaps that retired the
	// backfill's generations.
	old := time.Now().Add(-2 * time.Hour)
	for _, f := range append([]string{records[0]}, filepath.Join(table, filepath.FromSlash(layout.PointerKey(days[0]))),
		filepath.Join(table, filepath.FromSlash(layout.PointerKey(days[1])))) {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = invoke(t, nil, "", append(flags, "--dry-run", "--json")...)
	var doc struct {
		BatchRecordKeys []string `json:"batch_record_keys"`
		Totals          struct {
			BatchRecords int `json:"batch_records"`
		} `json:"totals"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || len(doc.BatchRecordKeys) != 1 || doc.BatchRecordKeys[0] != key || doc.Totals.BatchRecords != 1 {
		t.Fatalf("gc --dry-run --json: exit %d %s %s", code, out, errOut)
	}
	if code, out, errOut = invoke(t, nil, "", append(flags, "--dry-run")...); code != exitOK || !strings.Contains(out, "  "+key) {
		t.Errorf("gc --dry-run does not list %s: %s %s", key, out, errOut)
	}
	if _, err := os.Stat(records[0]); err != nil {
		t.Fatalf("the dry run deleted the record: %v", err)
	}
	if code, out, errOut = invoke(t, nil, "", append(flags, "--json")...); code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || doc.Totals.BatchRecords != 1 {
		t.Fatalf("gc --json: exit %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(records[0]); !os.IsNotExist(err) {
		t.Errorf("the record is still there after gc: %v", err)
	}
}
