package engines

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDataColumnStatistics: the data-file entries carry column statistics
// from the files' footers, so that a filter on a data column skips the
// files whose bounds exclude it (Java Iceberg and PyIceberg plan only the
// matching partition's file), and every engine still reads exactly the
// rows the filter selects, also where the bounds cannot help: a long
// string cut to 16 code points, a double (no bounds), nulls. Days 1 and 3
// come from pswap's CSV writer, day 2 from DuckDB's Parquet writer.
func TestDataColumnStatistics(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		csvDay := func(day int) string {
			var b strings.Builder
			b.WriteString("id,city,name,amount,ts\n")
			for i := range 5 {
				city := fmt.Sprintf("city%d", day)
				if i == 4 {
					city = "" // a null
				}
				fmt.Fprintf(&b, "%d,%s,customer-with-a-long-prefix-%d-%d,%d.25,2026-11-2%dT%02d:00:00Z\n", day*1000+i, city, day, i, i, 6+day, i)
			}
			return b.String()
		}
		tb.run("commit", "--partition", "dt=2026-11-27", tb.write("d1.csv", csvDay(1)))
		tb.record("csv day 1")
		out := filepath.Join(tb.dir, "d2.parquet")
		tb.duckWrite(`SELECT 2000 + i AS id, CASE WHEN i = 4 THEN NULL ELSE 'city2' END AS city,
			'customer-with-a-long-prefix-2-' || i AS name, CAST(i + 0.25 AS DOUBLE) AS amount,
			TIMESTAMPTZ '2026-11-28 00:00:00+00' + INTERVAL (i) HOUR AS ts FROM range(5) t(i)`, out, "FORMAT parquet")
		tb.run("commit", "--partition", "dt=2026-11-28", out)
		tb.record("duckdb day 2")
		tb.run("commit", "--partition", "dt=2026-11-29", tb.write("d3.csv", csvDay(3)))
		cur := tb.record("csv day 3")

		// Java and PyIceberg plan one file for a key of one day.
		var day2 []string
		for _, f := range cur.files {
			if f.Partition == "dt=2026-11-28" {
				day2 = append(day2, asWritten(f.URI))
			}
		}
		for _, engine := range []string{"spark", "pyiceberg"} {
			req := tb.request(engine, "plan", cur)
			req["filter"] = "id = 2003"
			req["plan_eq"] = []string{"id", "2003"}
			var got []string
			if err := call(t, req, &got); err != nil {
				t.Fatalf("%s: plan id = 2003: %v", engine, err)
			}
			if !slices.Equal(got, day2) {
				t.Errorf("%s: the scan of id = 2003 plans\n  %v\nwant day 2's file only (its id bounds)\n  %v", engine, got, day2)
			}
		}

		num := func(r map[string]any, c string) float64 {
			v, _ := strconv.ParseFloat(fmt.Sprint(r[c]), 64)
			return v
		}
		for _, f := range []struct {
			sql, pyice string
			keep       func(map[string]any) bool
		}{
			{"id >= 2001 AND id <= 3002", "", func(r map[string]any) bool { return num(r, "id") >= 2001 && num(r, "id") <= 3002 }},
			{"name = 'customer-with-a-long-prefix-3-2'", "", func(r map[string]any) bool { return r["name"] == "customer-with-a-long-prefix-3-2" }},
			{"name > 'customer-with-a-long-prefix-2-3'", "", func(r map[string]any) bool { return fmt.Sprint(r["name"]) > "customer-with-a-long-prefix-2-3" }},
			{"city = 'city1'", "", func(r map[string]any) bool { return r["city"] == "city1" }},
			{"city IS NULL", "", func(r map[string]any) bool { return r["city"] == nil }},
			{"amount > 3.0", "", func(r map[string]any) bool { return num(r, "amount") > 3 }},
			{"ts >= TIMESTAMP '2026-11-28 02:00:00' AND ts < TIMESTAMP '2026-11-29 01:00:00'", "ts >= '2026-11-28T02:00:00+00:00' AND ts < '2026-11-29T01:00:00+00:00'",
				func(r map[string]any) bool {
					ts := fmt.Sprint(r["ts"])
					return ts >= "2026-11-28T02:00:00" && ts < "2026-11-29T01:00:00"
				}},
		} {
			var want []string
			for _, row := range cur.rows {
				var m map[string]any
				if err := json.Unmarshal([]byte(row), &m); err != nil {
					t.Fatal(err)
				}
				if f.keep(m) {
					want = append(want, row)
				}
			}
			if len(want) == 0 || len(want) == len(cur.rows) {
				t.Fatalf("WHERE %s keeps %d of %d rows: the filter tests nothing", f.sql, len(want), len(cur.rows))
			}
			for _, engine := range engineNames {
				req := tb.request(engine, "scan", cur)
				req["filter"] = f.sql
				if engine == "pyiceberg" && f.pyice != "" {
					req["filter"] = f.pyice
				}
				var rows []map[string]any
				if err := call(t, req, &rows); err != nil {
					t.Errorf("%s: WHERE %s: %v", engine, req["filter"], err)
					continue
				}
				sameRows(t, fmt.Sprintf("%s WHERE %s", engine, req["filter"]), canonRows(t, rows), want)
			}
		}
	})
}
