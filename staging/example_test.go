package staging_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store/memstore"
)

type Sale struct {
	ID     int64     `parquet:"id"`
	Store  string    `parquet:"store"`
	Amount int64     `parquet:"amount,decimal(2:18)"`
	At     time.Time `parquet:"at,timestamp(microsecond)"`
}

func ExampleWrite() {
	ctx := context.Background()
	st := memstore.New()
	s := staging.New(ctx, st, "sales/dt=2026-11-29/_pswap/gen/0001/", staging.Options{})
	defer s.Abort(ctx) // discards everything unless Finish succeeded

	at := time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC)
	err := staging.Write(s,
		Sale{ID: 1, Store: "north", Amount: 1250, At: at},
		Sale{ID: 2, Store: "south", Amount: 990, At: at.Add(time.Minute)},
	)
	if err != nil {
		panic(err)
	}
	c, err := s.Finish(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(c.Files), c.Files[0].Path, c.Rows)
	// Output: 1 part-00000.parquet 2
}

func ExampleStager_AddCSV() {
	ctx := context.Background()
	s := staging.New(ctx, memstore.New(), "gen/0001/", staging.Options{})
	defer s.Abort(ctx)

	// Types are inferred from the first InferRows rows (here one); a later
	// row that does not fit is an error that names its line.
	csv := "id,store,amount\n1,north,12.50\n2,south,oops\n"
	err := s.AddCSV(ctx, strings.NewReader(csv), "sales.csv", staging.CSVOptions{InferRows: 1})
	fmt.Println(err)
	// Output: bad input: sales.csv: line 3: column "amount": want float64, got "oops"
}

func ExampleStager_Finish() {
	ctx := context.Background()
	// The same rows in another order give the same content checksum.
	checksum := func(jsonl string) string {
		s := staging.New(ctx, memstore.New(), "gen/0001/", staging.Options{})
		defer s.Abort(ctx)
		if err := s.AddJSONL(ctx, strings.NewReader(jsonl), "in.jsonl"); err != nil {
			panic(err)
		}
		c, err := s.Finish(ctx)
		if err != nil {
			panic(err)
		}
		return c.ContentChecksum
	}
	a := checksum(`{"id":1,"v":"x"}` + "\n" + `{"id":2,"v":"y"}`)
	b := checksum(`{"id":2,"v":"y"}` + "\n" + `{"id":1,"v":"x"}`)
	fmt.Println(a == b, strings.HasPrefix(a, "colsum128:"))
	// Output: true true
}
