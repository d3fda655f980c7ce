package bench_test

import (
	"fmt"
	"os"

	"github.com/pswap/pswap/bench"
)

// Ratios compare two measurements of the same round; Summarize gives
// their spread over the rounds.
func ExampleSummarize() {
	pswapSecs := []float64{2.0, 1.8, 2.6}
	naiveSecs := []float64{3.0, 3.6, 2.6}
	fmt.Println(bench.Summarize(bench.Ratios(pswapSecs, naiveSecs)).Format(2))
	// Output: 0.67 (0.50–1.00)
}

// The same row comes from the Go generator and from the DuckDB query.
func ExampleSaleAt() {
	s := bench.SaleAt(7)
	fmt.Println(s.ID, s.TS.Format("15:04:05.000"), s.City, s.Amount, s.Quantity, *s.Note)
	// Output: 7 00:00:06.979 Hamburg 9945.87 1 note-217
}

func ExampleTable() {
	t := bench.Table{Header: []string{"pipeline", "seconds"}}
	t.Add("pswap", "1.94")
	t.Add("naive", "3.25")
	t.Write(os.Stdout)
	// Output:
	// | pipeline | seconds |
	// |----------|---------|
	// | pswap    | 1.94    |
	// | naive    | 3.25    |
}
