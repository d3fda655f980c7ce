package catalog_test

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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

func sqliteBackend(t *testing.T) backend {
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

var dbSeq atomic.Int64

func postgresBackend(t *testing.T) backend {
	addr := postgresServer(t)
	admin, err := sql.Open("pgx", "postgres://"+addr+"/postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("cat_%d_%d", os.Getpid(), dbSeq.Add(1))
	mustExec(t, admin, "CREATE DATABASE "+name)
	db, err := sql.Open("pgx", "postgres://"+addr+"/"+name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return backend{
		// The password comes from $PGPASSWORD, as a user's would.
		url:  func(extra string) string { return "sql+postgres://" + addr + "/" + name + names + extra },
		down: "sql+postgres://127.0.0.1:1/" + name + names + "&create-namespace=true",
		db:   db,
		logUpdates: func(t *testing.T) {
			mustExec(t, db, `CREATE TABLE hist (seq SERIAL PRIMARY KEY, old TEXT, new TEXT)`,
				`CREATE FUNCTION log_update() RETURNS trigger AS $$ BEGIN
INSERT INTO hist (old, new) VALUES (OLD.metadata_location, NEW.metadata_location); RETURN NEW; END $$ LANGUAGE plpgsql`,
				`CREATE TRIGGER log AFTER UPDATE ON iceberg_tables FOR EACH ROW EXECUTE FUNCTION log_update()`)
		},
	}
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

var (
	pgOnce sync.Once
	pgAddr string
	pgErr  error
	pgEnv  string // the env file of the server this package started
)

// postgresServer returns host:port of the PostgreSQL server of
// scripts/test.sh ($PSWAP_TEST_POSTGRES, with PGUSER and PGPASSWORD), or
// starts one with scripts/postgres.sh for this package (TestMain stops
// it). A server that cannot start fails the test.
func postgresServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("PostgreSQL: not in -short")
	}
	pgOnce.Do(func() {
		if a := os.Getenv("PSWAP_TEST_POSTGRES"); a != "" {
			pgAddr = a
			return
		}
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("bash", filepath.Join(filepath.Dir(filepath.Dir(file)), "scripts", "postgres.sh"), "start")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			pgErr = fmt.Errorf("scripts/postgres.sh start: %w", err)
			return
		}
		pgEnv = strings.TrimSpace(string(out))
		f, err := os.Open(pgEnv)
		if err != nil {
			pgErr = err
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), "=")
			switch k {
			case "PGUSER", "PGPASSWORD":
				os.Setenv(k, v)
			case "PSWAP_TEST_POSTGRES":
				pgAddr = v
			}
		}
	})
	if pgErr != nil {
		t.Fatalf("PostgreSQL cannot start: %v", pgErr)
	}
	return pgAddr
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pgEnv != "" {
		exec.Command("bash", filepath.Join("..", "scripts", "postgres.sh"), "stop", pgEnv).Run()
	}
	os.Exit(code)
}
