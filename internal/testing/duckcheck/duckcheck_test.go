package duckcheck

import (
	"context"
	"path/filepath"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"a": "'a'", "it's": "'it''s'", "": "''"} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	SkipIfUnavailable(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.parquet")
	r, err := Run(ctx,
		"COPY (SELECT range AS i, CASE WHEN range % 3 = 0 THEN NULL ELSE range END AS n FROM range(10)) TO "+Quote(path)+" (FORMAT parquet)",
		"SELECT count(*) AS c, sum(i) AS s, count(*) - count(n) AS nulls FROM read_parquet("+Quote(path)+")")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 || len(r.Durations) != 2 || len(r.All) != 2 || len(r.All[0]) != 1 {
		t.Fatalf("got %+v", r)
	}
	row := r.Rows[0]
	if row["c"] != "10" || row["s"] != "45" || row["nulls"] != "4" {
		t.Errorf("row = %v", row)
	}
}

func TestBadSQL(t *testing.T) {
	SkipIfUnavailable(t)
	if _, err := Query(context.Background(), "SELEKT 1"); err == nil {
		t.Fatal("want an error for bad SQL")
	}
}
