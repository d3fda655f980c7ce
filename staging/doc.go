// Package staging writes the data files of one generation of a partition:
// it turns a job's rows into Parquet files under the generation's prefix
// on a store, streaming, and returns the [manifest.Content] that the
// commit records.
//
// # Inputs
//
// One [Stager] accepts any mix of:
//   - Go structs, through parquet-go's generic writer: [Write].
//   - Arrow record batches, through Arrow's Parquet writer (pqarrow):
//     [Stager.WriteRecord].
//   - Existing local Parquet files, copied byte for byte after their footer
//     and every page were read and checked: [Stager.AddParquetFile].
//   - CSV and JSON Lines, converted to Arrow records (schema given or
//     inferred): [Stager.AddCSV], [Stager.AddJSONL].
//
// A generation has one schema. It is the schema the first input
// establishes (or [Options.Schema]), in canonical form: the Arrow schema
// that Arrow's Parquet reader derives from the Parquet schema a file has,
// without metadata. A struct with a non-pointer int64 field, an Arrow
// field of type int64 that is not nullable, and a Parquet column
// "required int64" are the same column. Every later input must have the
// same canonical schema, or the Stager fails with [ErrSchemaMismatch]
// showing both. Columns may be nested (lists, structs, maps, and any
// nesting of them); list element and map entry names are not part of the
// canonical schema (writers call a list's element "element", "item" or
// "array"): they are "element", "key" and "value" there.
//
// With [Options.Conform] (a table schema's checks: package tablemeta), each
// input's canonical schema is first mapped to the schema it must be stored
// in. Data of another schema is converted through Arrow's safe casts
// (int32 into int64, float32 into float64, columns reordered, ...; an
// overflow or a null in a NOT NULL column is an error): Arrow records, CSV
// and JSON Lines as they are written, and an existing Parquet file by
// rewriting it instead of copying it, so that the files, their checksums
// and the content checksum are those of the stored data. Go structs are
// never converted: their types must be the stored ones. With
// [Options.TextSchema], CSV and JSON Lines are read with the table's
// types instead of inferred ones. A JSON Lines input's columns are its
// keys, as a CSV input's are its header's names: a schema column that no
// line has is the ConformFunc's to accept or refuse, as the same CSV
// column would be. A nullable column that an input lacks is filled with
// nulls when the ConformFunc's schema has it (a table's
// FillMissingNullable).
//
// # Codecs and encodings
//
// Files are read with Arrow's Parquet reader: every encoding it knows
// (PLAIN, dictionary, RLE, DELTA_*, BYTE_STREAM_SPLIT), DataPage v1 and
// v2, and the codecs SNAPPY, GZIP, BROTLI, ZSTD and LZ4_RAW.
// [RegisterCodecs] adds to Arrow's process-wide registry Parquet's
// deprecated LZ4 codec in all three framings writers use (Hadoop's, the LZ4
// frame format, a bare LZ4 block), and makes an empty compressed input
// decode to nothing for every codec (a DataPage v2 of nulls only carries no
// compressed bytes). Importing the package does not: the first New does,
// and a program that reads Parquet with Arrow itself calls it.
//
// The pages of a file with a flat schema of primitive columns (booleans,
// integers, floats, decimals, strings, binary and fixed-size binary,
// dates, times, timestamps, INT96 timestamps; required or optional) are
// decoded by pswap's own fast scan instead of Arrow's record reader:
// Arrow's page reader decompresses each page, and the values (PLAIN,
// dictionary, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
// BYTE_STREAM_SPLIT, RLE booleans) are hashed straight into the content
// checksum without building Arrow arrays, at about half the CPU. A row
// group it cannot decode (another encoding, a page of over a million
// values, or anything wrong with it) is decoded again by Arrow's reader,
// which decides; the checksum is the same either way.
//
// # Files
//
// Files are named part-00000.parquet, part-00001.parquet, ... under the
// prefix, written create-if-absent through store.Store.NewWriter, so
// encoding overlaps the (multipart) upload. A file is closed and the next
// one started once it reaches about [Options.TargetFileSize]; a row group
// is flushed at [Options.RowGroupRows] rows or [Options.RowGroupBytes]
// buffered bytes. Memory is therefore bounded by about one row group plus
// the store writer's part buffers, however large the generation.
// Switching between input kinds (structs of another type, Arrow records
// of another Arrow schema, an ingested file) starts a new file.
//
// Go structs are encoded by Write itself, while the row hash of the same
// call's rows runs on a second core (one hand-off per call: write in
// batches of thousands of rows to use it); with more than one encoder
// ([Options.Encoders]; by default GOMAXPROCS-1, at most 4, so one on 2
// cores), row groups are encoded on that many goroutines from copies of
// their rows, and copied into the file in order, page for page (memory
// then holds up to Encoders+2 row groups). A
// row group of structs is a fixed run of rows counted from the start of
// its file: [Options.RowGroupRows], or fewer when the structs would exceed
// RowGroupBytes or TargetFileSize, cut earlier when its encoding buffers
// RowGroupBytes; a file is closed between row groups once it has reached
// TargetFileSize. So the bytes depend on the rows and the options only,
// not on the number of encoders, on scheduling, or on how the rows were
// split into Write calls.
//
// # Encodings
//
// The defaults were chosen by comparing, column by column, pswap's files
// with DuckDB's for the same rows (the benchmark's sales rows and the CSV
// example; see BENCHMARKS.md), and make files smaller than DuckDB's at the
// same write speed:
//   - 64-bit integers and timestamps: DELTA_BINARY_PACKED (ids, counters and
//     times that grow shrink to a few bits per value; random values cost
//     about what PLAIN does). PLAIN timestamps were the largest column.
//   - strings, binary and 32-bit integers: dictionary encoded (RLE_DICTIONARY),
//     falling back to PLAIN within a row group whose dictionary outgrows
//     256 KiB, so that unique values cost little more than PLAIN and memory
//     stays bounded. (The Arrow path leaves other types to Arrow's
//     dictionary default with the same fallback.)
//   - floating point and booleans: PLAIN.
//   - Snappy pages, row groups of at most [DefaultRowGroupRows] rows (DuckDB's
//     size), each column chunk with min/max statistics: a reader skips row
//     groups outside a filter and scans row groups in parallel. The struct
//     path also writes page indexes (parquet-go always does); the Arrow path,
//     like DuckDB, does not.
//
// The content Finish returns records each file's column statistics
// (manifest.File.Columns: sizes, value and null counts, bounds), taken from
// the footer staging wrote (or read, for an existing file), so that the
// publish of the table's views reads no data file back.
//
// A struct tag that names an encoding (`parquet:"amount,split"` for
// BYTE_STREAM_SPLIT, `parquet:"id,plain"`) overrides the default for its
// column; [Options.RowGroupRows] and [Options.Compression] tune the rest.
//
// Output is deterministic: the same rows in the same order with the same
// options give byte-identical files (for the same build: a new version of
// an encoder library may change the bytes, never the content checksum).
// The files' created_by is "pswap", and nothing in them depends on the
// clock or on randomness.
//
// A file whose upload ends in a precondition failure or an unknown outcome
// (the client retried a PUT whose reply was lost and met its own object)
// is read back and accepted when the store holds exactly the bytes written:
// keys are unique to the generation, so nothing else can be there.
//
// Per file, the Content records its size, its rows, and the SHA-256 of its
// bytes, computed as they stream to the store (never by reading back).
//
// # Content checksum
//
// The generation's ContentChecksum does not depend on file boundaries, on
// row order, on the input kind, on compression, or on the Parquet
// encoding: two runs that produce the same multiset of rows under the same
// schema have the same checksum even when their bytes differ. It is
// colsum128 (the algorithm name "colsum128"), a formulation that works on decoded columns
// without materialising rows, the same function on every input path (Go
// structs, Arrow records, CSV, JSON Lines, existing Parquet files, and
// pswap's verify and adopt, which scan stored files):
//
//	"colsum128:" + hex(XXH3-128(
//	    "pswap/colsum128/v2" 0x00 schema 0x00 rows(uint64 BE) sum(128 bits BE)))
//
// where schema is the canonical schema's text (Content.Schema), rows the
// row count, and sum the sum modulo 2^128 of every row's hash. For the
// value v of column c (0-based, schema order) with seed(c) = fmix64(c+1)
// (fmix64 is MurmurHash3's 64-bit finalizer, a bijection), its value hash
// is
//
//	null                        0x6e756c6c5f763221, in any column
//	fixed width: bool, int8..   fmix64(x XOR seed(c)), x the value's 64 bits:
//	int64, uint8..uint64,         integers sign- or zero-extended, bool 0 or 1,
//	float16/32/64, date32,        floats their IEEE 754 bits zero-extended
//	time32/64, timestamp          (NaN as in rowsum128 below), dates in days,
//	                              times and timestamps in the schema's unit;
//	                              distinct values of a column never collide
//	string, binary, fixed       XXH3-64 of the bytes with seed seed(c)
//	binary
//	decimals, lists, structs,   XXH3-64, with seed seed(c), of the value's
//	maps                          rowsum128 encoding (below)
//
// A row's accumulator starts at 0 and folds each column's value hash h in
// schema order: acc = (acc XOR h) * 0x9e3779b97f4a7c15 (mod 2^64). The
// row's hash is the 128 bits hi:lo with lo = fmix64(acc) and
// hi = fmix64(acc + 0xc2b2ae3d27d4eb4f).
//
// Generations staged before colsum128 record rowsum128 ("rowsum128"),
// which is still computed where such a generation is compared
// ([Options.LegacyChecksum]: a commit onto one is a no-op for identical
// rows) or verified (pswap verify). It is
//
//	"rowsum128:" + hex(XXH3-128(
//	    "pswap/rowsum128/v1" 0x00 schema 0x00 rows(uint64 BE) sum(128 bits BE)))
//
// with sum the sum modulo 2^128 of XXH3-128 (seed 0) of every row's
// canonical encoding. A row's encoding is the concatenation, in schema
// order, of each column's value:
//
//	null                      0x00
//	bool                      0x01, 1 byte (0 or 1)
//	int8..int64               0x02, 8 bytes little-endian two's complement
//	uint8..uint64             0x03, 8 bytes little-endian
//	float32                   0x04, 4 bytes IEEE 754 little-endian (NaN as 0x7fc00000)
//	float64                   0x05, 8 bytes IEEE 754 little-endian (NaN as 0x7ff8000000000000)
//	string                    0x06, uvarint length, UTF-8 bytes
//	binary, fixed binary      0x07, uvarint length, bytes
//	date32                    0x08, 4 bytes little-endian days since 1970-01-01
//	time32, time64            0x09, 8 bytes little-endian, in the schema's unit
//	timestamp                 0x0a, 8 bytes little-endian, in the schema's unit
//	decimal128, decimal256    0x0b, 16 or 32 bytes little-endian two's complement unscaled value
//	list (any list type)      0x0c, uvarint element count, each element's encoding in list order
//	struct                    0x0d, uvarint field count, each field's encoding in schema order
//	map                       0x0e, uvarint entry count, then the entries sorted bytewise, each
//	                          as uvarint length + (key's encoding, value's encoding)
//	float16                   0x0f, 2 bytes IEEE 754 little-endian (NaN as 0x7e00)
//
// Nulls are 0x00 at every level: a null list, struct or map, a null
// element, a null struct field, a null map value. An empty list (0x0c
// 0x00) is not a null list (0x00). List order counts; map entry order does
// not (the entries are sorted), so two writers that store a map's entries
// in different orders give the same checksum (in both algorithms: colsum128
// hashes a nested value's encoding).
//
// Test vectors (hex; TestNestedEncodingVectors checks them):
//
//	["a", null, "c"] of strings       0c03 060161 00 060163
//	[] / null list / [null]           0c00 / 00 / 0c0100
//	{x: 1.5 (double), y: 2 (int64)}   0d02 05000000000000f83f 020200000000000000
//	{x: null, y: null} / null struct  0d020000 / 00
//	map {"z": 26, "a": 1} (int64)     0e02 0c060161020100000000000000 0c06017a021a00000000000000
//	[null, {n: null, v: null}, {n: "e3", v: [null]}]
//	                                  0c03 00 0d020000 0d0206026533 0c0100
//
// Values are taken in the canonical schema's types: an Arrow date64 is
// hashed as its date32, a large_string as a string, a dictionary as its
// values, a timestamp[s] in the milliseconds Parquet stores.
//
// # Errors
//
// Any error is final: the Stager aborts the upload in flight, deletes the
// files it already wrote, and returns the error again from every call.
// Bad CSV or JSON Lines rows fail with [ErrBadInput] naming the input and
// the line; no row is ever dropped. A Parquet file that cannot be decoded
// fails with [ErrCorrupt] naming the file, and nothing of it is stored:
// its footer is checked before the first byte is uploaded, its pages
// while it uploads, and the upload is aborted instead of committed.
// Where a page carries a CRC (parquet-go, and so [Write], writes one on
// every page; parquet-mr and arrow-cpp can), it is checked: a mismatch
// fails with [ErrPageChecksum] (an ErrCorrupt) naming the file, the column
// and the page (pswap's verify checks any file so). Damage inside a page
// without a CRC that still decompresses and decodes cannot be detected. [Options.Check] CheckFooter
// opts out of decoding existing files (footer and page CRCs only, at about
// the cost of a plain upload; the content checksum is then over the files'
// bytes, "files-sha256").
//
// A column whose logical type is newer than Arrow's reader knows is read
// as its physical type (as DuckDB does). pswap's adopt checks a footer
// alone the same way, without decoding pages, for files that are adopted
// rather than read.
//
// INT96 timestamps (Spark's default, Hive's, Impala's) are read in
// microseconds exactly as Spark reads them (a flat INT96 column's canonical
// type is timestamp[us, tz=UTC]), so the years Spark writes beyond Arrow's
// nanosecond range (1677..2262) are accepted; pswap's verify reads them
// in nanoseconds as before for generations staged then. A Go type's time.Time
// fields are written in the timestamp unit the schema Conform returns asks
// for (a table's microseconds), since a Go value cannot be converted after
// it is written.
//
// parquet-go v0.32 encodes time.Time fields with the `date` tag wrongly
// (nanoseconds in an INT32 column); [Write] refuses them with
// [ErrUnsupported]. Use an int32 of days with the `date` tag instead.
package staging
