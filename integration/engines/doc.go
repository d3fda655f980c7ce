// Package engines is the judgement of the engines pswap's users run: Spark
// (Java Iceberg 1.12 through PySpark), PyIceberg and DuckDB's iceberg
// extension read tables that pswap wrote and published, on file:// and on
// MinIO, and every answer is compared row for row with DuckDB's read of
// the files `pswap files` lists (the pointers, pswap's truth).
//
// For every snapshot a test records, each engine reads the current table
// and travels back to every earlier snapshot; a filter on a partition
// column must plan only that partition's files. The engines run in one
// Python process per test run (reader.py, so the JVM starts once), from
// the environment scripts/engines.sh installs (pinned in
// requirements.txt); $PSWAP_ENGINES names it, or the tests run the script.
// An engine that cannot start fails the tests: it never skips them.
//
// The package holds tests only.
package engines
