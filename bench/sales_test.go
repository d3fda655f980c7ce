package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/internal/testing/duckcheck"
)

func TestSaleAt(t *testing.T) {
	note := func(s string) *string { return &s }
	tests := []struct {
		i    int64
		want Sale
	}{
		{0, Sale{ID: 0, TS: DayStart, City: "Lisbon", Amount: 0, Quantity: 1, Note: note("note-0")}},
		// 1*2654435761 = 2654435761; >>7 = 20737779; %16 = 3; %1000003 = 427799 (2654 * 1000003 = 2654007962); 40503>>5 = 1265.
		{1, Sale{ID: 1, TS: DayStart.Add(997 * time.Millisecond), City: "Barcelona", Amount: 4277.99, Quantity: 6}},
		{7, Sale{ID: 7, TS: DayStart.Add(7 * 997 * time.Millisecond), City: Cities[((7*2654435761)>>7)%16],
			Amount: float64((7*2654435761)%1000003) / 100, Quantity: 1 + ((7*40503)>>5)%20, Note: note("note-217")}},
		// The timestamp wraps around within the day.
		{86_666, Sale{ID: 86_666, TS: DayStart.Add(time.Duration(86_666*997%86_400_000) * time.Millisecond),
			City: Cities[((86_666*2654435761)>>7)%16], Amount: float64((86_666*2654435761)%1000003) / 100,
			Quantity: 1 + ((86_666*40503)>>5)%20}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.i), func(t *testing.T) {
			got := SaleAt(tc.i)
			if (got.Note == nil) != (tc.want.Note == nil) || (got.Note != nil && *got.Note != *tc.want.Note) {
				t.Errorf("note = %v, want %v", deref(got.Note), deref(tc.want.Note))
			}
			got.Note, tc.want.Note = nil, nil
			if !got.TS.Equal(tc.want.TS) {
				t.Errorf("ts = %v, want %v", got.TS, tc.want.TS)
			}
			got.TS, tc.want.TS = time.Time{}, time.Time{}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestSalesMatchesSaleAt(t *testing.T) {
	rows := Sales(make([]Sale, 100), 1000)
	for k, r := range rows {
		want := SaleAt(1000 + int64(k))
		if r.ID != want.ID || r.City != want.City || r.Amount != want.Amount || !r.TS.Equal(want.TS) || deref(r.Note) != deref(want.Note) {
			t.Fatalf("row %d: %+v, want %+v", k, r, want)
		}
	}
	// The generator reuses note strings: no allocation per row.
	if n := testing.AllocsPerRun(10, func() { Sales(rows, 0) }); n != 0 {
		t.Errorf("Sales allocates %.0f times per call", n)
	}
}

// The Go generator (through pswap and parquet-go) and the DuckDB query
// produce the same rows, so the two pipelines of the benchmark write the
// same table.
func TestSalesSQLEqualsGoRows(t *testing.T) {
	duckcheck.SkipIfUnavailable(t)
	ctx := context.Background()
	const n = 20_000
	dir := t.TempDir()
	table, err := pswap.Open(ctx, filepath.Join(dir, "table"), pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := table.Partition("dt=2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pswap.Write(w, Sales(make([]Sale, n), 0)...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var goFiles []string
	for _, f := range snap.Files {
		goFiles = append(goFiles, duckcheck.Quote(strings.TrimPrefix(f.URI, "file://")))
	}
	duckFile := filepath.Join(dir, "duck.parquet")
	cols := "id, epoch_us(ts) AS ts, city, amount, quantity, note"
	goRows := fmt.Sprintf("SELECT %s FROM read_parquet([%s])", cols, strings.Join(goFiles, ", "))
	duckRows := fmt.Sprintf("SELECT %s FROM read_parquet(%s)", cols, duckcheck.Quote(duckFile))
	res, err := duckcheck.Run(ctx,
		fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet)", SalesSQL(n), duckcheck.Quote(duckFile)),
		fmt.Sprintf(`SELECT
  (SELECT count(*) FROM (%[1]s)) AS go_rows,
  (SELECT count(*) FROM (%[2]s)) AS duck_rows,
  (SELECT count(*) FROM (%[1]s EXCEPT ALL %[2]s)) AS only_go,
  (SELECT count(*) FROM (%[2]s EXCEPT ALL %[1]s)) AS only_duck,
  (SELECT count(*) FROM (%[1]s) WHERE note IS NULL) AS null_notes,
  (SELECT count(DISTINCT city) FROM (%[1]s)) AS cities`, goRows, duckRows))
	if err != nil {
		t.Fatal(err)
	}
	got := res.Rows[0]
	num := func(k string) string { return fmt.Sprint(got[k]) }
	if num("go_rows") != fmt.Sprint(n) || num("duck_rows") != fmt.Sprint(n) {
		t.Fatalf("row counts: go %s, duck %s, want %d", num("go_rows"), num("duck_rows"), n)
	}
	if num("only_go") != "0" || num("only_duck") != "0" {
		t.Fatalf("rows differ: %s only in the Go rows, %s only in DuckDB's", num("only_go"), num("only_duck"))
	}
	if want := fmt.Sprint(n - (n+noteEvery-1)/noteEvery); num("null_notes") != want {
		t.Errorf("null notes = %s, want %s", num("null_notes"), want)
	}
	if num("cities") != fmt.Sprint(len(Cities)) {
		t.Errorf("distinct cities = %s, want %d", num("cities"), len(Cities))
	}
}
