package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 40 item 3: an Airflow DAG in a local time zone renders
// --interval 2026-12-06T00:00:00+01:00/P1D. A UTC table refuses it and
// names --time-zone; --time-zone creates a table whose days begin at local
// midnight (DST days of 23 and 25 hours included), and later commits must
// give the same zone.
func TestCommitTimeZone(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	utcEnv := map[string]string{envTable: "file://" + filepath.ToSlash(filepath.Join(dir, "utc"))}
	code, _, stderr := invoke(t, utcEnv, "", "commit", "--run-id", "", "--interval", "2026-12-06T00:00:00+01:00/P1D", in)
	if code != exitUsage || !strings.Contains(stderr, "--time-zone") || !strings.Contains(stderr, "not aligned") {
		t.Fatalf("a local day on a UTC table: exit %d, %s", code, stderr)
	}

	env := map[string]string{envTable: "file://" + filepath.ToSlash(filepath.Join(dir, "berlin"))}
	for _, c := range []struct{ interval, key string }{
		{"2026-12-06T00:00:00+01:00/P1D", "dt=2026-12-06"},
		// DST begins (Airflow's local rendering of the run) and ends
		// (Dagster's time window): 23 and 25 hours.
		{"2026-03-29T00:00:00+01:00/P1D", "dt=2026-03-29"},
		{"2026-10-25T00:00:00+02:00/2026-10-26T00:00:00+01:00", "dt=2026-10-25"},
		// Airflow's data_interval_start/end as stored, in UTC.
		{"2026-03-28T23:00:00+00:00/2026-03-29T22:00:00+00:00", "dt=2026-03-29"},
	} {
		code, out, stderr := invoke(t, env, "", "commit", "--run-id", "", "--force", "--time-zone", "Europe/Berlin", "--interval", c.interval, in)
		if code != 0 || !strings.HasPrefix(out, "committed "+c.key) {
			t.Fatalf("commit %s: exit %d, stdout %s, stderr %s", c.interval, code, out, stderr)
		}
	}
	doc, err := os.ReadFile(filepath.Join(dir, "berlin", "_pswap", "table.json"))
	if err != nil || !strings.Contains(string(doc), `"time_zone": "Europe/Berlin"`) {
		t.Fatalf("table.json: %s, %v", doc, err)
	}
	// status reads --from/--to as the table's local days.
	code, out, stderr := invoke(t, env, "", "status", "--json", "--from", "2026-03-28", "--to", "2026-03-31")
	if code != 0 || !strings.Contains(out, `"time_zone": "Europe/Berlin"`) || !strings.Contains(out, `"expected": 3`) ||
		!strings.Contains(out, `"present": 1`) || !strings.Contains(out, `"interval": "2026-03-27T23:00:00Z/2026-03-30T22:00:00Z"`) {
		t.Fatalf("status: exit %d, %s, %s", code, out, stderr)
	}
	// So does audit.
	code, out, stderr = invoke(t, env, "", "audit", "--json", "--from", "2026-03-29", "--to", "2026-03-30")
	if code != 0 || !strings.Contains(out, `"partition": "dt=2026-03-29"`) || strings.Contains(out, `"partition": "dt=2026-03-28"`) {
		t.Fatalf("audit: exit %d, %s, %s", code, out, stderr)
	}
	// Without the zone (mapped in UTC), or with another, a commit is refused.
	for _, args := range [][]string{
		{"--interval", "2026-12-07/P1D"},
		{"--time-zone", "America/New_York", "--interval", "2026-12-07/P1D"},
	} {
		code, _, stderr := invoke(t, env, "", append(append([]string{"commit", "--run-id", ""}, args...), in)...)
		if code != exitUsage || !strings.Contains(stderr, "--time-zone Europe/Berlin") {
			t.Fatalf("commit %q on a Berlin table: exit %d, %s", args, code, stderr)
		}
	}
	// An hourly table in a zone with DST is refused before anything is written.
	hourEnv := map[string]string{envTable: "file://" + filepath.ToSlash(filepath.Join(dir, "hourly"))}
	code, _, stderr = invoke(t, hourEnv, "", "commit", "--run-id", "", "--grain", "hour", "--time-zone", "Europe/Berlin", "--interval", "2026-12-06T10:00:00+01:00/PT1H", in)
	if code != exitUsage || !strings.Contains(stderr, "daylight saving") {
		t.Fatalf("hourly in Berlin: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "hourly")); !os.IsNotExist(err) {
		t.Fatalf("the refused hourly commit wrote: %v", err)
	}
	code, _, stderr = invoke(t, env, "", "commit", "--run-id", "", "--time-zone", "Mars/Phobos", "--interval", "2026-12-07/P1D", in)
	if code != exitUsage || !strings.Contains(stderr, "Mars/Phobos") {
		t.Fatalf("unknown zone: exit %d, %s", code, stderr)
	}
}
