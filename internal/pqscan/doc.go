// Package pqscan reads Parquet files the way staging accepts them: it
// opens a file with Arrow's reader (tolerating logical types newer than
// Arrow knows), checks its footer ([ReadFooter], [CheckFooter]) and page
// CRCs ([VerifyPageChecksums]), derives the canonical schema ([Schema]),
// and decodes and hashes every row into the content checksum ([Scan],
// [ScanPages], [RowScan]).
//
// The scan decodes the pages of a flat schema of primitive columns itself
// (the fast scan, scanfast.go), one Parquet encoding per file the way
// arrow-go lays out its encodings: PLAIN (scanfast_plain.go), dictionary
// indices (scanfast_dict.go), RLE booleans and levels (scanfast_rle.go),
// the DELTA_* encodings (scanfast_delta.go) and BYTE_STREAM_SPLIT
// (scanfast_bss.go). Anything else, and any row group the fast scan gives
// up, is decoded by Arrow's record reader (INT96 columns beside it in
// microseconds, int96.go); both compute the same checksum.
//
// [RegisterCodecs] adds to arrow-go's process-wide codec registry what it
// lacks for other writers' files (codecs.go). The definitions of the
// checksums are in package staging's documentation; their primitives are
// in internal/checksum. This package is pswap's own: users stage files
// through package staging.
package pqscan
