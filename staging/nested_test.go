package staging

import (
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/pqscan"

	"bytes"
	"context"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/store/filestore"
)

// nestedJSON holds rows with a list, a struct, a map and a list of
// structs, with nulls at every level, as Arrow's JSON reader reads them.
const nestedJSON = `{"id": 1, "tags": ["a", null, "c"], "pt": {"x": 1.5, "y": 2}, "attrs": [{"key": "k1", "value": 1}, {"key": "k2", "value": null}], "evs": [{"n": "e1", "v": [1, 2]}]}
{"id": 2, "tags": [], "pt": {"x": null, "y": null}, "attrs": [], "evs": []}
{"id": 3, "tags": null, "pt": null, "attrs": null, "evs": [null, {"n": null, "v": null}, {"n": "e3", "v": [null]}]}
{"id": 4, "tags": [null], "pt": {"x": -0.25, "y": null}, "attrs": [{"key": "z", "value": 26}, {"key": "a", "value": 1}], "evs": null}
`

// nestedSQL is the same rows as a DuckDB query; order and mapOrder choose
// the row order and the entry order of row 4's map.
func nestedSQL(order string, mapOrder bool) string {
	m4 := "MAP {'z': 26, 'a': 1}"
	if mapOrder {
		m4 = "MAP {'a': 1, 'z': 26}"
	}
	return `SELECT * FROM (VALUES
		(1::BIGINT, ['a', NULL, 'c'], {'x': 1.5::DOUBLE, 'y': 2::BIGINT}, MAP {'k1': 1::BIGINT, 'k2': NULL}, [{'n': 'e1', 'v': [1::BIGINT, 2]}]),
		(2, []::VARCHAR[], {'x': NULL, 'y': NULL}, MAP {}::MAP(VARCHAR, BIGINT), []),
		(3, NULL, NULL, NULL, [NULL, {'n': NULL, 'v': NULL}, {'n': 'e3', 'v': [NULL]}]),
		(4, [NULL], {'x': -0.25, 'y': NULL}, ` + m4 + `, NULL)
	) AS t(id, tags, pt, attrs, evs) ORDER BY id ` + order
}

var nestedArrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "pt", Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
	{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "evs", Type: arrow.ListOf(arrow.StructOf(
		arrow.Field{Name: "n", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "v", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true})), Nullable: true},
}, nil)

func nestedRecord(t testing.TB, jsonl string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, nestedArrowSchema,
		strings.NewReader("["+strings.Join(strings.Split(strings.TrimSpace(jsonl), "\n"), ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestNestedSameRowsSameChecksum: nested rows written by Arrow (through
// the Stager) and by DuckDB (ingested as a file) in another row order,
// another codec and another map entry order have one content checksum;
// a change inside a list, a list's order, or a null moved to another
// level changes it. The Stager's own file reads back in DuckDB and
// hyparquet with the same rows.
func TestNestedSameRowsSameChecksum(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := New(ctx, fs, testPrefix, Options{})
	rec := nestedRecord(t, nestedJSON)
	defer rec.Release()
	if err := s.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	want := finish(t, s)
	if want.Rows != 4 {
		t.Fatalf("rows = %d", want.Rows)
	}
	staged := filepath.Join(dir, filepath.FromSlash(testPrefix+want.Files[0].Path))

	// Changed content: each differs from nestedJSON in one nested place.
	for name, edit := range map[string][2]string{
		"list order":        {`["a", null, "c"]`, `["c", null, "a"]`},
		"list value":        {`"v": [1, 2]`, `"v": [1, 3]`},
		"null element":      {`"tags": [null]`, `"tags": []`},
		"null struct field": {`{"x": null, "y": null}`, `null`},
		"map value":         {`{"key": "z", "value": 26}`, `{"key": "z", "value": 27}`},
		"empty vs null":     {`"attrs": [], `, `"attrs": null, `},
	} {
		c := stageRecordChecksum(t, strings.Replace(nestedJSON, edit[0], edit[1], 1))
		if c == want.ContentChecksum {
			t.Errorf("%s: checksum unchanged", name)
		}
	}
	// Map entry order does not count.
	if c := stageRecordChecksum(t, strings.Replace(nestedJSON,
		`[{"key": "z", "value": 26}, {"key": "a", "value": 1}]`,
		`[{"key": "a", "value": 1}, {"key": "z", "value": 26}]`, 1)); c != want.ContentChecksum {
		t.Errorf("map entry order changed the checksum")
	}

	if err := duckcheck.Available(); err != nil {
		t.Skipf("skipping the DuckDB half: %v", err)
	}
	for _, tc := range []struct{ order, codec string }{{"DESC", "zstd"}, {"ASC", "snappy"}} {
		path := filepath.Join(t.TempDir(), "duck.parquet")
		if _, err := duckcheck.Run(ctx, "COPY ("+nestedSQL(tc.order, tc.codec == "zstd")+") TO "+
			duckcheck.Quote(path)+" (FORMAT parquet, COMPRESSION "+tc.codec+")"); err != nil {
			t.Fatal(err)
		}
		_, s := newMem(t, Options{})
		if err := s.AddParquetFile(ctx, path); err != nil {
			t.Fatal(err)
		}
		got := finish(t, s)
		if got.Schema != want.Schema || got.ContentChecksum != want.ContentChecksum || got.Rows != 4 {
			t.Errorf("DuckDB %s %s: %d rows, schema\n%s\nchecksum %s\nwant\n%s\n%s", tc.order, tc.codec,
				got.Rows, got.Schema, got.ContentChecksum, want.Schema, want.ContentChecksum)
		}
		// The staged (Arrow-written) file and DuckDB's hold the same rows
		// for hyparquet, and DuckDB finds them equal too.
		if duckcheck.HyparquetAvailable() == nil {
			a, err := duckcheck.ReadParquet(ctx, staged)
			if err != nil {
				t.Fatal(err)
			}
			b, err := duckcheck.ReadParquet(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if a.Checksum() != b.Checksum() || a.NumRows != 4 {
				t.Errorf("hyparquet: staged %s (%d rows), DuckDB's %s", a.Checksum(), a.NumRows, b.Checksum())
			}
		}
		// (DuckDB compares maps in entry order: sort the entries first.)
		sel := "SELECT * EXCLUDE (attrs), list_sort(map_entries(attrs)) AS attrs FROM read_parquet("
		r, err := duckcheck.Query(ctx, "SELECT count(*) AS n FROM ("+sel+duckcheck.Quote(staged)+
			", hive_partitioning = false) EXCEPT ALL "+sel+duckcheck.Quote(path)+"))")
		if err != nil {
			t.Fatal(err)
		}
		if r[0]["n"] != "0" {
			t.Errorf("DuckDB sees %v rows of the staged file that its own file lacks", r[0]["n"])
		}
	}
}

func stageRecordChecksum(t *testing.T, jsonl string) string {
	t.Helper()
	_, s := newMem(t, Options{})
	rec := nestedRecord(t, jsonl)
	defer rec.Release()
	if err := s.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	return finish(t, s).ContentChecksum
}

// TestNestedEncodingVectors pins the canonical encoding of nested values
// (the test vectors of doc.go).
func TestNestedEncodingVectors(t *testing.T) {
	rec := nestedRecord(t, nestedJSON)
	defer rec.Release()
	c, err := pqscan.SchemaOfArrow(rec.Schema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(col, row int) string {
		e, err := checksum.ArrowEncoder(rec.Column(col), c.Arrow.Field(col).Type)
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(e(nil, row))
	}
	for _, v := range []struct {
		col, row int
		want     string
	}{
		// ["a", null, "c"]: tag, count 3, string "a", null, string "c"
		{1, 0, "0c03" + "060161" + "00" + "060163"},
		{1, 1, "0c00"},   // []
		{1, 2, "00"},     // null list
		{1, 3, "0c0100"}, // [null]
		// {"x": 1.5, "y": 2}: tag, 2 fields, float64 1.5, int64 2
		{2, 0, "0d02" + "05000000000000f83f" + "020200000000000000"},
		{2, 1, "0d020000"}, // {"x": null, "y": null}
		{2, 2, "00"},       // null struct
		// {"z": 26, "a": 1}: tag, 2 entries, sorted by their bytes: "a" first
		{3, 3, "0e02" + "0c" + "060161" + "020100000000000000" + "0c" + "06017a" + "021a00000000000000"},
		{3, 1, "0e00"}, // {}
		// [null, {"n": null, "v": null}, {"n": "e3", "v": [null]}]
		{4, 2, "0c03" + "00" + "0d020000" + "0d02" + "06026533" + "0c0100"},
	} {
		if got := enc(v.col, v.row); got != v.want {
			t.Errorf("column %d row %d: %s, want %s", v.col, v.row, got, v.want)
		}
	}
	// Flat values keep the v1 encoding.
	if got := enc(0, 0); got != "020100000000000000" {
		t.Errorf("int64 1: %s", got)
	}
	if !bytes.Equal(checksum.AppendFloat16(nil, 0x7c01), checksum.AppendFloat16(nil, 0xfe00)) {
		t.Error("float16 NaNs encode differently")
	}
}

func rowSchemaOfFields(fields ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fields, nil) }

// nestedJSONL is nestedJSON as JSON Lines, maps as JSON objects.
const nestedJSONL = `{"id": 1, "tags": ["a", null, "c"], "pt": {"x": 1.5, "y": 2}, "attrs": {"k1": 1, "k2": null}, "evs": [{"n": "e1", "v": [1, 2]}]}
{"id": 2, "tags": [], "pt": {"x": null, "y": null}, "attrs": {}, "evs": []}

{"id": 3, "evs": [null, {"n": null, "v": null}, {"n": "e3", "v": [null]}]}
{"id": 4, "tags": [null], "pt": {"x": -0.25}, "attrs": {"z": 26, "a": 1}, "evs": null}
`

// TestNestedJSONL: JSON Lines with arrays and objects convert to lists,
// structs and maps: with the schema, the same content checksum as the
// same rows as an Arrow record; without, an inferred nested schema that
// DuckDB reads back.
func TestNestedJSONL(t *testing.T) {
	ctx := context.Background()
	want := stageRecordChecksum(t, nestedJSON)
	_, s := newMem(t, Options{Schema: nestedArrowSchema})
	if err := s.AddJSONL(ctx, strings.NewReader(nestedJSONL), "nested.jsonl"); err != nil {
		t.Fatal(err)
	}
	if got := finish(t, s); got.ContentChecksum != want || got.Rows != 4 {
		t.Errorf("JSON Lines with the schema: %d rows, checksum %s, want %s", got.Rows, got.ContentChecksum, want)
	}

	dir := t.TempDir()
	fs, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s = New(ctx, fs, testPrefix, Options{})
	if err := s.AddJSONL(ctx, strings.NewReader(nestedJSONL), "nested.jsonl"); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)
	for _, part := range []string{
		"tags: type=list<element: utf8, nullable>",
		"pt: type=struct<x: float64 nullable, y: int64 nullable>",
		"attrs: type=struct<a: int64 nullable, k1: int64 nullable, k2: utf8 nullable, z: int64 nullable>",
		"evs: type=list<element: struct<n: utf8 nullable, v: list<element: int64, nullable> nullable>, nullable>",
	} {
		if !strings.Contains(c.Schema, part) {
			t.Errorf("inferred schema lacks %q:\n%s", part, c.Schema)
		}
	}
	if err := duckcheck.Available(); err != nil {
		t.Skipf("skipping the DuckDB half: %v", err)
	}
	r, err := duckcheck.Query(ctx, "SELECT count(*) AS n, sum(len(tags)) AS tags, sum(pt.y) AS y, "+
		"sum(attrs.z) AS z, sum(len(evs)) AS evs FROM read_parquet("+filesList(dir, c)+", hive_partitioning = false)")
	if err != nil {
		t.Fatal(err)
	}
	if g := r[0]; g["n"] != "4" || g["tags"] != "4" || g["y"] != "2" || g["z"] != "26" || g["evs"] != "4" {
		t.Errorf("DuckDB reads %v", g)
	}
}
