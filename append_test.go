package pswap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap"
)

// TestAppendViewsAddOnly: appends through the facade, published to the
// Iceberg metadata and the Delta log: each Iceberg snapshot of an append
// is an append that adds the run's file and deletes nothing (its totals
// those of all the runs), each Delta version of one holds only adds of
// the run's files; a replace between them is an overwrite.
func TestAppendViewsAddOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	table, err := pswap.Open(ctx, filepath.Join(dir, "events"), pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	day, err := table.Partition("dt=2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	write := func(w *pswap.Writer, err error, rows ...Sale) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := pswap.Write(w, rows...); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if pub := w.Publish(ctx, pswap.PublishOptions{}); pub.Err != nil {
			t.Fatal(pub.Err)
		}
	}
	appendRun := func(run string, rows ...Sale) {
		t.Helper()
		w, err := day.Append(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: run}})
		write(w, err, rows...)
	}
	appendRun("h13", Sale{1, "Lisbon", 1})
	if _, err := table.SetViews(ctx, pswap.Views{Iceberg: true, Delta: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := table.Publish(ctx, pswap.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	appendRun("h14", Sale{2, "Porto", 2}, Sale{3, "Porto", 3})
	appendRun("h15", Sale{4, "Faro", 4})
	w, err := day.Begin(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: "replace"}})
	write(w, err, Sale{9, "Braga", 9})
	appendRun("h16", Sale{5, "Faro", 5})

	var meta struct {
		Snapshots []struct {
			Summary map[string]string `json:"summary"`
		} `json:"snapshots"`
	}
	hint, err := os.ReadFile(filepath.Join(dir, "events", "metadata", "version-hint.text"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "events", "metadata", "v"+strings.TrimSpace(string(hint))+".metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range meta.Snapshots {
		got = append(got, fmt.Sprintf("%s +%s -%s =%s", s.Summary["operation"], s.Summary["added-records"], s.Summary["deleted-records"], s.Summary["total-records"]))
	}
	want := []string{"append +1 -0 =1", "append +2 -0 =3", "append +1 -0 =4", "overwrite +1 -4 =1", "append +1 -0 =2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Iceberg snapshots %v, want %v", got, want)
	}

	var versions []string
	for v := 1; v <= 4; v++ {
		data, err := os.ReadFile(filepath.Join(dir, "events", "_delta_log", fmt.Sprintf("%020d.json", v)))
		if err != nil {
			t.Fatal(err)
		}
		var acts []string
		for l := range strings.Lines(string(data)) {
			var a map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatal(err)
			}
			for k := range a {
				if k == "add" || k == "remove" {
					acts = append(acts, k)
				}
			}
		}
		versions = append(versions, strings.Join(acts, ","))
	}
	wantDelta := []string{"add", "add", "remove,remove,remove,add", "add"}
	if fmt.Sprint(versions) != fmt.Sprint(wantDelta) {
		t.Fatalf("Delta versions 1-4: %v, want %v", versions, wantDelta)
	}
}

// TestAppendViewsAcrossSegments: 40 appends of one file each, which take
// the partition's manifest past manifest.SegmentFiles (a head that lists
// the older files by reference): every Iceberg snapshot is still an
// append that adds one row and deletes nothing, the last one totals all
// 40, the last Delta version holds one add, and Verify reads all 40 files.
func TestAppendViewsAcrossSegments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	table, err := pswap.Open(ctx, filepath.Join(dir, "events"), pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	day, err := table.Partition("dt=2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		if i == 1 {
			// The views, once the table has a commit (table.json).
			if _, err := table.SetViews(ctx, pswap.Views{Iceberg: true, Delta: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := table.Publish(ctx, pswap.PublishOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		w, err := day.Append(ctx, pswap.WriteOptions{Commit: pswap.CommitOptions{RunID: fmt.Sprintf("run-%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := pswap.Write(w, Sale{int64(i), "Lisbon", float64(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if pub := w.Publish(ctx, pswap.PublishOptions{}); pub.Err != nil {
			t.Fatal(pub.Err)
		}
	}
	hint, err := os.ReadFile(filepath.Join(dir, "events", "metadata", "version-hint.text"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "events", "metadata", "v"+strings.TrimSpace(string(hint))+".metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Snapshots []struct {
			Summary map[string]string `json:"summary"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	if len(meta.Snapshots) != n {
		t.Fatalf("%d Iceberg snapshots, want %d", len(meta.Snapshots), n)
	}
	for i, s := range meta.Snapshots {
		got := fmt.Sprintf("%s +%s -%s =%s", s.Summary["operation"], s.Summary["added-records"], s.Summary["deleted-records"], s.Summary["total-records"])
		if want := fmt.Sprintf("append +1 -0 =%d", i+1); got != want {
			t.Fatalf("Iceberg snapshot %d: %s, want %s", i+1, got, want)
		}
	}
	last, err := os.ReadFile(filepath.Join(dir, "events", "_delta_log", fmt.Sprintf("%020d.json", n-1)))
	if err != nil {
		t.Fatal(err)
	}
	if adds, removes := strings.Count(string(last), `{"add"`), strings.Count(string(last), `{"remove"`); adds != 1 || removes != 0 {
		t.Fatalf("the last Delta version holds %d adds and %d removes, want 1 and 0:\n%s", adds, removes, last)
	}
	rep, err := day.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != n || rep.Rows != n {
		t.Fatalf("verify: %d files, %d rows; want %d of each", rep.Files, rep.Rows, n)
	}
}
