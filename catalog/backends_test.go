package catalog_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
)

// backend is one database a catalog test runs on: a fresh SQLite file, or
// a fresh database on the PostgreSQL server of scripts/postgres.sh.
type backend struct {
	url    func(extra string) string // the catalog URL of table lake.db.sales, plus extra parameters
	down   string                    // a catalog URL of the same kind that cannot be reached
	db     *sql.DB
	driver string // database/sql's
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
		url:    func(extra string) string { return "sql+sqlite://" + file + names + extra },
		down:   "sql+sqlite://" + filepath.Join(dir, "no-such-folder", "cat.db") + names + "&create-namespace=true",
		db:     db,
		driver: "sqlite",
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
		url:    func(extra string) string { return "sql+postgres://" + addr + names + extra },
		down:   "sql+postgres://127.0.0.1:1/" + strings.SplitN(addr, "/", 2)[1] + names + "&create-namespace=true",
		db:     db,
		driver: "pgx",
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopPostgres()
	testenv.StopRESTCatalog()
	os.Exit(code)
}
