// Package manifest defines the two JSON documents pswap keeps for each
// partition, and their strict, versioned encoding:
//
//   - the manifest: the immutable, write-once description of one generation
//     (one attempt's complete output for one partition), stored at
//     <table>/_pswap/p/<partition>/manifests/<generation>.json;
//   - the pointer: the partition's only mutable object, naming the current
//     generation, stored at <table>/_pswap/p/<partition>/pointer.json and
//     replaced only by a conditional write.
//
// Tables written before that layout keep both under the partition's own
// folder (<table>/<partition>/_pswap/...); package internal/layout spells
// both layouts, and package swap moves a partition from the older one.
//
// Readers resolve pointer -> manifest -> files. Both documents are plain
// JSON meant to be read by people and tools (jq) as well as by this package;
// this comment is their specification. testdata/valid_manifest.json and
// testdata/valid_pointer.json are complete examples.
//
// # Common rules
//
// A document is one JSON object of valid UTF-8, at most 64 MiB
// (MaxDocumentBytes), with no duplicate keys and nothing after it. Field
// names are case-sensitive. null is never a valid value. Fields marked
// optional below are omitted when empty. Encode and EncodePointer write a
// canonical form: two-space indentation, a fixed field order, one line per
// file, times in UTC, a trailing newline; equal values encode to equal bytes.
//
// The "version" field is "major.minor". A reader rejects a document of
// another major version (ErrUnsupportedVersion; a manifest reader knows
// majors 1 and 2); one of a higher major than it knows was written by a
// newer pswap, and the refusal says so ("written by a newer pswap (format
// 3.0); upgrade pswap to read it", strictjson.ErrNewerFormat, the words
// every pswap document's reader uses). A higher minor version may
// only add optional fields: a reader ignores fields it does not know in a
// document of a higher minor version, and rejects them in a document of its
// own (or a lower) minor version, where they can only be typos or tampering.
//
// Generation ids are UUIDs of version 7 in canonical lowercase form
// ("01938a3c-7b2e-7c1d-9a4f-0123456789ab"): unique, and ordered by creation
// time when compared as strings. Times are RFC 3339 strings with optional
// fractional seconds ("2026-11-29T13:05:07.123456789Z"); a reader accepts any
// offset and converts to UTC, a writer writes UTC ("Z").
//
// # Manifest
//
// Fields, in the order they are written:
//
//	format            string, required: "pswap-manifest".
//	version           string, required: "1.0", "1.1" (with a kind),
//	                  "1.2" (with columns) or "2.0" (with segments: a
//	                  head, see below) for this package.
//	partition         string, required: the partition's Hive-style key in
//	                  canonical form, e.g. "dt=2026-11-29/hr=13" (see the
//	                  partition package).
//	generation        string, required: this generation's id (UUIDv7).
//	data_generation   string, optional: the generation whose data prefix
//	                  (<table>/_pswap/p/<partition>/gen/<id>/, or in the
//	                  legacy layout <table>/<partition>/_pswap/gen/<id>/:
//	                  see data_layout) holds the files.
//	                  Omitted means the generation itself; a rollback names
//	                  an older generation here and copies its file list.
//	parent            string, optional: the generation that was current when
//	                  this one began; omitted for the first generation of a
//	                  partition. Following parents walks the history. Never
//	                  equal to generation.
//	run_id            string, optional: the id of the run (task instance)
//	                  that wrote the generation, at most 256 bytes of
//	                  printable characters. Attempts of the same run share it,
//	                  which makes re-runs idempotent.
//	rollback_of       string, optional: set on a manifest made by a rollback:
//	                  the generation whose content it restores.
//	kind              string, optional (version 1.1): how the generation was
//	                  derived; "merge" for a merge (its rows are the
//	                  parent's whose key the input did not hold, plus the
//	                  input's); "append" for an append (its files are the
//	                  parent's and one run's, all under one data generation:
//	                  the run's in a folder named by the generation it
//	                  staged). Omitted for a replacing commit. A manifest
//	                  with a kind is written as version 1.1.
//	data_layout       integer, optional (version 1.2): 2 when the data
//	                  generation's files lie under the table-level layout's
//	                  <table>/_pswap/p/<partition>/gen/<id>/ (DataLayoutTable);
//	                  omitted for the legacy <table>/<partition>/_pswap/gen/<id>/,
//	                  where every generation written before that layout lies.
//	                  A manifest that reuses another generation's data (a
//	                  rollback, a rebase) copies its data_layout. A manifest
//	                  with it is written as version 1.2.
//	created_at        string, required: when the attempt began (UTC).
//	committed_at      string, required: when the manifest was written (UTC).
//	writer            string, required (may be empty): the software that wrote
//	                  the manifest, e.g. "pswap/0.1.0"; at most 256 bytes of
//	                  printable characters.
//	rows              integer, required: total rows, the sum of files[].rows.
//	bytes             integer, required: total size in bytes, the sum of
//	                  files[].size.
//	content_checksum  string, required: "<algo>:<hex>", a checksum of the
//	                  rows that does not depend on their order or on how they
//	                  are split into files; algo is 1-32 characters of
//	                  [a-z0-9-], hex an even number (16 to 128) of lowercase
//	                  hex digits. Two generations with equal rows and
//	                  content_checksum hold the same data.
//	schema            string, optional: a textual fingerprint of the data's
//	                  schema, at most 1 MiB, no control characters other than
//	                  tab and newline.
//	files             array, required: the data files, in the order the
//	                  writer produced them; empty only when rows is 0; at most
//	                  100000 entries. Each file is an object with:
//	  path            string: the file's path relative to the data prefix,
//	                  e.g. "part-00000.parquet". At most 512 bytes; segments
//	                  separated by "/"; no leading "/", no empty, "." or ".."
//	                  segment, no backslash, no control character, and no
//	                  segment starting with "_" or "." (such names are hidden
//	                  from Hive-style readers). Paths are unique even when
//	                  compared case-insensitively, and no path is a folder of
//	                  another. So a file can never lie outside its generation.
//	  size            integer: the file's size in bytes, 0 to 5 TiB.
//	  rows            integer: the number of rows in the file, >= 0.
//	  checksum        string: "sha256:" and the 64 lowercase hex digits of the
//	                  SHA-256 of the file's bytes.
//	  columns         array, optional (version 1.2): the statistics of the
//	                  file's flat top-level columns, as its Parquet footer
//	                  gives them, so that a publisher of the table's views
//	                  (Iceberg's column statistics) need not read the footer
//	                  again. Omitted: not recorded (read the footer). At
//	                  most 10000 entries, names unique. Each is an object:
//	    name          string: the column's name, 1 to 1024 bytes of UTF-8.
//	    size          integer: compressed bytes of its column chunks, >= 0.
//	    values        integer: its values, nulls included, >= 0.
//	    nulls         integer, optional: its null values, 0 to values;
//	                  omitted when the footer does not say.
//	    type          string, optional: the type of min and max: "boolean"
//	                  ("false"/"true"), "int" (32-bit), "long" (64-bit),
//	                  "date" (days since 1970-01-01, 32-bit), "timestamp"
//	                  (microseconds since 1970-01-01T00:00, 64-bit), each a
//	                  canonical decimal, or "string" (UTF-8, at most 256
//	                  bytes, ordered byte by byte). Omitted: no bounds
//	                  (floating point, decimal, binary, INT96, ...).
//	    min, max      string, optional (each only with type): bounds of the
//	                  column's non-null values, min <= max; omitted when
//	                  unknown, never empty. A string bound may be a prefix
//	                  of 16 code points (min) or such a prefix with its
//	                  last code point incremented (max).
//	                  A manifest with columns is written as version 1.2.
//
// A manifest is written once (create-if-absent) and never modified.
//
// # Pointer
//
//	format            string, required: "pswap-pointer".
//	version           string, required: "1.1" for this package ("1.0" for a
//	                  pointer without history, written by older versions).
//	partition         string, required: as in the manifest.
//	generation        string, required: the current generation; its manifest
//	                  is manifests/<generation>.json.
//	seq               integer, required: 1 for a partition's first commit and
//	                  one more for each later swap, so that a pointer's content
//	                  never repeats (a writer holding an old version tag can
//	                  never mistake a newer pointer for the one it read).
//	parent            string, optional: the current generation's parent.
//	run_id            string, optional: the current generation's run id.
//	rows, bytes, content_checksum:
//	                  copies of the current manifest's totals, so that a status
//	                  check and the identical-content test need one read.
//	files             integer, required since 1.1: the current manifest's
//	                  number of files (so a no-op commit can report it).
//	committed_at      string, required: the current manifest's committed_at.
//	history_truncated boolean, optional (1.1): true when older generations
//	                  exist than the last entry of history.
//	history           array, required since 1.1: the partition's last commits,
//	                  newest first, at most 100 (MaxHistory); history[0] is
//	                  the current generation (its fields equal the pointer's)
//	                  and history[i+1] is the parent of history[i]. Each entry
//	                  is an object with:
//	  generation      string: the generation (unique within history).
//	  data_generation string, optional: as in its manifest (a rollback or a
//	                  rebase names the generation whose data it reuses).
//	  run_id          string, optional: its run id.
//	  committed_at    string: its manifest's committed_at. An entry was
//	                  current until the next newer entry's committed_at.
//	  rows            integer: its total rows.
//	moved_to          string, optional, never in a live pointer: set only in
//	                  the record a layout migration leaves at a partition's
//	                  legacy pointer key: the pointer's full content plus the
//	                  key the pointer moved to. It is a field of no earlier
//	                  version, and the record keeps version 1.0 or 1.1, so
//	                  an older reader refuses it (an unknown field of its own
//	                  minor version) instead of reading or swapping a pointer
//	                  nobody reads any more.
//
// The history is what makes a run id idempotent across later commits: a
// commit whose run id appears in it is a no-op, whatever committed since,
// without reading anything but the pointer. It also carries what garbage
// collection's keep-N and retention rules need (generation, data generation,
// commit time) without reading every manifest. Beyond the bound, the oldest
// entry falls off and history_truncated is set: a run id that committed more
// than 100 commits ago is no longer recognised (the manifests' parent chain
// still records it, but walking it would cost one GET per generation, so the
// same-run check does not). A writer of version 1.0 ignores these fields and
// writes a 1.0 pointer without them; the next writer of 1.1 then starts a new
// history marked truncated.
//
// # Heads and segments (manifest version 2.0)
//
// An append's manifest is a head: its "files" are the partition's newest
// files (fewer than SegmentFiles) and the field "segments" (required in
// 2.0, unknown in 1.x) references the rest, in order:
//
//	segments          array of {"id": the lowercase hex SHA-256 of the
//	                  segment document's bytes, "level", "files", "rows",
//	                  "bytes"}: what the segment holds. rows and bytes of
//	                  the head are the totals of all its files.
//
// A segment document, stored at SegmentKey under the head's data
// generation prefix and never rewritten, is {"format": "pswap-segment",
// "version": "1.0", "partition", "level", "files"} (level 0: SegmentFiles
// files, each as in a manifest) or {..., "level": k, "segments"} (k > 0:
// SegmentFanout references of level k-1). Manifest.Pack builds a head;
// Manifest.Expand reads one back into the plain manifest it stands for,
// checking every segment against its reference. The major version is 2 so
// that a reader of version 1 refuses a head (ErrUnsupportedVersion) rather
// than read only its tail; this package reads both majors, and writes 2.0
// only for a manifest with segments.
//
// # Errors
//
// Decode, DecodePointer, Encode, EncodePointer and the Validate methods
// report the first problem found as an *Error naming the document, the field
// and the problem, e.g.
//
//	manifest: files[3].path "../x": escapes the generation prefix
//
// All of them match ErrInvalid with errors.Is; an unknown major version also
// matches ErrUnsupportedVersion, and a higher one strictjson.ErrNewerFormat.
package manifest
