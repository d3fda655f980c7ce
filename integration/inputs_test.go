package integration

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/store"
)

// saleRow is the schema of the test data.
type saleRow struct {
	ID     int64   `parquet:"id"`
	Region string  `parquet:"region"`
	Amount float64 `parquet:"amount"`
	Note   string  `parquet:"note"`
}

// salesRows makes n rows; noteBytes of random hex per row make the data
// incompressible, so that big inputs really take a while to upload.
func salesRows(n, noteBytes int, seed string) []saleRow {
	rows := make([]saleRow, n)
	buf := make([]byte, noteBytes/2)
	for i := range rows {
		note := seed
		if noteBytes > 0 {
			rand.Read(buf)
			note = seed + hex.EncodeToString(buf)
		}
		rows[i] = saleRow{ID: int64(i), Region: []string{"eu", "us", "apac"}[i%3], Amount: float64(i) / 4, Note: note}
	}
	return rows
}

// writeParquetInput writes n rows of test data to a Parquet file and
// returns its path.
func writeParquetInput(t testing.TB, dir, name string, n, noteBytes int, seed string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := parquet.WriteFile(p, salesRows(n, noteBytes, seed)); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeCSVInput writes a small CSV input of n rows.
func writeCSVInput(t testing.TB, dir, name string, n int, seed string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The columns of saleRow: a table has one schema, whichever input
	// kind a commit uses.
	fmt.Fprintln(f, "id,region,amount,note")
	for i := range n {
		fmt.Fprintf(f, "%d,%s,%.2f,%s\n", i, []string{"eu", "us"}[i%2], float64(i)/4, seed)
	}
	return p
}

// commitRows commits n rows through the library (real Parquet files) on st.
func commitRows(st store.Store, part string, n int, seed string, opts pswap.CommitOptions) (pswap.Result, error) {
	p, err := pswap.NewTable(st).Partition(part)
	if err != nil {
		return pswap.Result{}, err
	}
	w, err := p.Begin(ctx, pswap.WriteOptions{Commit: opts})
	if err != nil {
		return pswap.Result{}, err
	}
	if err := pswap.Write(w, salesRows(n, 0, seed)...); err != nil {
		w.Abort(ctx)
		return pswap.Result{}, err
	}
	return w.Commit(ctx)
}

// mustCommitRows is commitRows that fails the test on error.
func mustCommitRows(t testing.TB, st store.Store, part string, n int, seed string, opts pswap.CommitOptions) pswap.Result {
	t.Helper()
	r, err := commitRows(st, part, n, seed, opts)
	if err != nil {
		t.Fatalf("commit %s: %v", part, err)
	}
	return r
}
