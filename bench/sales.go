package bench

import (
	"fmt"
	"strconv"
	"time"
)

// Sale is one row of the benchmark's sales table: a realistic mix of an
// integer key, a timestamp, a low-cardinality string, a float, a small
// integer and a mostly-null string.
type Sale struct {
	ID       int64     `parquet:"id"`
	TS       time.Time `parquet:"ts,timestamp(microsecond)"`
	City     string    `parquet:"city"`
	Amount   float64   `parquet:"amount"`
	Quantity int32     `parquet:"quantity"`
	Note     *string   `parquet:"note,optional"`
}

// Cities is the small set the city column takes its values from.
var Cities = [16]string{
	"Lisbon", "Porto", "Madrid", "Barcelona", "Paris", "Lyon", "Berlin", "Hamburg",
	"Munich", "Vienna", "Zurich", "Milan", "Rome", "Amsterdam", "Brussels", "Prague",
}

// DayStart is the first instant of the benchmark's partition (2026-11-29, UTC).
var DayStart = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

const (
	hashMul   = 2654435761 // Knuth's multiplicative hash constant
	amountMod = 1000003    // amounts are (i*hashMul mod amountMod) cents
	msPerDay  = 86_400_000
	tsStep    = 997 // milliseconds between consecutive rows, modulo a day
	noteEvery = 7   // one row in noteEvery has a note
	noteKinds = 1000
)

// notes are the distinct note values, made once so that generating rows
// does not allocate.
var notes = func() []string {
	n := make([]string, noteKinds)
	for i := range n {
		n[i] = "note-" + strconv.Itoa(i)
	}
	return n
}()

// SaleAt returns row i (0-based) of the table. Every column is a pure
// function of i, written in integer arithmetic that SalesSQL repeats
// exactly in DuckDB.
func SaleAt(i int64) Sale {
	h := i * hashMul
	s := Sale{
		ID:       i,
		TS:       time.UnixMilli(DayStart.UnixMilli() + (i*tsStep)%msPerDay).UTC(),
		City:     Cities[(h>>7)%int64(len(Cities))],
		Amount:   float64(h%amountMod) / 100,
		Quantity: int32(1 + ((i*40503)>>5)%20),
	}
	if i%noteEvery == 0 {
		s.Note = &notes[(i*31)%noteKinds]
	}
	return s
}

// Sales fills dst with rows first, first+1, ... and returns it.
func Sales(dst []Sale, first int64) []Sale {
	for k := range dst {
		dst[k] = SaleAt(first + int64(k))
	}
	return dst
}

// SalesSQL is a DuckDB query producing rows [0, n) of the table, equal to
// Sales row for row (ts is a TIMESTAMP in microseconds, quantity an
// INTEGER, note NULL where the Go row has a nil Note).
func SalesSQL(n int64) string {
	cities := "["
	for i, c := range Cities {
		if i > 0 {
			cities += ", "
		}
		cities += "'" + c + "'"
	}
	cities += "]"
	return fmt.Sprintf(`SELECT
  range AS id,
  epoch_ms(%[2]d + (range * %[3]d) %% %[4]d) AS ts,
  %[5]s[((range * %[6]d) >> 7) %% %[7]d + 1] AS city,
  ((range * %[6]d) %% %[8]d)::DOUBLE / 100::DOUBLE AS amount,
  (1 + ((range * 40503) >> 5) %% 20)::INTEGER AS quantity,
  CASE WHEN range %% %[9]d = 0 THEN 'note-' || ((range * 31) %% %[10]d)::VARCHAR END AS note
FROM range(%[1]d)`,
		n, DayStart.UnixMilli(), tsStep, msPerDay, cities, hashMul, len(Cities), amountMod, noteEvery, noteKinds)
}
