package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/layout"
)

// A partition whose pointer cannot be read does not stop audit (it did:
// the whole command failed on it, where ls and status carry on): every
// other partition's rows are printed, the damaged one has one row of kind
// pointer and state corrupt, and the command exits 1 naming it; audit
// --publish writes the same rows into the audit table, then exits 1.
func TestAuditCarriesOnPastACorruptPointer(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "sales")
	csv := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(csv, []byte("id,amount\n1,1.5\n2,2.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, day := range []string{"dt=2026-11-27", "dt=2026-11-28", "dt=2026-11-29"} {
		if code, out, errOut := invoke(t, nil, "", "commit", "--table", table, "--partition", day, "--run-id", "r/"+day, csv); code != exitOK {
			t.Fatalf("commit %s: exit %d %s %s", day, code, out, errOut)
		}
	}
	bad := "dt=2026-11-28"
	if err := os.WriteFile(filepath.Join(table, filepath.FromSlash(layout.PointerKey(bad))), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := invoke(t, nil, "", "audit", "--table", table, "--format", "json")
	if code != exitFailure {
		t.Fatalf("audit: exit %d, want 1: %s %s", code, out, errOut)
	}
	var report struct {
		Rows []struct{ Partition, Kind, State string } `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("audit's report: %v: %s", err, out)
	}
	got := map[string]string{}
	for _, r := range report.Rows {
		got[r.Partition] += r.Kind + "/" + r.State + " "
	}
	want := map[string]string{"dt=2026-11-27": "commit/current ", bad: "pointer/corrupt ", "dt=2026-11-29": "commit/current "}
	if len(got) != len(want) {
		t.Fatalf("rows by partition %v, want %v", got, want)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: rows %q, want %q", p, got[p], w)
		}
	}
	if !strings.Contains(errOut, "1 partition(s) with a pointer that cannot be read") || !strings.Contains(errOut, bad) {
		t.Errorf("stderr does not name the damaged partition: %s", errOut)
	}
	// The same error as ls and status: the same repair hint.
	if !strings.Contains(errOut, "hint:") || !strings.Contains(errOut, "restore that object") {
		t.Errorf("audit's error has no repair hint (ls and status give one): %s", errOut)
	}

	code, out, errOut = invoke(t, nil, "", "audit", "--table", table, "--publish", "--json")
	if code != exitFailure {
		t.Fatalf("audit --publish: exit %d, want 1: %s %s", code, out, errOut)
	}
	var pub struct {
		Rows       int    `json:"rows"`
		AuditTable string `json:"audit_table"`
	}
	if err := json.Unmarshal([]byte(out), &pub); err != nil || pub.Rows != 3 {
		t.Fatalf("audit --publish report %+v (%v): %s", pub, err, out)
	}
	// The audit table holds the corrupt row: read it back through pswap.
	code, out, errOut = invoke(t, nil, "", "ls", "--table", table+"__audit", "--json")
	if code != exitOK || !strings.Contains(out, `"day=2026-11-28"`) {
		t.Errorf("the audit table's days: exit %d %s %s", code, out, errOut)
	}
}
