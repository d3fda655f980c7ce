package duckcheck

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestReadParquet writes a file with DuckDB (nested and flat columns, nulls
// at every level) and reads it back with hyparquet.
func TestReadParquet(t *testing.T) {
	SkipIfUnavailable(t)
	SkipIfHyparquetUnavailable(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, order, codec string) string {
		path := filepath.Join(dir, name)
		_, err := Run(ctx, "COPY (SELECT * FROM (SELECT range AS i, 'x' || range AS s, "+
			"CASE WHEN range = 1 THEN NULL ELSE [range, NULL] END AS l, "+
			"{'a': range, 'b': NULL::VARCHAR} AS st, MAP {'k': range, 'j': 2} AS m, "+
			"TIMESTAMP '2024-01-02 03:04:05.123456' + INTERVAL (range) SECOND AS ts, "+
			"DATE '2024-01-02' AS d, 'ab'::BLOB AS b FROM range(3)) ORDER BY i "+order+") TO "+
			Quote(path)+" (FORMAT parquet, COMPRESSION "+codec+")")
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := write("a.parquet", "ASC", "zstd")
	f, err := ReadParquet(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows != 3 || len(f.Rows) != 3 {
		t.Fatalf("rows: footer %d, read %d", f.NumRows, len(f.Rows))
	}
	if len(f.Columns) != 8 || f.Columns[0] != "i" || f.Columns[7] != "b" {
		t.Errorf("columns = %v", f.Columns)
	}
	got, _ := json.Marshal(f.Rows[2])
	want := `{"b":{"$bytes":"YWI="},"d":"2024-01-02","i":"2","l":["2",null],"m":{"j":"2","k":"2"},"s":"x2","st":{"a":"2","b":null},"ts":"2024-01-02T03:04:07.123456000Z"}`
	if string(got) != want {
		t.Errorf("row 2 =\n%s, want\n%s", got, want)
	}
	if f.Rows[1]["l"] != nil {
		t.Errorf("null list read as %v", f.Rows[1]["l"])
	}

	// The same rows in another order and codec: same checksum.
	b := write("b.parquet", "DESC", "snappy")
	g, err := ReadParquet(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Checksum() != g.Checksum() {
		t.Errorf("checksums differ for the same rows: %s vs %s", f.Checksum(), g.Checksum())
	}
	// One value changed: another checksum.
	g.Rows[0]["s"] = "changed"
	if f.Checksum() == g.Checksum() {
		t.Error("checksum did not change with a value")
	}
}

func TestReadParquetCorrupt(t *testing.T) {
	SkipIfHyparquetUnavailable(t)
	path := filepath.Join(t.TempDir(), "bad.parquet")
	if err := writeFile(path, []byte("PAR1 not a parquet file")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadParquet(context.Background(), path); err == nil {
		t.Fatal("want an error for a file that is not Parquet")
	}
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
