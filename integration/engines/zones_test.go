package engines

import (
	"fmt"
	"testing"
)

// TestZonedDays (issue 40 item 3): a table whose days begin at local
// midnight in Europe/Berlin, committed from Airflow's local intervals
// around the start of DST (2026-03-29 has 23 hours). The Iceberg view's
// partition values are the keys (identity on dt, no transform of a UTC
// timestamp), so DuckDB and PyIceberg read each local day's rows under
// its local date.
func TestZonedDays(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		days := []struct {
			interval, dt string
			rows         int
		}{
			{"2026-03-28T00:00:00+01:00/P1D", "2026-03-28", 1},
			{"2026-03-29T00:00:00+01:00/P1D", "2026-03-29", 2},
			{"2026-03-30T00:00:00+02:00/P1D", "2026-03-30", 3},
		}
		for i, d := range days {
			body := "id,amount\n"
			for r := 0; r < d.rows; r++ {
				body += fmt.Sprintf("%d,%d.5\n", 10*i+r, r)
			}
			tb.run("commit", "--time-zone", "Europe/Berlin", "--interval", d.interval, tb.write(fmt.Sprintf("z%d.csv", i), body))
			tb.record("commit " + d.dt)
		}
		cur := tb.snaps[len(tb.snaps)-1]
		for _, engine := range []string{"duckdb", "pyiceberg"} {
			for _, d := range days {
				req := tb.request(engine, "scan", cur)
				req["filter"] = "dt = DATE '" + d.dt + "'"
				if engine == "pyiceberg" {
					req["filter"] = "dt = '" + d.dt + "'"
				}
				var rows []map[string]any
				if err := call(t, req, &rows); err != nil {
					t.Errorf("%s: WHERE %s: %v", engine, req["filter"], err)
					continue
				}
				if len(rows) != d.rows {
					t.Errorf("%s: WHERE %s: %d rows %v, want the %d of that local day", engine, req["filter"], len(rows), rows, d.rows)
				}
				for _, r := range rows {
					if r["dt"] != d.dt {
						t.Errorf("%s: WHERE %s: a row of %v", engine, req["filter"], r["dt"])
					}
				}
			}
		}
	})
}

// TestSlashPartitionValues (issue 40 item 10): a value holding "/",
// committed escaped as %2F (as Hive and Spark store it), reads back under
// its value in DuckDB and PyIceberg.
func TestSlashPartitionValues(t *testing.T) {
	forEachStore(t, func(t *testing.T, tb *table) {
		regions := map[string]int{"eu/west": 2, "us/east/1": 1}
		i := 0
		for r, n := range regions {
			body := "id,amount\n"
			for k := 0; k < n; k++ {
				body += fmt.Sprintf("%d,1.5\n", 10*i+k)
			}
			i++
			tb.run("commit", "--partition", "region="+escape(r), tb.write(fmt.Sprintf("s%d.csv", i), body))
			tb.record("commit " + r)
		}
		cur := tb.snaps[len(tb.snaps)-1]
		for _, engine := range []string{"duckdb", "pyiceberg"} {
			for r, n := range regions {
				req := tb.request(engine, "scan", cur)
				req["filter"] = "region = '" + r + "'"
				var rows []map[string]any
				if err := call(t, req, &rows); err != nil {
					t.Errorf("%s: WHERE %s: %v", engine, req["filter"], err)
					continue
				}
				if len(rows) != n {
					t.Errorf("%s: WHERE %s: %v, want %d rows", engine, req["filter"], rows, n)
				}
			}
		}
	})
}
