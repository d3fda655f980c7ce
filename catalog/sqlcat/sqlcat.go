package sqlcat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pswap/pswap/catalog"
)

// Config names a table in a SQL catalog. Driver and DSN are database/sql's
// (Driver "sqlite" or "pgx"); the rest is the catalog's.
type Config struct {
	Driver string
	DSN    string
	// Display is how errors name the database: never a secret.
	Display string
	// Catalog is the catalog_name column: the name Spark, PyIceberg and
	// iceberg-go give the catalog.
	Catalog   string
	Namespace string // dotted for a nested one: "a.b"
	Table     string
	// CreateNamespace: the first publish creates a missing namespace
	// (default: refuse it with catalog.ErrNoNamespace).
	CreateNamespace bool
}

// Catalog is a table of a SQL catalog, safe for concurrent use.
type Catalog struct {
	db  *sql.DB
	cfg Config
}

var _ catalog.Conn = (*Catalog)(nil)

// Open opens the catalog's database (database/sql connects lazily: the
// first statement reaches the server).
func Open(cfg Config) (*Catalog, error) {
	if cfg.Catalog == "" || cfg.Namespace == "" || cfg.Table == "" {
		return nil, fmt.Errorf("sql catalog %s: the catalog, namespace and table names must all be given", cfg.Display)
	}
	db, err := sql.Open(cfg.Driver, cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("sql catalog %s: %w", cfg.Display, err)
	}
	return &Catalog{db: db, cfg: cfg}, nil
}

// Close closes the database.
func (c *Catalog) Close() error { return c.db.Close() }

// String names the database, the catalog and the table.
func (c *Catalog) String() string {
	return fmt.Sprintf("sql catalog %s (catalog %q), table %s.%s", c.cfg.Display, c.cfg.Catalog, c.cfg.Namespace, c.cfg.Table)
}

// The JDBC layout, version 1 (with iceberg_type), as PyIceberg creates it.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS iceberg_tables (
	catalog_name VARCHAR(255) NOT NULL,
	table_namespace VARCHAR(255) NOT NULL,
	table_name VARCHAR(255) NOT NULL,
	metadata_location VARCHAR(1000),
	previous_metadata_location VARCHAR(1000),
	iceberg_type VARCHAR(5),
	PRIMARY KEY (catalog_name, table_namespace, table_name))`,
	`CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
	catalog_name VARCHAR(255) NOT NULL,
	namespace VARCHAR(255) NOT NULL,
	property_key VARCHAR(255) NOT NULL,
	property_value VARCHAR(1000),
	PRIMARY KEY (catalog_name, namespace, property_key))`,
}

const selectTable = `SELECT metadata_location FROM iceberg_tables
WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3`

// Current returns the metadata location of the table's row. A database
// without the catalog's tables has no table (they are created by Register).
func (c *Catalog) Current(ctx context.Context) (string, error) {
	loc, err := c.current(ctx, c.db)
	if err != nil && !errors.Is(err, catalog.ErrNotRegistered) && c.noSchema(ctx) {
		return "", catalog.ErrNotRegistered
	}
	return loc, err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (c *Catalog) current(ctx context.Context, q querier) (string, error) {
	var loc sql.NullString
	err := q.QueryRowContext(ctx, selectTable, c.cfg.Catalog, c.cfg.Namespace, c.cfg.Table).Scan(&loc)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", catalog.ErrNotRegistered
	case err != nil:
		return "", fmt.Errorf("read the table's row: %w", err)
	}
	return loc.String, nil
}

// noSchema reports whether the database is reachable but has no
// iceberg_tables table.
func (c *Catalog) noSchema(ctx context.Context) bool {
	if err := c.db.PingContext(ctx); err != nil {
		return false
	}
	rows, err := c.db.QueryContext(ctx, `SELECT 1 FROM iceberg_tables WHERE 1 = 0`)
	if err == nil {
		rows.Close()
	}
	return err != nil
}

// Register creates the catalog's tables if missing, checks (or creates)
// the namespace and inserts the table's row, in one transaction.
func (c *Catalog) Register(ctx context.Context, loc string) error {
	for _, s := range schema {
		// Concurrent first publishes may race to create them: what
		// counts is that they exist.
		if _, err := c.db.ExecContext(ctx, s); err != nil && c.noSchema(ctx) {
			return fmt.Errorf("create the catalog's tables: %w", err)
		}
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := c.namespace(ctx, tx); err != nil {
		return err
	}
	cols, err := c.tableColumns(ctx, tx)
	if err != nil {
		return err
	}
	insert := `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location)
VALUES ($1, $2, $3, $4, NULL)`
	if slices.Contains(cols, "iceberg_type") {
		insert = `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
VALUES ($1, $2, $3, $4, NULL, 'TABLE')`
	}
	if _, err := tx.ExecContext(ctx, insert, c.cfg.Catalog, c.cfg.Namespace, c.cfg.Table, loc); err != nil {
		tx.Rollback()
		// Most likely the primary key: another writer registered it.
		if cur, cerr := c.current(ctx, c.db); cerr == nil {
			if cur == loc {
				return nil
			}
			return fmt.Errorf("%w: registered meanwhile, naming %s", catalog.ErrCatalogConflict, cur)
		}
		return fmt.Errorf("register the table: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("register the table: %w", err)
	}
	return nil
}

// namespace checks that the namespace exists (a property row, or a table
// in it, as the JDBC catalog decides), creating it when asked.
func (c *Catalog) namespace(ctx context.Context, tx *sql.Tx) error {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT
	(SELECT COUNT(*) FROM iceberg_namespace_properties WHERE catalog_name = $1 AND namespace = $2) +
	(SELECT COUNT(*) FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2)`,
		c.cfg.Catalog, c.cfg.Namespace).Scan(&n)
	if err != nil {
		return fmt.Errorf("look the namespace up: %w", err)
	}
	if n > 0 {
		return nil
	}
	if !c.cfg.CreateNamespace {
		return fmt.Errorf("%w: %q in catalog %q (create it, or add create-namespace=true to the catalog URL)",
			catalog.ErrNoNamespace, c.cfg.Namespace, c.cfg.Catalog)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
VALUES ($1, $2, 'exists', 'true')`, c.cfg.Catalog, c.cfg.Namespace)
	if err != nil {
		return fmt.Errorf("create the namespace %q: %w", c.cfg.Namespace, err)
	}
	return nil
}

// tableColumns returns iceberg_tables' column names, lower case: a table
// of the JDBC layout's version 0 has no iceberg_type.
func (c *Catalog) tableColumns(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT * FROM iceberg_tables WHERE 1 = 0`)
	if err != nil {
		return nil, fmt.Errorf("read iceberg_tables' columns: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	for i := range cols {
		cols[i] = strings.ToLower(cols[i])
	}
	return cols, err
}

// Swap moves the table's row from prev to loc, if it still names prev.
func (c *Catalog) Swap(ctx context.Context, prev, loc string) error {
	res, err := c.db.ExecContext(ctx, `UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2
WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND metadata_location = $2`,
		loc, prev, c.cfg.Catalog, c.cfg.Namespace, c.cfg.Table)
	if err != nil {
		return fmt.Errorf("update the table's row: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update the table's row: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: it no longer names %s", catalog.ErrCatalogConflict, prev)
	}
	return nil
}
