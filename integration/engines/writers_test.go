package engines

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestForeignWriter: a user appends rows to a pswap table with Spark (a
// path table: Spark writes the next vN.metadata.json and the hint). The
// next publish must neither drop that snapshot's data silently nor carry
// it: it refuses, naming the snapshot and what to do, and writes nothing;
// the commit itself stands.
func TestForeignWriter(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "sales")
	tb := &table{t: t, store: "file", url: root, root: root, dir: dir}
	tb.run("commit", "--partition", "dt=2026-11-27", tb.write("a.csv", "id,amount\n1,1.5\n2,2.5\n"))
	before := tb.record("commit 27")
	req := tb.request("spark", "sql", before)
	req["sql"] = "SELECT 1"
	var rows []map[string]any
	if err := call(t, req, &rows); err != nil {
		t.Fatal(err)
	}
	req = tb.request("spark", "append", before)
	req["sql"] = "SELECT 9 AS id, 9.5D AS amount, DATE '2026-11-27' AS dt"
	if err := call(t, req, nil); err != nil {
		t.Fatalf("spark append: %v", err)
	}
	out, err := tb.try("commit", "--partition", "dt=2026-11-28", "--json", tb.write("b.csv", "id,amount\n3,3.5\n"))
	if err != nil {
		t.Fatalf("the commit must stand when the publish is refused: %v", err)
	}
	var res struct {
		Published bool `json:"published"`
	}
	json.Unmarshal([]byte(out), &res)
	if res.Published {
		t.Fatalf("the commit published over Spark's snapshot: %s", out)
	}
	_, err = tb.try("publish")
	if err == nil || !strings.Contains(err.Error(), "changed by another writer") {
		t.Fatalf("pswap publish after a foreign snapshot: %v, want a refusal naming the other writer", err)
	}
	t.Logf("refusal: %v", err)
}

// TestSparkMaintenance: Spark's own maintenance run by a user on a pswap
// table. remove_orphan_files (the action behind the procedure, with a
// cut-off in the future) skips pswap's hidden _pswap folders: it deletes
// nothing pswap needs, and the table reads, verifies and commits as before.
// expire_snapshots removes the files of retired generations that only old
// snapshots name, which `rollback --to` of those generations then misses:
// the README says to leave expiry to pswap gc, and this test keeps that
// statement true.
func TestSparkMaintenance(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		data := filepath.Join(repoRoot(), "examples", "data")
		for _, d := range []string{"2026-11-27", "2026-11-28"} {
			tb.run("commit", "--partition", "dt="+d, filepath.Join(data, "sales", d+".csv"))
			tb.record("commit " + d)
		}
		first := strings.TrimSpace(tb.run("show", "--partition", "dt=2026-11-28", "--json"))
		tb.run("commit", "--partition", "dt=2026-11-28", filepath.Join(data, "sales-corrected"))
		cur := tb.record("replace 2026-11-28")

		var orphans []string
		if err := call(t, tb.request("spark", "orphans", cur), &orphans); err != nil {
			t.Fatalf("spark remove_orphan_files: %v", err)
		}
		for _, o := range orphans {
			if strings.Contains(o, "/_pswap/") || !strings.Contains(o, "/metadata/") {
				t.Errorf("remove_orphan_files deleted %s, which pswap needs", o)
			}
		}
		t.Logf("remove_orphan_files deleted %d file(s): %v", len(orphans), orphans)
		tb.run("verify")
		tb.checkEngines("dt")
		tb.run("commit", "--partition", "dt=2026-11-29", filepath.Join(data, "sales", "2026-11-29.csv"))
		tb.record("commit after orphans")
		tb.checkEngines("dt")

		var exp map[string]int64
		if err := call(t, tb.request("spark", "expire", tb.snaps[len(tb.snaps)-1]), &exp); err != nil {
			t.Fatalf("spark expire_snapshots: %v", err)
		}
		t.Logf("expire_snapshots: %v", exp)
		if exp["deleted_data_files"] != 1 {
			t.Errorf("expire_snapshots deleted %d data files, want 1 (the replaced generation of dt=2026-11-28): the README's warning is out of date", exp["deleted_data_files"])
		}
		var shown struct {
			Generation string `json:"generation"`
		}
		json.Unmarshal([]byte(first), &shown)
		if _, err := tb.try("rollback", "--partition", "dt=2026-11-28", "--to", shown.Generation); err == nil {
			t.Errorf("rollback to a generation whose files expire_snapshots deleted succeeded")
		}
		tb.run("verify")
	})
}
