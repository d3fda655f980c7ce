// Package bench measures pswap against what a user would otherwise do by
// hand, on the same rows and in the same run:
//
//   - pswap writing Go structs to S3 as one atomic generation (encode,
//     upload, commit), against the naive pipeline (DuckDB COPY ... TO a
//     local Parquet file, then one plain PutObject) and against the raw
//     limit (one plain PutObject of the same Parquet bytes);
//   - `pswap commit` of an existing Parquet file against a plain upload;
//   - the requests and latency of a commit for 1, 10 and 100 files;
//   - many writers on many partitions and on one partition;
//   - the peak memory of a write many times larger than the buffer budget.
//
// The rows come from a deterministic generator (Sales) and from an
// equivalent DuckDB query (SalesSQL): a test checks that both produce the
// same rows.
//
// The benchmarks need an S3-compatible server (MinIO) and, for the naive
// pipeline, DuckDB through internal/testing/duckcheck; they skip otherwise. None of
// them runs in a plain `go test ./...`: the Benchmark functions run only
// with -bench, and the report (TestReport) only with PSWAP_BENCH=1. The
// script bench/run.sh starts MinIO, runs the report and prints the table
// that BENCHMARKS.md records.
//
// The machine the numbers come from is shared and small, so the report
// never judges absolute times: every comparison is a ratio of two
// measurements taken back to back in the same round, summarised as
// min/median/max over several rounds.
package bench
