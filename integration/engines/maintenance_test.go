package engines

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/partition"
)

// The peers' maintenance matrix (issue 38, item 9 / Build 6): the
// maintenance a user's other tools offer, run against a pswap table that
// has every view (Iceberg metadata, a Delta log, a SQL catalog entry), each
// on a fresh table with three partitions and a superseded generation in
// each. After each tool the test reads every partition through pswap and
// through every view, runs `pswap publish --delta --catalog` (the repair of
// whatever pswap derives) and reads again, then commits once more and reads
// a third time. What each tool deleted and what each view read is the
// matrix: maintMatrix below holds the expected outcome of every cell, so a
// tool or a pswap change that moves a cell fails the test, which prints
// the whole matrix (docs/design.md, "Peers' maintenance", is its prose).

// maintView is one way to read the table.
type maintView string

const (
	viewPswap     maintView = "pswap"        // pswap files + DuckDB over the listed files, and pswap verify
	viewDeltaRS   maintView = "delta-rs"     // DeltaTable(root)
	viewDuckDelta maintView = "duckdb-delta" // delta_scan(root)
	viewDuckIce   maintView = "duckdb-ice"   // iceberg_scan(root): the version hint
	viewPyIce     maintView = "pyiceberg"    // StaticTable of the hinted metadata file
	viewPyIceCat  maintView = "pyice-cat"    // SqlCatalog.load_table(db.sales)
	viewSparkCat  maintView = "spark-cat"    // SELECT * FROM cat.db.sales (JDBC catalog)
)

var maintViews = []maintView{viewPswap, viewDeltaRS, viewDuckDelta, viewDuckIce, viewPyIce, viewPyIceCat, viewSparkCat}

// The phases a table is read at.
const (
	phaseTool    = "after tool"
	phasePublish = "after publish"
	phaseCommit  = "after commit"
)

var maintPhases = []string{phaseTool, phasePublish, phaseCommit}

// maintTool is a peer's maintenance command.
type maintTool struct {
	name string
	run  func(m *maintTable) error
}

// maintExpect is what a tool leaves: the views that do not read exactly at
// each phase (every other view must), and the kinds of objects it deletes.
type maintExpect struct {
	broken  map[string][]maintView // phase -> views that fail or read wrong
	deletes []string               // the kinds of objects deleted (objectKind), sorted
}

// maintTable is one pswap table with every view, under test.
type maintTable struct {
	*table
	cat    string // the catalog's name
	catDB  string // its SQLite file
	catURL string // pswap's --catalog
	wh     string // the catalog's warehouse
	want   map[string]partAgg
	runs   int
}

// partAgg is what a partition reads: its rows and the sum of amount.
type partAgg struct {
	Rows int64
	Sum  float64
}

// maintDays are the partitions of every matrix table.
var maintDays = []string{"2026-11-01", "2026-11-02", "2026-11-03"}

// newMaintTable commits two generations of each of three partitions with
// --delta and --catalog (the first superseded), and checks that every view
// reads them.
func newMaintTable(t *testing.T, name string) *maintTable {
	dir := t.TempDir()
	root := filepath.Join(dir, "lake", "sales")
	m := &maintTable{
		table: &table{t: t, store: "file", url: root, root: root, dir: dir},
		cat:   name, catDB: filepath.Join(dir, "cat.db"), wh: t.TempDir(),
		want: map[string]partAgg{},
	}
	m.catURL = "sql+sqlite://" + m.catDB + "?catalog=" + name + "&namespace=db&table=sales"
	for gen := 1; gen <= 2; gen++ {
		for i, d := range maintDays {
			m.commit("dt="+d, gen*10+i+1)
		}
	}
	return m
}

// commit commits n rows (amounts 0.25, 0.5, ...) to part with every view,
// and remembers them as what the partition must read.
func (m *maintTable) commit(part string, n int) {
	m.t.Helper()
	m.runs++
	var b strings.Builder
	b.WriteString("id,amount\n")
	var agg partAgg
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d,%.2f\n", m.runs*1000+i, float64(i)/4)
		agg.Rows++
		agg.Sum += float64(i) / 4
	}
	in := m.write(fmt.Sprintf("run%d.csv", m.runs), b.String())
	args := []string{"commit", "--partition", part, "--delta", "--json", "--catalog", m.catURL}
	if m.runs == 1 {
		args[len(args)-1] += "&create-namespace=true"
	}
	out, err := m.try(append(args, in)...)
	if err != nil {
		m.t.Fatalf("commit %s: %v", part, err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		m.t.Fatalf("commit %s: %v: %s", part, err, out)
	}
	if doc["published"] != true || doc["delta_published"] != true {
		m.t.Logf("commit %s: not every view published: published=%v delta_published=%v %v", part, doc["published"], doc["delta_published"], doc["publish_error"])
	}
	m.want[strings.TrimPrefix(part, "dt=")] = agg
}

// files lists every object under the table's root (relative paths).
func (m *maintTable) files() map[string]bool {
	m.t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(m.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(m.root, p)
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		m.t.Fatal(err)
	}
	return out
}

// objectKind says what an object of a pswap table is, by its path.
func objectKind(rel string, current map[string]bool) string {
	if strings.HasPrefix(rel, "metadata/") {
		return "iceberg-metadata" // the hint's lock included
	}
	base := rel[strings.LastIndex(rel, "/")+1:]
	if strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".pswap-lock") {
		return "lock" // the file store's lock beside a pointer
	}
	if part, ok := layout.PartitionOf(rel); ok {
		switch k, _ := layout.Classify(part, rel); k {
		case layout.KindPointer:
			return "pointer"
		case layout.KindManifest:
			return "manifest"
		case layout.KindStaged:
			return "staged"
		case layout.KindData:
			if current[rel] {
				return "current-data"
			}
			return "superseded-data"
		}
	}
	switch {
	case strings.HasPrefix(rel, "_pswap/"):
		return "table.json"
	case strings.HasPrefix(rel, "_delta_log/"):
		return "delta-log"
	case strings.HasPrefix(rel, "metadata/"):
		return "iceberg-metadata"
	}
	return "other"
}

// current is the set of data files the pointers name (relative paths).
func (m *maintTable) current() map[string]bool {
	m.t.Helper()
	files, err := m.pswapFiles()
	if err != nil {
		m.t.Fatalf("pswap files: %v", err)
	}
	out := map[string]bool{}
	for _, f := range files {
		out[relPath(m.root, f.URI)] = true
	}
	return out
}

func relPath(root, uri string) string {
	p := uri
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		p = u.Path
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

func (m *maintTable) pswapFiles() ([]fileEntry, error) {
	out, err := m.try("files", "--format", "json")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Files []fileEntry `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return nil, err
	}
	return doc.Files, nil
}

// aggregate sums rows by their dt.
func aggregate(rows []map[string]any) (map[string]partAgg, error) {
	out := map[string]partAgg{}
	for _, r := range rows {
		dt, _ := r["dt"].(string)
		a, err := strconv.ParseFloat(fmt.Sprint(r["amount"]), 64)
		if err != nil {
			return nil, fmt.Errorf("amount %v: %w", r["amount"], err)
		}
		agg := out[dt]
		agg.Rows++
		agg.Sum += a
		out[dt] = agg
	}
	return out, nil
}

// read reads the table through view v and returns "" when every partition
// reads exactly, or what went wrong.
func (m *maintTable) read(v maintView) string {
	m.t.Helper()
	var rows []map[string]any
	var err error
	switch v {
	case viewPswap:
		var files []fileEntry
		if files, err = m.pswapFiles(); err != nil {
			break
		}
		var oracle []map[string]any
		for _, f := range files {
			vals := map[string]string{}
			for _, c := range partition.MustParse(f.Partition).Columns() {
				vals[c.Name] = c.Value
			}
			oracle = append(oracle, map[string]any{"path": relPathAbs(f.URI), "partition": vals})
		}
		if len(oracle) > 0 {
			if err = call(m.t, map[string]any{"engine": "oracle", "op": "rows", "files": oracle}, &rows); err != nil {
				break
			}
		}
		if _, verr := m.try("verify"); verr != nil {
			return "verify: " + firstLine(verr.Error())
		}
	case viewDeltaRS:
		var ans struct {
			Rows []map[string]any `json:"rows"`
		}
		err = call(m.t, map[string]any{"engine": "deltars", "op": "scan", "table": m.root}, &ans)
		rows = ans.Rows
	case viewDuckDelta:
		err = call(m.t, map[string]any{"engine": "duckdb", "op": "delta_scan", "table": m.root}, &rows)
	case viewDuckIce:
		err = call(m.t, map[string]any{"engine": "duckdb", "op": "scan", "table": m.root}, &rows)
	case viewPyIce:
		var hint []byte
		if hint, err = os.ReadFile(filepath.Join(m.root, "metadata", "version-hint.text")); err != nil {
			break
		}
		meta := filepath.Join(m.root, "metadata", "v"+strings.TrimSpace(string(hint))+".metadata.json")
		err = call(m.t, map[string]any{"engine": "pyiceberg", "op": "scan", "table": m.root, "metadata": meta}, &rows)
	case viewPyIceCat, viewSparkCat:
		engine := "pyiceberg"
		if v == viewSparkCat {
			engine = "spark"
		}
		where := map[string]any{"name": m.cat, "warehouse": m.wh, "sqlite": m.catDB}
		err = call(m.t, map[string]any{"engine": engine, "op": "catalog_scan", "catalog": where, "name": "db.sales"}, &rows)
	}
	if err != nil {
		return "error: " + firstLine(err.Error())
	}
	got, err := aggregate(rows)
	if err != nil {
		return err.Error()
	}
	if maps.Equal(got, m.want) {
		return ""
	}
	return fmt.Sprintf("read %v, want %v", got, m.want)
}

func relPathAbs(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return uri
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// sparkSQL runs statements in the engines' Spark session.
func (m *maintTable) sparkSQL(stmts ...string) error {
	for _, s := range stmts {
		if err := call(m.t, map[string]any{"engine": "spark", "op": "sql", "table": m.root, "sql": s}, nil); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// sparkCatalog makes sure the Spark session has the table's catalog (a
// read by name configures it) and returns its name.
func (m *maintTable) sparkCatalog() string {
	m.read(viewSparkCat)
	return m.cat
}

// soon is a cut-off a minute ahead, as Spark's TIMESTAMP literal: every
// file and snapshot of the test is older.
func soon() string { return time.Now().UTC().Add(time.Minute).Format("2006-01-02 15:04:05") }

// sparkListing bounds the tasks of Delta's VACUUM listing, which are
// spark.sql.sources.parallelPartitionDiscovery.parallelism (10,000 by
// default: minutes of task scheduling on 2 cores for a table of 30 files).
const sparkListing = "SET spark.sql.sources.parallelPartitionDiscovery.parallelism = 2"

// maintTools are the peers' maintenance commands of the matrix.
var maintTools = []maintTool{
	{"spark-delta-vacuum", func(m *maintTable) error {
		return m.sparkSQL(sparkListing, fmt.Sprintf("VACUUM delta.`%s`", m.root))
	}},
	{"spark-delta-vacuum-0h", func(m *maintTable) error {
		return m.sparkSQL(sparkListing, "SET spark.databricks.delta.retentionDurationCheck.enabled = false",
			fmt.Sprintf("VACUUM delta.`%s` RETAIN 0 HOURS", m.root),
			"SET spark.databricks.delta.retentionDurationCheck.enabled = true")
	}},
	{"deltars-vacuum", func(m *maintTable) error {
		return call(m.t, map[string]any{"engine": "deltars", "op": "vacuum", "table": m.root}, nil)
	}},
	{"deltars-vacuum-full", func(m *maintTable) error {
		return call(m.t, map[string]any{"engine": "deltars", "op": "vacuum", "table": m.root, "full": true}, nil)
	}},
	{"spark-remove-orphan-files", func(m *maintTable) error {
		// The procedure refuses a cut-off less than 24 hours old (nothing
		// of a fresh table is older); its message sends the user to the
		// action, which the test runs, on the table loaded by name.
		cat := m.sparkCatalog()
		err := m.sparkSQL(fmt.Sprintf("CALL %s.system.remove_orphan_files(table => 'db.sales', older_than => TIMESTAMP '%s')", cat, soon()))
		if err == nil || !strings.Contains(err.Error(), "less than 24 hours") {
			return fmt.Errorf("remove_orphan_files with a cut-off of now: %v, want the procedure's 24-hour refusal", err)
		}
		return call(m.t, map[string]any{"engine": "spark", "op": "orphans", "table": m.root, "name": cat + ".db.sales"}, nil)
	}},
	{"spark-expire-snapshots", func(m *maintTable) error {
		cat := m.sparkCatalog()
		return m.sparkSQL(fmt.Sprintf("CALL %s.system.expire_snapshots(table => 'db.sales', older_than => TIMESTAMP '%s', retain_last => 1)", cat, soon()))
	}},
	{"pyiceberg-expire-snapshots", func(m *maintTable) error {
		code := fmt.Sprintf(`import datetime
from pyiceberg.catalog.sql import SqlCatalog
cat = SqlCatalog(%q, uri=%q, warehouse=%q)
try:
    t = cat.load_table("db.sales")
    t.maintenance.expire_snapshots().older_than(datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)).commit()
finally:
    cat.engine.dispose()
`, m.cat, "sqlite:///"+m.catDB, "file://"+m.wh)
		return call(m.t, map[string]any{"engine": "python", "op": "exec", "code": code}, nil)
	}},
}

// TestPeersMaintenance runs the matrix.
func TestPeersMaintenance(t *testing.T) {
	pswapBin(t)
	start := time.Now()
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-27s %-14s", "tool", "phase")
	for _, v := range maintViews {
		fmt.Fprintf(&report, " %-12s", v)
	}
	report.WriteString("\n")
	deleted := map[string]string{}
	for _, tool := range maintTools {
		t.Run(tool.name, func(t *testing.T) {
			catalogSeq.Lock()
			catalogSeq.n++
			name := fmt.Sprintf("maint%d", catalogSeq.n)
			catalogSeq.Unlock()
			m := newMaintTable(t, name)
			for _, v := range maintViews {
				if bad := m.read(v); bad != "" {
					t.Fatalf("before %s: %s: %s", tool.name, v, bad)
				}
			}
			cur := m.current()
			before := m.files()
			toolStart := time.Now()
			if err := tool.run(m); err != nil {
				t.Errorf("%s: %v", tool.name, err)
			}
			t.Logf("%s ran in %v", tool.name, time.Since(toolStart).Round(time.Millisecond))
			after := m.files()
			kinds := map[string]int{}
			added := map[string]int{}
			for f := range before {
				if !after[f] {
					kinds[objectKind(f, cur)]++
				}
			}
			var addedNames []string
			for f := range after {
				if !before[f] {
					added[objectKind(f, cur)]++
					addedNames = append(addedNames, f)
				}
			}
			slices.Sort(addedNames)
			t.Logf("%s added %v", tool.name, addedNames)
			deleted[tool.name] = fmt.Sprintf("deleted %v, added %v", kinds, added)
			t.Logf("%s: %s", tool.name, deleted[tool.name])

			got := maintExpect{broken: map[string][]maintView{}, deletes: slices.Sorted(maps.Keys(kinds))}
			for _, phase := range maintPhases {
				switch phase {
				case phasePublish:
					out, err := m.try("publish", "--delta", "--catalog", m.catURL, "--json")
					t.Logf("pswap publish --delta --catalog: %v %s", err, strings.Join(strings.Fields(out), " "))
				case phaseCommit:
					m.commit("dt="+maintDays[0], 7)
				}
				fmt.Fprintf(&report, "%-27s %-14s", tool.name, phase)
				for _, v := range maintViews {
					bad := m.read(v)
					cell := "ok"
					if bad != "" {
						cell = "BROKEN"
						got.broken[phase] = append(got.broken[phase], v)
						t.Logf("%s, %s: %s: %s", tool.name, phase, v, bad)
					}
					fmt.Fprintf(&report, " %-12s", cell)
				}
				report.WriteString("\n")
			}
			want := maintMatrix[tool.name]
			if !sameExpect(got, want) {
				t.Errorf("%s moved in the maintenance matrix:\n got  %+v\n want %+v\n(update maintMatrix and docs/design.md's table)", tool.name, got, want)
			}
		})
	}
	for _, tool := range maintTools {
		fmt.Fprintf(&report, "%-27s %s\n", tool.name, deleted[tool.name])
	}
	t.Logf("the peers' maintenance matrix (%v):%s", time.Since(start).Round(time.Second), report.String())
}

func sameExpect(a, b maintExpect) bool {
	if !slices.Equal(a.deletes, b.deletes) {
		return false
	}
	for _, p := range maintPhases {
		x, y := slices.Clone(a.broken[p]), slices.Clone(b.broken[p])
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			return false
		}
	}
	return true
}

// maintMatrix is the expected matrix: per tool, the views that do not read
// exactly at each phase and the kinds of objects the tool deletes.
var maintMatrix = map[string]maintExpect{
	// Lists no `_` folder at any level, and nothing is 7 days old.
	"spark-delta-vacuum": {},
	// Deletes the Iceberg metadata (not the hidden lock of the hint):
	// pswap publish writes it again from the pointers (from v1) and moves
	// the catalog off the version it no longer has.
	"spark-delta-vacuum-0h": {
		broken:  map[string][]maintView{phaseTool: {viewDuckIce, viewPyIce, viewPyIceCat, viewSparkCat}},
		deletes: []string{"iceberg-metadata"},
	},
	// Lite mode: the files the log removed, but only outside a top-level
	// `_` folder: a generation's data lies under _pswap/p/, which it
	// spares, so it deletes nothing (it deleted superseded data of the
	// legacy layout, which a table keeps until gc collects it).
	"deltars-vacuum": {},
	// Full mode deletes every file outside a top-level `_` folder that
	// the log does not name: of a pswap table, only the Iceberg metadata
	// (pswap's own state lies under the top-level _pswap/, which it
	// spares; docs/design.md, "Peers' maintenance"). The next publish
	// writes the metadata again, as after Spark's VACUUM RETAIN 0 HOURS.
	// Before that layout it deleted the pointers and manifests, and every
	// view lost every partition.
	"deltars-vacuum-full": {
		broken:  map[string][]maintView{phaseTool: {viewDuckIce, viewPyIce, viewPyIceCat, viewSparkCat}},
		deletes: []string{"iceberg-metadata"},
	},
	// Skips `_` folders; every metadata file is reachable.
	"spark-remove-orphan-files": {},
	// Through the catalog: a metadata file of its own (the catalog names
	// it: pswap's version less the expired snapshots) and the files only
	// expired snapshots named (superseded generations' data, old
	// manifests). pswap takes that file for the version it descends from
	// and moves the name on at the next commit.
	"spark-expire-snapshots": {deletes: []string{"iceberg-metadata", "superseded-data"}},
	// Metadata only (it deletes no file), otherwise the same.
	"pyiceberg-expire-snapshots": {},
}
