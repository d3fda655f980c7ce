// Runs SQL statements (read as JSON from stdin) in an in-memory DuckDB and
// prints one JSON document on stdout: the rows and the wall time in
// milliseconds of each statement. Used by pswap tests as an
// independent Parquet reader and writer; see duckcheck.go.
import { DuckDBInstance } from '@duckdb/node-api';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { statements } = JSON.parse(input);

try {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const millis = [];
  const rows = [];
  for (const sql of statements) {
    const start = performance.now();
    const reader = await conn.runAndReadAll(sql);
    millis.push(performance.now() - start);
    rows.push(reader.getRowObjectsJson());
  }
  process.stdout.write(JSON.stringify({ rows, millis }));
} catch (e) {
  process.stderr.write(String(e && e.message ? e.message : e));
  process.exit(1);
}
