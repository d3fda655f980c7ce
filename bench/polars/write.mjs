// Polars, the second peer of pswap's benchmarks: reads a Parquet file into a
// DataFrame (untimed: the rows are then in memory, as a []Sale is for pswap),
// then times writeParquet of it (Snappy, Polars' defaults otherwise) and
// prints {"rows", "write_ms", "bytes"} as JSON.
//
//   node write.mjs SRC.parquet DST.parquet
import { statSync } from 'node:fs';
import pl from 'nodejs-polars';

const [src, dst] = process.argv.slice(2);
if (!src || !dst) {
  console.error('usage: node write.mjs SRC.parquet DST.parquet');
  process.exit(2);
}
const df = pl.readParquet(src);
const start = performance.now();
df.writeParquet(dst, { compression: 'snappy' });
const writeMs = performance.now() - start;
console.log(JSON.stringify({ rows: df.height, write_ms: writeMs, bytes: statSync(dst).size }));
