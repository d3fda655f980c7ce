package engines

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/pswap/pswap/internal/testing/testenv"
)

// sqlCatalog is a SQL catalog the tests commit to and read by name.
type sqlCatalog struct {
	kind string // "sqlite" or "postgres"
	name string // catalog_name: the name Spark and PyIceberg give it
	url  string // pswap's --catalog (without create-namespace)
	// where tells reader.py which database: {"sqlite": path} or
	// {"postgres": "host:port/db"}.
	where     map[string]any
	warehouse string
	db        *sql.DB
	driver    string // database/sql's
}

var catalogSeq struct {
	sync.Mutex
	n int
}

// sqlCatalogs runs f on a fresh SQLite catalog and a fresh PostgreSQL one,
// each named uniquely (Spark keeps a catalog per name for its session).
func sqlCatalogs(t *testing.T, f func(t *testing.T, c sqlCatalog)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			catalogSeq.Lock()
			catalogSeq.n++
			name := fmt.Sprintf("lake%d", catalogSeq.n)
			catalogSeq.Unlock()
			c := sqlCatalog{kind: kind, name: name, warehouse: t.TempDir()}
			q := "?catalog=" + name + "&namespace=db&table=sales"
			driver, dsn := "", ""
			if kind == "sqlite" {
				file := filepath.Join(t.TempDir(), "cat.db")
				c.url, c.where = "sql+sqlite://"+file+q, map[string]any{"sqlite": file}
				driver, dsn = "sqlite", file
			} else {
				addr := testenv.PostgresDB(t)
				// The credentials go with the request: the reader process
				// may have started before this server (its environment
				// lacks them when the suite runs without scripts/test.sh).
				c.url = "sql+postgres://" + addr + q
				c.where = map[string]any{"postgres": addr, "user": os.Getenv("PGUSER"), "password": os.Getenv("PGPASSWORD")}
				driver, dsn = "pgx", "postgres://"+addr
			}
			db, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			c.db, c.driver = db, driver
			f(t, c)
		})
	}
}

// byName reads the table by its name in the catalog with engine.
func (c sqlCatalog) byName(t *testing.T, engine string) ([]string, error) {
	t.Helper()
	where := map[string]any{"name": c.name, "warehouse": c.warehouse}
	for k, v := range c.where {
		where[k] = v
	}
	var rows []map[string]any
	err := call(t, map[string]any{"engine": engine, "op": "catalog_scan", "catalog": where, "name": "db.sales"}, &rows)
	return canonRows(t, rows), err
}

// current is the metadata location the catalog names for db.sales.
func (c sqlCatalog) current(t *testing.T) string {
	t.Helper()
	var loc string
	q := `SELECT metadata_location FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = 'db' AND table_name = 'sales'`
	if err := c.db.QueryRow(q, c.name).Scan(&loc); err != nil {
		t.Fatalf("the catalog's row: %v", err)
	}
	return loc
}

// TestCatalogReadByName: each commit with --catalog is what Spark (JDBC
// catalog) and PyIceberg (SqlCatalog) read by the table's name right
// after it, rows exact, on SQLite and PostgreSQL.
func TestCatalogReadByName(t *testing.T) {
	sqlCatalogs(t, func(t *testing.T, c sqlCatalog) {
		dir := t.TempDir()
		root := filepath.Join(dir, "lake", "sales")
		tb := &table{t: t, store: "file", url: root, root: root, dir: dir}
		data := filepath.Join(repoRoot(), "examples", "data")
		steps := []struct{ part, input string }{
			{"dt=2026-11-27", filepath.Join(data, "sales", "2026-11-27.csv")},
			{"dt=2026-11-28", filepath.Join(data, "sales", "2026-11-28.csv")},
			{"dt=2026-11-28", filepath.Join(data, "sales-corrected")},
		}
		for i, st := range steps {
			start := time.Now()
			var res resultDoc
			out := tb.run("commit", "--partition", st.part, "--json", "--catalog", c.url+"&create-namespace=true", st.input)
			if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Published {
				t.Fatalf("commit %d: %v %s", i, err, out)
			}
			if got := c.current(t); got != res.MetadataLocation {
				t.Fatalf("commit %d: the catalog names %s, the commit published %s", i, got, res.MetadataLocation)
			}
			want := tb.record(fmt.Sprintf("commit %d", i)).rows
			for _, engine := range []string{"spark", "pyiceberg"} {
				got, err := c.byName(t, engine)
				if err != nil {
					t.Fatalf("%s by name after commit %d: %v", engine, i, err)
				}
				sameRows(t, fmt.Sprintf("%s by name after commit %d", engine, i), got, want)
			}
			t.Logf("commit %d (%s): commit to read by name in Spark and PyIceberg %s", i, st.part, time.Since(start).Round(time.Millisecond))
		}
	})
}

// resultDoc is what the tests read of commit --json.
type resultDoc struct {
	Published        bool   `json:"published"`
	MetadataLocation string `json:"metadata_location"`
	PublishError     string `json:"publish_error"`
	Views            []struct {
		View  string `json:"view"`
		State string `json:"state"`
	} `json:"views"`
}

// pending: another writer holding the table's publish lease publishes this
// commit (its Iceberg view entry says "pending").
func (d resultDoc) pending() bool {
	for _, v := range d.Views {
		if v.View == "iceberg" && v.State == "pending" {
			return true
		}
	}
	return false
}

// TestCatalogConcurrentProcesses: 16 pswap processes commit 16 partitions
// at once with --catalog. Each is published or pending (the publish
// lease's holder publishes it); every commit is visible by name after them
// (PyIceberg reads every partition's rows), and the catalog's history, as
// a trigger logs it, only moves forward.
func TestCatalogConcurrentProcesses(t *testing.T) {
	sqlCatalogs(t, func(t *testing.T, c sqlCatalog) {
		dir := t.TempDir()
		root := filepath.Join(dir, "lake", "sales")
		tb := &table{t: t, store: "file", url: root, root: root, dir: dir}
		in := tb.write("first.csv", "id,amount\n0,1.5\n")
		tb.run("commit", "--partition", "dt=2026-01-00", "--catalog", c.url+"&create-namespace=true", in)
		testenv.LogCatalogUpdates(t, c.db, c.driver)
		const n = 16
		published, elapsed := commitAtOnce(t, tb, n, c.url)
		want := tb.record("after the writers").rows
		if len(want) != 1+2*n {
			t.Fatalf("the table holds %d rows, want %d", len(want), 1+2*n)
		}
		got, err := c.byName(t, "pyiceberg")
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "pyiceberg by name after the writers", got, want)
		updates := testenv.CheckCatalogHistory(t, c.db, "", c.current(t))
		t.Logf("%s: %d writers in %s, %d published, %d catalog updates", c.kind, n, elapsed.Round(time.Millisecond), published, updates)
	})
}

// commitAtOnce runs n pswap commit --catalog catalogURL processes at
// once, each to its own partition dt=2026-01-01.. of two rows, and fails
// the test for any that is neither published nor pending (left to the
// publish lease's holder, whose versions the caller's reads then check),
// or if none was published.
func commitAtOnce(t *testing.T, tb *table, n int, catalogURL string) (published int, elapsed time.Duration) {
	t.Helper()
	docs := make([]resultDoc, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		in := tb.write(fmt.Sprintf("p%d.csv", i), fmt.Sprintf("id,amount\n%d,%d.25\n%d,1\n", i, i, 100+i))
		wg.Go(func() {
			cmd := exec.Command(pswapBin(t), "commit", "--table", tb.url, "--partition", fmt.Sprintf("dt=2026-01-%02d", i+1), "--json", "--catalog", catalogURL, in)
			cmd.Env = append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				errs[i] = fmt.Errorf("%v: %s", err, stderr.String())
				return
			}
			errs[i] = json.Unmarshal(out, &docs[i])
		})
	}
	wg.Wait()
	elapsed = time.Since(start)
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		switch {
		case docs[i].Published:
			published++
		case docs[i].pending():
		default:
			t.Errorf("writer %d: neither published nor pending: %s", i, docs[i].PublishError)
		}
	}
	if published == 0 {
		t.Errorf("none of %d writers published: one of them holds the publish lease", n)
	}
	return published, elapsed
}

// TestReadmeCatalogSnippets runs the README's catalog snippets (each a
// block after a "<!-- catalog-snippet: NAME -->" line) as a user would,
// with /data a scratch folder: the shell one commits a day of the quick
// start's sales with $PSWAP_CATALOG (pswap on PATH), then PyIceberg's and
// Spark's read it by name and print its rows, which must be the CSV's.
func TestReadmeCatalogSnippets(t *testing.T) {
	data := t.TempDir()
	snippets := readmeSnippets(t, "catalog-snippet")
	for name, code := range snippets {
		snippets[name] = strings.ReplaceAll(code, "/data/", data+"/")
	}
	if len(snippets) != 3 {
		t.Fatalf("README has %d catalog snippets, want sh, pyiceberg and spark", len(snippets))
	}
	csv, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "data", "sales", "2026-11-28.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "sales.csv"), csv, 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(strings.Count(strings.TrimSpace(string(csv)), "\n")) // rows after the header
	sh := exec.Command("bash", "-euo", "pipefail", "-c", snippets["sh"])
	sh.Dir = data
	sh.Env = append(os.Environ(), "PATH="+filepath.Dir(pswapBin(t))+":"+os.Getenv("PATH"), "AWS_EC2_METADATA_DISABLED=true")
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the README's shell snippet: %v\n%s", err, out)
	}
	folder := snippetFolder(t)
	for _, name := range []string{"pyiceberg", "spark"} {
		t.Run(name, func(t *testing.T) {
			if got := runSnippet(t, folder, snippets[name]); got != want {
				t.Errorf("the README's %s snippet printed %q, want %s (the rows of the committed CSV)", name, got, want)
			}
		})
	}
}
