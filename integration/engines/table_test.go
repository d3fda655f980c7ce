package engines

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/partition"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

// pswapBin builds the CLI once per test run (TestMain's prewarm starts
// the build).
func pswapBin(t testing.TB) string {
	t.Helper()
	if err := buildCLI(); err != nil {
		t.Fatal(err)
	}
	return binPath
}

// buildCLI builds the CLI into binPath, once; later calls wait for the
// first and return its error. scripts/test.sh builds it once for every
// package of the run and names it in $PSWAP_TEST_CLI.
func buildCLI() error {
	buildOnce.Do(func() {
		if p := os.Getenv("PSWAP_TEST_CLI"); p != "" {
			binPath = p
			return
		}
		binDir, buildErr = os.MkdirTemp("", "pswap-engines-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "pswap")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/pswap")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/pswap: %v\n%s", err, out)
		}
	})
	return buildErr
}

// engineNames are the engines every table is read with.
var engineNames = []string{"duckdb", "pyiceberg", "spark"}

// table is one pswap table under test, with what the engines must read at
// each snapshot it published.
type table struct {
	t     *testing.T
	store string // "file" or "minio"
	url   string // --table
	root  string // the root engines read: a local path or s3://bucket/prefix
	dir   string // a scratch folder for inputs
	snaps []snapState
}

// snapState is the table as a snapshot holds it: what DuckDB reads from
// the files `pswap files` listed right after the snapshot was published.
type snapState struct {
	step       string
	snapshotID int64
	metadata   string
	files      []fileEntry
	rows       []string // canonical JSON, sorted
	columns    []string // the table's columns (the partition columns too)
}

// fileEntry is one line of `pswap files --format json`.
type fileEntry struct {
	Partition string `json:"partition"`
	URI       string `json:"uri"`
	Rows      int64  `json:"rows"`
}

// forEachStore runs f on a file:// table and, with MinIO, on an s3:// one.
func forEachStore(t *testing.T, f func(t *testing.T, tb *table)) {
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		root := filepath.Join(dir, "lake", "sales")
		f(t, &table{t: t, store: "file", url: root, root: root, dir: dir})
	})
	t.Run("minio", func(t *testing.T) {
		if !testenv.S3Enabled() {
			t.Skip("S3 tests need MinIO: run scripts/test.sh")
		}
		url := testenv.S3URL(t)
		f(t, &table{t: t, store: "minio", url: url, root: url, dir: t.TempDir()})
	})
}

// run runs the CLI on the table and returns its stdout; any failure fails
// the test.
func (tb *table) run(args ...string) string {
	tb.t.Helper()
	out, err := tb.try(args...)
	if err != nil {
		tb.t.Fatalf("pswap %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// try runs the CLI and returns its stdout, or an error with its stderr.
func (tb *table) try(args ...string) (string, error) {
	tb.t.Helper()
	cmd := exec.Command(pswapBin(tb.t), append(args, "--table", tb.url)...)
	cmd.Env = append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, stderr.String())
	}
	return string(out), nil
}

// write writes a scratch input file and returns its path.
func (tb *table) write(name, body string) string {
	tb.t.Helper()
	p := filepath.Join(tb.dir, "in", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		tb.t.Fatal(err)
	}
	return p
}

// duckWrite has DuckDB write Parquet: COPY (query) TO path (options).
func (tb *table) duckWrite(query, path, options string) {
	tb.t.Helper()
	sql := fmt.Sprintf("COPY (%s) TO '%s' (%s)", query, path, options)
	if err := call(tb.t, map[string]any{"engine": "duckdb", "op": "sql", "sql": sql}, nil); err != nil {
		tb.t.Fatalf("DuckDB: %s: %v", sql, err)
	}
}

// record checks that the step published (pswap publish has nothing to do)
// and remembers what the current snapshot holds, read by DuckDB from the files pswap lists.
func (tb *table) record(step string) snapState {
	tb.t.Helper()
	var pub struct {
		Metadata   string `json:"metadata_location"`
		SnapshotID int64  `json:"snapshot_id"`
		Changed    bool   `json:"changed"`
	}
	if err := json.Unmarshal([]byte(tb.run("publish", "--json")), &pub); err != nil {
		tb.t.Fatal(err)
	}
	if pub.Changed {
		// Every command that changes a partition publishes (commit,
		// --staged, --partitioned, rollback): nothing is left to do.
		tb.t.Errorf("%s: left the Iceberg metadata behind: pswap publish had to publish %s", step, pub.Metadata)
	}
	var files struct {
		Files []fileEntry `json:"files"`
	}
	if err := json.Unmarshal([]byte(tb.run("files", "--format", "json")), &files); err != nil {
		tb.t.Fatal(err)
	}
	s := snapState{step: step, snapshotID: pub.SnapshotID, metadata: pub.Metadata, files: files.Files}
	var oracleFiles []map[string]any
	for _, f := range files.Files {
		k := partition.MustParse(f.Partition)
		vals := map[string]string{}
		for _, c := range k.Columns() {
			vals[c.Name] = c.Value
		}
		path := f.URI
		if u, err := url.Parse(f.URI); err == nil && u.Scheme == "file" {
			path = u.Path // the URI is percent-encoded; DuckDB opens paths as written
		}
		oracleFiles = append(oracleFiles, map[string]any{"path": path, "partition": vals})
	}
	var rows []map[string]any
	if err := call(tb.t, map[string]any{"engine": "oracle", "op": "rows", "files": oracleFiles}, &rows); err != nil {
		tb.t.Fatalf("DuckDB over pswap files: %v", err)
	}
	// The table's columns then: every column a snapshot up to this one
	// had (a column is only ever added), null where the files lack it.
	for _, prev := range tb.snaps {
		s.columns = append(s.columns, prev.columns...)
	}
	for _, r := range rows {
		for c := range r {
			s.columns = append(s.columns, c)
		}
	}
	slices.Sort(s.columns)
	s.columns = slices.Compact(s.columns)
	for _, r := range rows {
		for _, c := range s.columns {
			if _, ok := r[c]; !ok {
				r[c] = nil
			}
		}
	}
	s.rows = canonRows(tb.t, rows)
	if n := len(tb.snaps); n > 0 && tb.snaps[n-1].snapshotID == s.snapshotID {
		tb.snaps[n-1] = s
	} else {
		tb.snaps = append(tb.snaps, s)
	}
	return s
}

// canonRows turns rows into sorted canonical JSON strings (object keys
// sorted by encoding/json), a multiset that compares exactly.
func canonRows(t testing.TB, rows []map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

// request is a request for the table's current snapshot (or snap).
func (tb *table) request(engine, op string, s snapState) map[string]any {
	return map[string]any{"engine": engine, "op": op, "table": tb.root, "metadata": s.metadata}
}

// checkEngines reads the table with every engine and compares, for the
// current snapshot and every snapshot recorded before it (time travel),
// each engine's rows with DuckDB's read of the files pswap listed then; a
// filter on one partition must plan only that partition's files.
func (tb *table) checkEngines(partCol string) {
	tb.t.Helper()
	cur := tb.snaps[len(tb.snaps)-1]
	for _, engine := range engineNames {
		tb.t.Run(engine, func(t *testing.T) {
			sub := &table{t: t, store: tb.store, url: tb.url, root: tb.root, dir: tb.dir, snaps: tb.snaps}
			for i, s := range sub.snaps {
				req := sub.request(engine, "scan", cur)
				if i != len(sub.snaps)-1 {
					req["snapshot_id"] = s.snapshotID
				}
				var rows []map[string]any
				if err := call(t, req, &rows); err != nil {
					t.Errorf("%s at snapshot %d (%s): %v", engine, s.snapshotID, s.step, err)
					continue
				}
				sameRows(t, fmt.Sprintf("%s at snapshot %d (%s)", engine, s.snapshotID, s.step), canonRows(t, rows), s.rows)
			}
			sub.checkPruning(engine, cur, partCol)
		})
	}
}

// checkPruning filters on one partition's value of partCol and checks that
// the engine plans exactly that partition's files (PyIceberg, Java
// Iceberg), or reads exactly its rows (DuckDB).
func (tb *table) checkPruning(engine string, cur snapState, partCol string) {
	t := tb.t
	if len(cur.files) == 0 || partCol == "" {
		return
	}
	key := partition.MustParse(cur.files[len(cur.files)-1].Partition)
	var value string
	for _, c := range key.Columns() {
		if c.Name == partCol {
			value = c.Value
		}
	}
	var want []string
	for _, f := range cur.files {
		for _, c := range partition.MustParse(f.Partition).Columns() {
			if c.Name == partCol && c.Value == value {
				want = append(want, asWritten(f.URI))
			}
		}
	}
	slices.Sort(want)
	filter := fmt.Sprintf("%s = '%s'", partCol, strings.ReplaceAll(value, "'", "''"))
	switch engine {
	case "pyiceberg", "spark":
		req := tb.request(engine, "plan", cur)
		req["filter"] = filter
		req["plan_eq"] = []string{partCol, value}
		var got []string
		if err := call(t, req, &got); err != nil {
			t.Errorf("%s: plan %s: %v", engine, filter, err)
			return
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the scan of %s plans\n  %v\nwant that partition's files only\n  %v", engine, filter, got, want)
		}
	case "duckdb":
		req := tb.request(engine, "scan", cur)
		req["filter"] = filter
		var rows []map[string]any
		if err := call(t, req, &rows); err != nil {
			t.Errorf("duckdb: %s: %v", filter, err)
			return
		}
		var wantRows []string
		for _, r := range cur.rows {
			var m map[string]any
			json.Unmarshal([]byte(r), &m)
			if m[partCol] == value {
				wantRows = append(wantRows, r)
			}
		}
		sameRows(t, "duckdb WHERE "+filter, canonRows(t, rows), wantRows)
	}
}

// sameRows fails the test if got and want (sorted) differ, showing the
// first rows that differ.
func sameRows(t testing.TB, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var onlyGot, onlyWant []string
	gi, wi := 0, 0
	for gi < len(got) || wi < len(want) {
		switch {
		case wi == len(want) || (gi < len(got) && got[gi] < want[wi]):
			onlyGot = append(onlyGot, got[gi])
			gi++
		case gi == len(got) || want[wi] < got[gi]:
			onlyWant = append(onlyWant, want[wi])
			wi++
		default:
			gi++
			wi++
		}
	}
	t.Errorf("%s: %d rows, want %d\n  only in the engine (%d): %s\n  missing (%d): %s", what, len(got), len(want),
		len(onlyGot), head(onlyGot), len(onlyWant), head(onlyWant))
}

func head(rows []string) string {
	if len(rows) > 3 {
		return strings.Join(rows[:3], "\n    ") + "\n    ..."
	}
	return strings.Join(rows, "\n    ")
}

// asWritten is the location of a file URI as Iceberg metadata holds it:
// the path as written on disk, not percent-encoded.
func asWritten(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		return "file://" + u.Path
	}
	return uri
}
