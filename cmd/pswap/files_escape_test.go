package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/duckcheck"
)

// Issue 40 item 10: partition values with "/" (escaped %2F, as Hive and
// Spark store them) and the other escaped characters round-trip through
// commit, ls and files, and every line of `files --format uris` is a
// location DuckDB opens (it found no file at the percent-encoded file://
// URIs printed before), reading each partition's rows with its value.
func TestFilesURIsEscapedValues(t *testing.T) {
	dir := t.TempDir()
	table := "file://" + filepath.ToSlash(filepath.Join(dir, "t"))
	values := []struct{ value, key string }{{"a:b %x", "region=a%3Ab %25x"}, {"eu/west", "region=eu%2Fwest"}, {"plain", "region=plain"}}
	for i, v := range values {
		in := filepath.Join(dir, "in.csv")
		if err := os.WriteFile(in, []byte("id,value\n"+strings.Repeat("1,x\n", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := invoke(t, nil, "", "commit", "--table", table, "--run-id", "", "--partition", v.key, in)
		if code != 0 || !strings.HasPrefix(out, "committed "+v.key) {
			t.Fatalf("commit %s: exit %d, %s %s", v.key, code, out, stderr)
		}
	}
	code, out, stderr := invoke(t, nil, "", "ls", "--table", table)
	for _, v := range values {
		if code != 0 || !strings.Contains(out, v.key) {
			t.Fatalf("ls: exit %d, %s %s (want %s)", code, out, stderr, v.key)
		}
	}
	code, out, stderr = invoke(t, nil, "", "files", "--table", table)
	if code != 0 {
		t.Fatalf("files: exit %d, %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(values) {
		t.Fatalf("files printed %q", lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "file://"+filepath.ToSlash(dir)) || strings.Contains(l, "%25") && !strings.Contains(l, "%25x") {
			t.Fatalf("files printed %q, not the stored path", l)
		}
		if _, err := os.Stat(strings.TrimPrefix(l, "file://")); err != nil {
			t.Fatalf("files printed %q: %v", l, err)
		}
	}
	if err := duckcheck.Available(); err != nil {
		t.Skipf("DuckDB: %v", err)
	}
	quoted := make([]string, len(lines))
	for i, l := range lines {
		quoted[i] = duckcheck.Quote(l)
	}
	rows, err := duckcheck.Query(context.Background(), "SELECT region, count(*) AS n FROM read_parquet(["+strings.Join(quoted, ", ")+
		"], hive_partitioning = true) GROUP BY region ORDER BY region")
	if err != nil {
		t.Fatalf("DuckDB on %q: %v", lines, err)
	}
	if got, want := fmt.Sprint(rows), "[map[n:1 region:a:b %x] map[n:2 region:eu/west] map[n:3 region:plain]]"; got != want {
		t.Fatalf("DuckDB sees %s, want %s", got, want)
	}
}
