// Module hooks for icebird 0.3.1, registered before it loads.
//
// icebird decodes Avro blocks of codec "deflate" with gunzip, but the Avro
// spec's deflate codec is raw DEFLATE (RFC 1951, no zlib or gzip header), as
// iceberg-go (and Java Iceberg) write it: gunzip then fails with an unknown
// header. The test setup patches that one call to node's inflateRawSync, in
// memory; node_modules stay as npm installed them.
const target = '/icebird/src/avro/avro.read.js'

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context)
  if (!url.endsWith(target)) return result
  const src = String(result.source)
  const call = 'data = gunzip(data)'
  if (!src.includes(call)) throw new Error(`icecheck: ${target} changed; the deflate patch no longer applies`)
  const patched = "import { inflateRawSync as __inflateRawSync } from 'node:zlib'\n" +
    src.replace(call, 'data = new Uint8Array(__inflateRawSync(data))')
  return { ...result, source: patched, shortCircuit: true }
}
