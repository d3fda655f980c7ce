package testenv

import (
	"database/sql"
	"fmt"
	"path"
	"testing"
)

// LogCatalogUpdates makes a SQL catalog's database (driver "sqlite" or
// "pgx") log every update of iceberg_tables' metadata_location, in order,
// for CatalogHistory: the tests check the catalog's history is linear.
func LogCatalogUpdates(t testing.TB, db *sql.DB, driver string) {
	t.Helper()
	stmts := []string{`CREATE TABLE hist (seq INTEGER PRIMARY KEY AUTOINCREMENT, old TEXT, new TEXT)`,
		`CREATE TRIGGER log AFTER UPDATE ON iceberg_tables BEGIN INSERT INTO hist (old, new) VALUES (old.metadata_location, new.metadata_location); END`}
	if driver == "pgx" {
		stmts = []string{`CREATE TABLE hist (seq SERIAL PRIMARY KEY, old TEXT, new TEXT)`,
			`CREATE FUNCTION log_update() RETURNS trigger AS $$ BEGIN
INSERT INTO hist (old, new) VALUES (OLD.metadata_location, NEW.metadata_location); RETURN NEW; END $$ LANGUAGE plpgsql`,
			`CREATE TRIGGER log AFTER UPDATE ON iceberg_tables FOR EACH ROW EXECUTE FUNCTION log_update()`}
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// CheckCatalogHistory checks the updates LogCatalogUpdates logged: each
// moved the name from where the previous one left it (the first from
// "from", unless empty) to a later version (vN.metadata.json), and the
// last left it at "to". It returns how many there were.
func CheckCatalogHistory(t testing.TB, db *sql.DB, from, to string) int {
	t.Helper()
	rows, err := db.Query(`SELECT old, new FROM hist ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cur, n := from, 0
	for rows.Next() {
		var old, nw string
		if err := rows.Scan(&old, &nw); err != nil {
			t.Fatal(err)
		}
		if (cur != "" && old != cur) || metadataVersion(t, nw) <= metadataVersion(t, old) {
			t.Errorf("catalog update %d: %s -> %s, after %s", n, old, nw, cur)
		}
		cur = nw
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 || cur != to {
		t.Errorf("the catalog's history (%d updates) ends at %s, want %s", n, cur, to)
	}
	return n
}

// metadataVersion is N of a .../vN.metadata.json location.
func metadataVersion(t testing.TB, loc string) int {
	t.Helper()
	var v int
	if _, err := fmt.Sscanf(path.Base(loc), "v%d.metadata.json", &v); err != nil {
		t.Fatalf("%s: %v", loc, err)
	}
	return v
}
