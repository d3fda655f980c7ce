// Reads Parquet files (paths as arguments) with hyparquet, a Parquet reader
// written in JavaScript that shares no code with pswap, parquet-go, Arrow or
// DuckDB, and prints a JSON array on stdout, one document per file: the column
// names, the row count of the footer and every row as an object of JSON values. Used by pswap
// tests as a second independent reader; see hyparquet.go for the value forms.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

const paths = process.argv.slice(2);

// Exact, unit-independent forms: timestamps as ISO 8601 UTC with nanoseconds,
// dates as YYYY-MM-DD (JavaScript Dates would drop everything below a millisecond).
function isoNanos(nanos) {
  const ms = nanos / 1000000n - (nanos % 1000000n < 0n ? 1n : 0n);
  const rest = nanos - ms * 1000000n;
  const d = new Date(Number(ms)).toISOString(); // 2006-01-02T15:04:05.000Z
  return d.slice(0, 23) + String(rest).padStart(6, '0') + 'Z';
}
const parsers = {
  timestampFromMilliseconds: (v) => isoNanos(BigInt(v) * 1000000n),
  timestampFromMicroseconds: (v) => isoNanos(BigInt(v) * 1000n),
  timestampFromNanoseconds: (v) => isoNanos(BigInt(v)),
  dateFromDays: (v) => new Date(Number(v) * 86400000).toISOString().slice(0, 10),
  stringFromBytes: (b) => b && new TextDecoder().decode(b),
  jsonFromBytes: (b) => b && JSON.parse(new TextDecoder().decode(b)),
  geometryFromBytes: (b) => b,
  geographyFromBytes: (b) => b,
  uuidFromBytes: (b) => b && Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(''),
};

// JSON forms: BigInt as a decimal string, bytes as {"$bytes": base64},
// non-finite floats as the strings "NaN", "Infinity", "-Infinity", undefined as null.
function toJSON(v) {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString('base64') };
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v, toJSON);
  if (typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v)) o[k] = toJSON(v[k]);
    return o;
  }
  return v;
}

// One document per file, in order; a file that fails gives {"error": ...}.
const out = [];
for (const path of paths) {
  try {
    const file = await asyncBufferFromFile(path);
    const metadata = await parquetMetadataAsync(file);
    const columns = metadata.schema[0].num_children
      ? metadata.schema.slice(1).filter((_, i) => isTopLevel(metadata.schema, i + 1)).map((e) => e.name)
      : [];
    const rows = await parquetReadObjects({ file, metadata, compressors, parsers, utf8: false });
    out.push({ columns, num_rows: String(metadata.num_rows), rows: rows.map(toJSON) });
  } catch (e) {
    out.push({ error: String(e && e.message ? e.message : e) });
  }
}
process.stdout.write(JSON.stringify(out));

// isTopLevel reports whether schema element i is a direct child of the root.
function isTopLevel(schema, i) {
  let pos = 1;
  for (let c = 0; c < schema[0].num_children; c++) {
    if (pos === i) return true;
    pos = skip(schema, pos);
  }
  return false;
}
function skip(schema, pos) {
  const n = schema[pos].num_children || 0;
  pos++;
  for (let c = 0; c < n; c++) pos = skip(schema, pos);
  return pos;
}
