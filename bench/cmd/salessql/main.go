// Command salessql prints the DuckDB query that produces rows [0, N) of
// the benchmark's sales table (bench.SalesSQL, equal row for row to the Go
// generator bench.Sales), so that scripts outside Go (bench/peers) feed
// every tool the same rows.
//
//	salessql N
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/pswap/pswap/bench"
)

func main() {
	n, err := parseRows(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "salessql:", err)
		os.Exit(2)
	}
	fmt.Println(bench.SalesSQL(n))
}

// parseRows reads the one argument, a row count of at least 1.
func parseRows(args []string) (int64, error) {
	if len(args) != 1 {
		return 0, fmt.Errorf("usage: salessql N (got %d arguments)", len(args))
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("row count %q is not a positive integer", args[0])
	}
	return n, nil
}
