// Package duckcheck runs SQL in DuckDB, through Node.js and the npm package
// @duckdb/node-api, so that tests can check pswap's Parquet output with a
// reader that shares no code with pswap, and benchmarks can compare against
// DuckDB's own Parquet writer.
//
// [ReadParquet] reads a Parquet file with a second independent reader,
// hyparquet (pure JavaScript, with the codecs of hyparquet-compressors),
// and returns its rows as JSON values; [ParquetFile.Checksum] is an
// order-independent checksum of those rows, equal for two files that hold
// the same rows whatever their writer, encodings and codecs.
//
// The npm packages are pinned by package.json and package-lock.json in this
// folder; `npm ci` there installs them into node_modules (not committed).
// Tests call [SkipIfUnavailable] (or [Usable]) first: they skip with a
// clear message when node itself is missing, and fail, naming the folder
// that needs `npm ci`, when node is there but the package is not (see
// internal/testing/nodeenv), so that a cross-check never turns silently off.
//
// This package is for tests and benchmarks only.
package duckcheck
