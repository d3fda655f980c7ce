// Package merge holds the machinery of a merge (pswap merge,
// pswap.Table.Merge) that does not touch a store: the parsers of its
// options (the key list, the delete marker), the hash of a row's key
// columns, the per-partition key sets of the input, the routing of rows to
// partitions by the table's partition columns or a timestamp column, and
// the filter of record batches.
//
// A key set holds a 128-bit hash (xxh3) of each input row's key columns,
// not the rows: merging into a partition costs the input's key set (about
// 40 bytes a key) plus one row group of the current generation at a time.
// Key values are hashed in a canonical form that does not depend on the
// column's physical type (every integer as int64, float32 as float64,
// string and binary as bytes, timestamps in microseconds), so that an
// input's int32 key matches the table's long key.
package merge
