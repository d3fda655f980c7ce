package catalog_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testenv"
)

// backend is one database a catalog test runs on: a fresh SQLite file, or
// a fresh database on the PostgreSQL server of scripts/postgres.sh.
type backend struct {
	url  func(extra string) string // the catalog URL of table lake.db.sales, plus extra parameters
	down string                    // a catalog URL of the same kind that cannot be reached
	db   *sql.DB
	// logUpdates makes the database log every update of iceberg_tables'
	// metadata_location into hist(seq, old, new).
	logUpdates func(t *testing.T)
}

const names = "?catalog=lake&namespace=db&table=sales"

// backends runs f on SQLite and on PostgreSQL.
func backends(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) { f(t, sqliteBackend(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, postgresBackend(t)) })
}

func sqliteBackend(t testing.TB) backend {
	dir := t.TempDir()
	file := filepath.Join(dir, "cat.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return backend{
		url:  func(extra string) string { return "sql+sqlite://" + file + names + extra },
		down: "sql+sqlite://" + filepath.Join(dir, "no-such-folder", "cat.db") + names + "&create-namespace=true",
		db:   db,
		logUpdates: func(t *testing.T) {
			mustExec(t, db, `CREATE TABLE hist (seq INTEGER PRIMARY KEY AUTOINCREMENT, old TEXT, new TEXT)`,
				`CREATE TRIGGER log AFTER UPDATE ON iceberg_tables BEGIN INSERT INTO hist (old, new) VALUES (old.metadata_location, new.metadata_location); END`)
		},
	}
}

func postgresBackend(t testing.TB) backend {
	addr := testenv.PostgresDB(t)
	db, err := sql.Open("pgx", "postgres://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return backend{
		// The password comes from $PGPASSWORD, as a user's would.
		url:  func(extra string) string { return "sql+postgres://" + addr + names + extra },
		down: "sql+postgres://127.0.0.1:1/" + strings.SplitN(addr, "/", 2)[1] + names + "&create-namespace=true",
		db:   db,
		logUpdates: func(t *testing.T) {
			mustExec(t, db, `CREATE TABLE hist (seq SERIAL PRIMARY KEY, old TEXT, new TEXT)`,
				`CREATE FUNCTION log_update() RETURNS trigger AS $$ BEGIN
INSERT INTO hist (old, new) VALUES (OLD.metadata_location, NEW.metadata_location); RETURN NEW; END $$ LANGUAGE plpgsql`,
				`CREATE TRIGGER log AFTER UPDATE ON iceberg_tables FOR EACH ROW EXECUTE FUNCTION log_update()`)
		},
	}
}

func mustExec(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopPostgres()
	os.Exit(code)
}
