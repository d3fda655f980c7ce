// A long-lived DuckDB for the integration tests: one SQL statement per input
// line ({"sql": "..."}), one JSON answer per output line ({"rows": [...]}
// or {"error": "..."}). Starting node and DuckDB takes a second or more, so
// the invariant checker keeps one process for the whole test run instead of
// starting one per check. argv[2] is the folder whose node_modules holds
// @duckdb/node-api (internal/testing/duckcheck).
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';

const require = createRequire(path.join(process.argv[2], 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let out;
  try {
    const reader = await conn.runAndReadAll(JSON.parse(line).sql);
    out = { rows: reader.getRowObjectsJson() };
  } catch (e) {
    out = { error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
