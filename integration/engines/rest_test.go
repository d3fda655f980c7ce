package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/testing/testenv"
)

// The REST catalog tests commit pswap tables on MinIO with --catalog
// rest+http://... to the REST catalog server of scripts/restcatalog.sh and
// read them by name with Spark (type=rest), PyIceberg's RestCatalog and
// DuckDB (ATTACH ... TYPE iceberg).

var restSeq atomic.Int64

// restCatalog is a table name in the REST catalog: the namespace is the
// test's own (the server is shared), the catalog name unique (Spark and
// DuckDB keep a catalog per name for their session).
type restCatalog struct {
	srv  *testenv.RESTServer
	name string // the name the engines give the catalog
	ns   string
}

func newRESTCatalog(t *testing.T, srv *testenv.RESTServer) restCatalog {
	n := restSeq.Add(1)
	t.Setenv(catalog.EnvToken, srv.Token)
	return restCatalog{srv: srv, name: fmt.Sprintf("rest%d", n), ns: fmt.Sprintf("e%d_%d", os.Getpid(), n)}
}

// url is pswap's --catalog for ns.sales.
func (c restCatalog) url(extra string) string { return c.srv.CatalogURL(c.ns, "sales", extra) }

// byName reads ns.sales by name with engine.
func (c restCatalog) byName(t *testing.T, engine string) ([]string, error) {
	t.Helper()
	var rows []map[string]any
	err := call(t, map[string]any{"engine": engine, "op": "rest_scan", "name": c.ns + ".sales",
		"rest": map[string]any{"name": c.name, "uri": c.srv.URI, "token": c.srv.Token, "warehouse": c.srv.Warehouse}}, &rows)
	return canonRows(t, rows), err
}

func s3Table(t *testing.T) *table {
	t.Helper()
	if !testenv.S3Enabled() {
		t.Skip("the REST catalog tests need MinIO: run scripts/test.sh")
	}
	url := testenv.S3URL(t)
	return &table{t: t, store: "minio", url: url, root: url, dir: t.TempDir()}
}

// TestRESTCatalogReadByName: each commit with --catalog rest+http://... is
// what Spark, PyIceberg and DuckDB read by the table's name right after
// it, rows exact; the catalog reflects the commit's version.
func TestRESTCatalogReadByName(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	c := newRESTCatalog(t, srv)
	tb := s3Table(t)
	data := filepath.Join(repoRoot(), "examples", "data")
	steps := []struct{ part, input string }{
		{"dt=2026-11-27", filepath.Join(data, "sales", "2026-11-27.csv")},
		{"dt=2026-11-28", filepath.Join(data, "sales", "2026-11-28.csv")},
		{"dt=2026-11-28", filepath.Join(data, "sales-corrected")},
	}
	for i, st := range steps {
		start := time.Now()
		var res resultDoc
		out := tb.run("commit", "--partition", st.part, "--json", "--catalog", c.url("&create-namespace=true"), st.input)
		if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Published {
			t.Fatalf("commit %d: %v %s", i, err, out)
		}
		committed := time.Since(start)
		rt := srv.Table(t, c.ns, "sales")
		if rt == nil || (rt.Metadata.Properties["pswap.metadata-location"] != res.MetadataLocation && rt.MetadataLocation != res.MetadataLocation) {
			t.Fatalf("commit %d: the catalog does not reflect %s: %+v", i, res.MetadataLocation, rt)
		}
		rt.CheckLinear(t)
		want := tb.record(fmt.Sprintf("commit %d", i)).rows
		var times []string
		for _, engine := range []string{"pyiceberg", "duckdb", "spark"} {
			es := time.Now()
			got, err := c.byName(t, engine)
			if err != nil {
				t.Fatalf("%s by name after commit %d: %v", engine, i, err)
			}
			sameRows(t, fmt.Sprintf("%s by name after commit %d", engine, i), got, want)
			times = append(times, fmt.Sprintf("%s %s", engine, time.Since(es).Round(time.Millisecond)))
		}
		t.Logf("commit %d (%s): commit %s, then read by name: %s", i, st.part, committed.Round(time.Millisecond), strings.Join(times, ", "))
	}
}

// TestRESTCatalogConcurrentProcesses: 8 pswap processes commit 8
// partitions at once with --catalog rest+http://.... Each is published or
// pending (the publish lease's holder publishes it); every commit is
// visible by name after them (PyIceberg reads every partition's rows),
// and the catalog's history is linear.
func TestRESTCatalogConcurrentProcesses(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	c := newRESTCatalog(t, srv)
	tb := s3Table(t)
	in := tb.write("first.csv", "id,amount\n0,1.5\n")
	tb.run("commit", "--partition", "dt=2026-01-00", "--catalog", c.url("&create-namespace=true"), in)
	const n = 8
	published, elapsed := commitAtOnce(t, tb, n, c.url(""))
	want := tb.record("after the writers").rows
	if len(want) != 1+2*n {
		t.Fatalf("the table holds %d rows, want %d", len(want), 1+2*n)
	}
	got, err := c.byName(t, "pyiceberg")
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "pyiceberg by name after the writers", got, want)
	rt := srv.Table(t, c.ns, "sales")
	rt.CheckLinear(t)
	t.Logf("%d writer processes in %s, %d published, %d snapshots in the catalog's log", n, elapsed.Round(time.Millisecond), published, len(rt.Metadata.SnapshotLog))
}

// TestRESTCatalogDown: with the catalog's server stopped, a commit exits 0
// with published false and the reason; once it is back, pswap publish
// --catalog converges and the engines read the latest rows by name.
func TestRESTCatalogDown(t *testing.T) {
	srv := testenv.NewRESTCatalog(t)
	c := newRESTCatalog(t, srv)
	tb := s3Table(t)
	tb.run("commit", "--partition", "dt=2026-01-01", "--catalog", c.url("&create-namespace=true"), tb.write("a.csv", "id,amount\n1,1.5\n"))
	srv.Down(t)
	var res resultDoc
	out := tb.run("commit", "--partition", "dt=2026-01-02", "--json", "--catalog", c.url(""), tb.write("b.csv", "id,amount\n2,2.5\n"))
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Published || !strings.Contains(res.PublishError, "rest catalog") ||
		!strings.Contains(res.PublishError, "connection refused") {
		t.Fatalf("a commit with the catalog down: %v %s", err, out)
	}
	t.Logf("catalog down: published false: %s", res.PublishError)
	srv.Up(t)
	tb.run("publish", "--catalog", c.url(""))
	want := tb.record("after the catalog came back").rows
	if len(want) != 2 {
		t.Fatalf("the table holds %d rows, want 2", len(want))
	}
	got, err := c.byName(t, "pyiceberg")
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "pyiceberg by name after the catalog came back", got, want)
}

// TestReadmeRESTSnippets runs the README's REST catalog snippets (each a
// block after a "<!-- rest-snippet: NAME -->" line) as a user would, with
// the REST catalog server's URI for http://localhost:8181, a fresh MinIO
// table for s3://bucket/lake/sales and a namespace of the test's own for
// db: the shell one commits a day of the quick start's sales (pswap on
// PATH), then PyIceberg's, DuckDB's and Spark's read it by name and print
// its rows, which must be the CSV's.
func TestReadmeRESTSnippets(t *testing.T) {
	srv := testenv.RESTCatalog(t)
	c := newRESTCatalog(t, srv)
	tb := s3Table(t)
	data := t.TempDir()
	snippets := readmeSnippets(t, "rest-snippet")
	if len(snippets) != 4 {
		t.Fatalf("README has %d REST catalog snippets, want sh, pyiceberg, duckdb and spark", len(snippets))
	}
	for name, code := range snippets {
		code = strings.ReplaceAll(code, "http://localhost:8181", srv.URI)
		code = strings.ReplaceAll(code, "s3://bucket/lake/sales", tb.url)
		code = strings.ReplaceAll(code, "namespace=db&", "namespace="+c.ns+"&")
		snippets[name] = strings.ReplaceAll(code, "lake.db.sales", "lake."+c.ns+".sales")
		snippets[name] = strings.ReplaceAll(snippets[name], `"db.sales"`, `"`+c.ns+`.sales"`)
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
	for _, name := range []string{"pyiceberg", "duckdb", "spark"} {
		t.Run(name, func(t *testing.T) {
			if got := runSnippet(t, folder, snippets[name]); got != want {
				t.Errorf("the README's %s snippet printed %q, want %s (the rows of the committed CSV)", name, got, want)
			}
		})
	}
}
