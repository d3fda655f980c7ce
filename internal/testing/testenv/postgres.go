package testenv

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

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/pswap/pswap/internal/testing/srcdir"
)

// EnvPostgres is host:port of the PostgreSQL server scripts/test.sh
// starts (scripts/postgres.sh), whose PGUSER and PGPASSWORD it exports too.
const EnvPostgres = "PSWAP_TEST_POSTGRES"

var (
	pgOnce sync.Once
	pgAddr string
	pgErr  error
	pgEnv  string // the env file of the server this process started
	pgSeq  atomic.Int64
)

// Postgres returns host:port of a PostgreSQL server, with PGUSER and
// PGPASSWORD set in the environment: $PSWAP_TEST_POSTGRES's, or one this
// process starts with scripts/postgres.sh (StopPostgres stops it; call it
// from TestMain). A server that cannot start fails the test; -short skips.
func Postgres(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("PostgreSQL: not in -short")
	}
	pgOnce.Do(startPostgres)
	if pgErr != nil {
		t.Fatalf("PostgreSQL cannot start: %v", pgErr)
	}
	return pgAddr
}

// PostgresDB creates a fresh database on Postgres's server and returns
// "host:port/name".
func PostgresDB(t testing.TB) string {
	t.Helper()
	addr := Postgres(t)
	admin, err := sql.Open("pgx", "postgres://"+addr+"/postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), pgSeq.Add(1))
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return addr + "/" + name
}

func postgresScript() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(srcdir.Of(file), "..", "..", "..", "scripts", "postgres.sh")
}

func startPostgres() {
	if a := os.Getenv(EnvPostgres); a != "" {
		pgAddr = a
		return
	}
	cmd := exec.Command("bash", postgresScript(), "start")
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
		case EnvPostgres:
			pgAddr = v
		}
	}
	if pgAddr == "" {
		pgErr = fmt.Errorf("%s names no server", pgEnv)
	}
}

// StopPostgres stops the server Postgres started, if it started one.
func StopPostgres() {
	if pgEnv != "" {
		exec.Command("bash", postgresScript(), "stop", pgEnv).Run()
		pgEnv = ""
	}
}
