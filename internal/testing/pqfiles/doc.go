// Package pqfiles makes Parquet files for the tests of package staging and
// internal/pqscan, and computes the content checksum of a file by its
// definition, the reference their scans are tested against.
package pqfiles
