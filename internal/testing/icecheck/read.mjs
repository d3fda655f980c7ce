// Reads a pswap table's Iceberg metadata with icebird and prints, as JSON,
// the rows icebird reads from each data file of the current snapshot, with
// the file's partition values and how many rows had a NULL partition column.
//
//   node --import ./register.mjs read.mjs TABLE_URI BASE_URL [METADATA_FILE]
//
// Every URL icebird fetches under TABLE_URI (or under its https:// form for
// s3://) is served from BASE_URL: the test's HTTP server over pswap's store.
// Without METADATA_FILE, icebird finds the version from version-hint.text.
import { icebergMetadata, icebergManifests, icebergRead } from 'icebird'
import { splitManifestEntries } from 'icebird/src/manifest.js'
import { translateS3Url } from 'icebird/src/fetch.js'

const [tableUrl, baseUrl, metadataFileName] = process.argv.slice(2)
const prefixes = [...new Set([tableUrl, translateS3Url(tableUrl)])]
const realFetch = globalThis.fetch
globalThis.fetch = (input, init) => {
  let url = typeof input === 'string' ? input : input.url
  for (const p of prefixes) {
    if (url.startsWith(p + '/')) {
      url = baseUrl + url.slice(p.length)
      return realFetch(url, init)
    }
  }
  return Promise.reject(new Error(`icecheck: refusing to fetch ${url}, outside the table`))
}

const metadata = await icebergMetadata({ tableUrl, metadataFileName })
const { dataEntries } = splitManifestEntries(await icebergManifests(metadata))
const spec = metadata['partition-specs'].find(s => s['spec-id'] === metadata['default-spec-id'])
const partNames = spec.fields.map(f => f.name)
const files = []
let start = 0
for (const e of dataEntries) {
  const n = Number(e.data_file.record_count)
  const rows = await icebergRead({ tableUrl, metadata, rowStart: start, rowEnd: start + n })
  start += n
  let nulls = 0
  for (const r of rows) for (const c of partNames) if (r[c] === null || r[c] === undefined) nulls++
  const partition = {}
  for (const c of partNames) {
    const v = e.data_file.partition[c]
    partition[c] = v instanceof Date ? v.toISOString().slice(0, 10) : String(v) // a typed dt column: as its key says it
  }
  files.push({ path: e.data_file.file_path, partition, rows: rows.length, nulls })
}
const all = await icebergRead({ tableUrl, metadata })
process.stdout.write(JSON.stringify({ version: metadata['last-sequence-number'], partitionColumns: partNames, files, total: all.length }))
