// Package textconv converts CSV and JSON Lines text to Arrow records for
// package staging ([CSV], [JSONL]): with a given schema, or one inferred
// from the first rows (inference: convert.go's inferState), nested JSON
// values as lists, structs and maps (jsonnested.go). The records go to a
// [Sink], which staging writes into the generation; no row is ever
// dropped: a row that does not convert fails with [ErrBadInput] naming the
// input and the line.
package textconv
