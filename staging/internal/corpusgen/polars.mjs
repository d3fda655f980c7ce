// Polars' half of staging's corpus (see main.go): reads files DuckDB wrote
// and writes the same rows with Polars' Parquet writer in several codecs.
// Polars has no map type (it reads a MAP as a list of key/value structs and
// writes it so), so the nested rows lose their map column here, as they do
// in the DuckDB-written "nestednomap" files they are compared with.
//
//   node polars.mjs DIR POLARS_DIR
// DIR holds flat.duckdb.snappy.parquet and nested.duckdb.snappy.parquet;
// POLARS_DIR is a folder where `npm ci` installed nodejs-polars (the
// project's bench/polars).
import { createRequire } from 'node:module';

const [dir, polarsDir] = process.argv.slice(2);
const pl = createRequire(`${polarsDir}/`)('nodejs-polars');
const flat = pl.readParquet(`${dir}/flat.duckdb.snappy.parquet`);
const nested = pl.readParquet(`${dir}/nested.duckdb.snappy.parquet`).drop('attrs');
for (const codec of ['snappy', 'zstd', 'lz4', 'gzip', 'uncompressed']) {
  flat.writeParquet(`${dir}/flat.polars.${codec}.parquet`, { compression: codec });
  nested.writeParquet(`${dir}/nestednomap.polars.${codec}.parquet`, { compression: codec });
}
