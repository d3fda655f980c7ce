// Package checksum is the one place that defines pswap's content checksums,
// the "<algo>:<hex>" of manifest.Content.ContentChecksum:
//
//   - colsum128 (ColSum): what staging records; per row a fold of
//     per-column value hashes, computed a column at a time (colsum.go);
//   - rowsum128 (RowSum): what generations staged before colsum128
//     recorded; XXH3-128 of each row's canonical encoding, still computed
//     where such a generation is compared or verified (rowsum.go);
//   - files-sha256 (Files): a generation added with the footer-only check,
//     whose rows were not read, over the files' bytes (files.go);
//   - adopted-sha256 (Adopted): a generation an external engine wrote and
//     pswap adopted, over the files' bytes too (files.go).
//
// The definitions, with the reasons for them, are in the staging package's
// documentation ("Content checksum"). Staging's scanners (its fast Parquet
// scan, its Go struct encoder) compute the same value hashes through the
// primitives here (FixedHash, ValueHash, the Append* encoders, and their
// bulk forms over a page or a batch of rows, bulk.go: FixedHashes64,
// DoubleHashes64, FixedHashes32, FoldValues, Sum.AddFolds, with AVX-512
// kernels on amd64 that compute the same function); the Arrow hashers
// here (ColHasher, ArrowEncoder) are the reference they are tested
// against.
package checksum
