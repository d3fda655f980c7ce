package sqlcat

import (
	// The database/sql drivers of the two databases: SQLite without cgo,
	// PostgreSQL through pgx.
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)
