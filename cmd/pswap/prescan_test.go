package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/pqscan"
)

// TestCommitPrescansFirstParquet: `pswap commit` of Parquet files checks
// the first one ahead of its Begin (pqscan.StartPrescan), and the stager
// takes that check when it adds the file; --check footer and --dry-run
// start none, and a run that already committed stops it unused.
func TestCommitPrescansFirstParquet(t *testing.T) {
	dir := t.TempDir()
	type row struct {
		ID   int64  `parquet:"id"`
		Name string `parquet:"name"`
	}
	var paths []string
	for i, n := range []int{300, 200} {
		rows := make([]row, n)
		for j := range rows {
			rows[j] = row{ID: int64(i*1000 + j), Name: strings.Repeat("x", j%7)}
		}
		p := filepath.Join(dir, []string{"a.parquet", "b.parquet"}[i])
		if err := pq.WriteFile(p, rows); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	table := filepath.Join(dir, "table")
	commit := func(part string, extra ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		a := &app{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
			getenv: func(string) string { return "" }}
		args := append([]string{"commit", "--table", table, "--partition", part}, extra...)
		if err := execute(a, append(args, paths...)); err != nil {
			t.Fatalf("pswap %v: %v\n%s", args, err, stderr.String())
		}
	}
	for _, c := range []struct {
		extra []string
		want  int64
	}{
		{nil, 1},
		{[]string{"--check", "footer"}, 0},
		{[]string{"--dry-run"}, 0},
		{[]string{"--run-id", "r1"}, 1},
		{[]string{"--run-id", "r1"}, 0}, // the same run again: nothing to upload or check
	} {
		before := pqscan.PrescansTaken()
		commit("dt=2026-11-29", c.extra...)
		if got := pqscan.PrescansTaken() - before; got != c.want {
			t.Errorf("commit %v: %d prescans taken, want %d", c.extra, got, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(table, "_pswap")); err != nil {
		t.Errorf("no table written: %v", err)
	}
}
