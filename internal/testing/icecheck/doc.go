// Package icecheck reads a pswap table's Iceberg metadata with icebird
// (npm, 0.3.1), a JavaScript Iceberg reader that pswap did not write, for
// tests: the rows it reads from every data file of the current snapshot,
// with the file's partition values.
//
// icebird fetches URLs; Read serves the table's store over a loopback HTTP
// server (with ranged reads) and maps the table's URI onto it, so the same
// check runs on file:// and s3:// (MinIO) tables.
//
// icebird 0.3.1 decodes Avro's deflate codec with gunzip, which fails on
// the raw DEFLATE blocks that the Avro spec prescribes and iceberg-go
// writes. The test setup patches that one call in memory, with a node
// module hook (hooks.mjs); node_modules stay as npm installed them.
//
// Install with `npm ci` in this folder (.ci/run does it). Tests skip only
// when node itself is missing.
package icecheck
