package inputfiles

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pswap/pswap/internal/errkind"
)

func TestIsEngineMarker(t *testing.T) {
	// What Spark, Hadoop committers and DuckDB leave beside data.
	for _, m := range []string{"_SUCCESS", "_committed_123", "_started_123", ".part-00000.parquet.crc", "_temporary/0/part-9.parquet", "part-00000.parquet.crc"} {
		if !IsEngineMarker(m) {
			t.Errorf("%s is a marker", m)
		}
	}
	for _, d := range []string{"part-00000-1b2c.snappy.parquet", "part-0.parquet", "20260901_000_x", "sub/dir/f.parquet", "a_b.parquet"} {
		if IsEngineMarker(d) {
			t.Errorf("%s is data", d)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for name, want := range map[string]string{
		"a.parquet": Parquet, "A.PQ": Parquet, "day.csv": CSV, "day.csv.gz": CSV,
		"x.jsonl": JSONL, "x.ndjson": JSONL, "x.json.gz": JSONL,
	} {
		if got, err := FormatOf(name); got != want || err != nil {
			t.Errorf("FormatOf(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := FormatOf("notes.txt"); !errors.Is(err, errkind.ErrBadInput) {
		t.Errorf("FormatOf(notes.txt): %v, want ErrBadInput", err)
	}
}

func TestDataFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.csv", "a.parquet", "notes.txt", "_SUCCESS", ".hidden.csv", "_tmp/c.csv", "sub/d.jsonl"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(files []string) []string {
		for i, f := range files {
			files[i], _ = filepath.Rel(dir, f)
		}
		return files
	}
	got, err := DataFiles(dir, false)
	if want := []string{"a.parquet", "b.csv", "sub/d.jsonl"}; err != nil || !slices.Equal(rel(got), want) {
		t.Errorf("DataFiles(by extension) = %v, %v; want %v", got, err, want)
	}
	got, err = DataFiles(dir, true)
	if want := []string{"a.parquet", "b.csv", "notes.txt", "sub/d.jsonl"}; err != nil || !slices.Equal(rel(got), want) {
		t.Errorf("DataFiles(any) = %v, %v; want %v", got, err, want)
	}
	if _, err := DataFiles(filepath.Join(dir, "_tmp"), false); err != nil {
		t.Errorf("a folder given by name is listed even when _-prefixed: %v", err)
	}
	empty := t.TempDir()
	if _, err := DataFiles(empty, false); !errors.Is(err, errkind.ErrBadInput) {
		t.Errorf("empty folder: %v, want ErrBadInput", err)
	}
}
