// Command pswap writes one partition of a table to an object store (S3,
// S3-compatible servers, or a local directory) atomically and idempotently,
// for shell scripts and orchestrator tasks.
//
// Usage:
//
//	pswap commit   --table URL (--partition KEY | --interval START/END) [--run-id ID] PATH... | -
//	pswap stage    --table URL (--partition KEY | --interval START/END) PATH... | -
//	pswap show     --table URL (--partition KEY | --interval START/END)
//	pswap files    --table URL [--partition KEY | --interval START/END] [--format uris|json|duckdb]
//	pswap ls       --table URL [--prefix KEYPREFIX]
//	pswap history  --table URL (--partition KEY | --interval START/END) [--limit N]
//	pswap status   --table URL --from START --to END [--grain hour|day|month] [--require-complete]
//	pswap rollback --table URL (--partition KEY | --interval START/END) --to GEN
//	pswap verify   --table URL [--partition KEY | --interval START/END]
//	pswap version | completion bash|zsh|fish
//
// Every command takes --json and then prints exactly one JSON document on
// stdout; errors always go to stderr as text. The exit status is 0 on
// success (including an idempotent no-op), 1 on failure, 2 for usage errors
// and bad input, 3 for a conflict with another run, and 4 when verify finds
// a mismatch. See `pswap --help` and the README for the details and the
// JSON field reference.
//
// Commands live in cmd_*.go files; each registers its constructor from
// init() with registerCommand, so adding one touches no other file.
package main
