package pqscan

import (
	"os"
	"testing"
)

// BenchmarkVerifyPageChecksums times the page CRC pass over the file
// PSWAP_BENCH_PARQUET names (skipped without one): a pass the full check
// makes before its scan, reading page headers, and the bodies of pages
// that carry a CRC.
func BenchmarkVerifyPageChecksums(b *testing.B) {
	path := os.Getenv("PSWAP_BENCH_PARQUET")
	if path == "" {
		b.Skip("PSWAP_BENCH_PARQUET names no Parquet file")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	pr, err := Open(f, fi.Size())
	if err != nil {
		b.Fatal(err)
	}
	defer pr.Close()
	b.SetBytes(fi.Size())
	for b.Loop() {
		if _, err := VerifyPageChecksumsOf(f, fi.Size(), pr.MetaData()); err != nil {
			b.Fatal(err)
		}
	}
}
