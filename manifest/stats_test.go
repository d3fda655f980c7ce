package manifest

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// A manifest with column statistics round-trips as version 1.2, one line
// per file; without them it stays 1.0, byte for byte the golden document.
func TestStatsRoundTrip(t *testing.T) {
	m := statsManifest()
	b := mustEncode(t, m)
	if !bytes.Contains(b, []byte(`"version": "1.2"`)) {
		t.Fatalf("a manifest with statistics is not written as 1.2:\n%s", b)
	}
	if n := bytes.Count(b, []byte("\n    {\"path\"")); n != 2 {
		t.Errorf("%d file lines, want 2:\n%s", n, b)
	}
	want := `"columns": [{"name": "id", "size": 1000, "values": 25000, "nulls": 0, "type": "long", "min": "-5", "max": "99"}, `
	if !bytes.Contains(b, []byte(want)) {
		t.Errorf("encoding lacks %s:\n%s", want, b)
	}
	if !bytes.Contains(b, []byte(`{"name": "ts", "size": 10, "values": 25000, "nulls": 25000}`)) ||
		!bytes.Contains(b, []byte(`{"name": "ok", "size": 10, "values": 25000, "type": "boolean", "min": "false", "max": "true"}`)) {
		t.Errorf("optional fields not omitted as they should be:\n%s", b)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	m.Version = StatsVersion
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip changed the manifest:\n got %+v\nwant %+v", got.Files, m.Files)
	}
	if got.Files[1].Columns == nil {
		t.Error("an empty list of columns decoded as not recorded")
	}
	// Kind and statistics: 1.2 has both.
	m.Kind = KindMerge
	if got, err := Decode(mustEncode(t, m)); err != nil || got.Version != StatsVersion || got.Kind != KindMerge {
		t.Fatalf("merge with statistics: %+v %v", got, err)
	}
}

// Backward compatibility, both ways: a reader of 1.0/1.1 (which ignores
// the fields of a higher minor version) reads a 1.2 manifest as the same
// manifest without statistics; a 1.2 reader reads older ones without
// statistics (nil: read the footer), and refuses columns in a document that
// says 1.0 or 1.1.
func TestStatsCompatibility(t *testing.T) {
	withStats := mustEncode(t, statsManifest())
	// The old reader: its known fields are these of 1.1, and a document
	// of a higher minor version is read leniently. Emulated by decoding
	// the 1.2 document with the columns removed and comparing, and by
	// the generic rule the old reader follows (tested in
	// TestForwardCompatibility): unknown fields of a newer minor pass.
	stripped := mutateJSON(t, withStats, func(m map[string]any) {
		for i := range m["files"].([]any) {
			delete(file(m, i), "columns")
		}
		m["version"] = "1.1"
	})
	old, err := Decode(stripped)
	if err != nil {
		t.Fatal(err)
	}
	old.Version = Version
	if !reflect.DeepEqual(old, validManifest()) {
		t.Errorf("the 1.2 manifest without its columns differs from the 1.0 one")
	}
	// A document of a newer minor with columns of an unknown shape: read
	// leniently, and the known parts of columns still obey their rules.
	newer := mutateJSON(t, withStats, func(m map[string]any) {
		m["version"] = "1.3"
		file(m, 0)["columns"].([]any)[0].(map[string]any)["nan_count"] = 3
	})
	if _, err := Decode(newer); err != nil {
		t.Errorf("a 1.3 manifest with a new column field: %v", err)
	}
	// The golden 1.0 manifest decodes without statistics.
	m, err := Decode(mustEncode(t, validManifest()))
	if err != nil || m.HasStats() || m.Files[0].Columns != nil {
		t.Fatalf("a 1.0 manifest: %v, stats %v", err, m.Files[0].Columns)
	}
	for _, v := range []string{"1.0", "1.1"} {
		doc := bytes.Replace(withStats, []byte(`"version": "1.2"`), []byte(`"version": "`+v+`"`), 1)
		_, err := Decode(doc)
		checkInvalid(t, err, "files[0].columns: unknown field")
	}
}

func TestStatsRejects(t *testing.T) {
	golden := mustEncode(t, statsManifest())
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"min above max", `"min": "-5"`, `"min": "100"`, `files[0].columns[0].min "100": greater than max "99"`},
		{"not decimal", `"min": "-5"`, `"min": "-05"`, `files[0].columns[0].min "-05": not a long bound`},
		{"int overflow", `"type": "date", "min": "20000"`, `"type": "date", "min": "3000000000"`, `not a date bound`},
		{"unknown type", `"type": "boolean"`, `"type": "bool"`, `files[0].columns[2].type "bool": not a bound type`},
		{"bad boolean", `"min": "false"`, `"min": "no"`, `not a boolean bound`},
		{"bounds without type", `"nulls": 25000}`, `"nulls": 25000, "min": "1"}`, `files[0].columns[4].type: missing`},
		{"nulls above values", `"nulls": 25000}`, `"nulls": 25001}`, `more than the 25000 values`},
		{"negative nulls", `"nulls": 25000}`, `"nulls": -1}`, `files[0].columns[4].nulls: negative`},
		{"empty bound", `"min": "20000"`, `"min": ""`, `files[0].columns[3].min: empty`},
		{"duplicate name", `{"name": "ok"`, `{"name": "id"`, `files[0].columns[2].name "id": duplicates files[0].columns[0].name`},
		{"empty name", `{"name": "ok"`, `{"name": ""`, `files[0].columns[2].name: empty`},
		{"unknown field", `"nulls": 25000}`, `"nulls": 25000, "nan": 1}`, `files[0].columns[4].nan: unknown field`},
		{"null", `"columns": []`, `"columns": null`, `files[1].columns: null is not allowed`},
		{"not an array", `"columns": []`, `"columns": {}`, `files[1].columns: must be an array`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(string(golden), tc.old, tc.new, 1)
			if doc == string(golden) {
				t.Fatalf("%q not in the golden document", tc.old)
			}
			_, err := Decode([]byte(doc))
			checkInvalid(t, err, tc.want)
		})
	}
	long := statsManifest()
	long.Files[0].Columns[1].Max = strings.Repeat("x", MaxBoundBytes+1)
	checkInvalid(t, long.Validate(), "not a string bound")
}

// LimitStats drops every file's statistics when they exceed the budget,
// and keeps them otherwise.
func TestLimitStats(t *testing.T) {
	m := statsManifest()
	m.LimitStats(StatsBudget)
	if !m.HasStats() {
		t.Fatal("statistics dropped within the budget")
	}
	m.LimitStats(100)
	if m.HasStats() {
		t.Fatal("statistics kept over the budget")
	}
	if b := mustEncode(t, m); !bytes.Contains(b, []byte(`"version": "1.0"`)) {
		t.Errorf("without statistics the manifest is not 1.0:\n%s", b)
	}
}

// BenchmarkDecodeStats decodes a manifest of 1,000 files with and without
// statistics of 10 columns each: what the statistics cost every reader of
// the manifest.
//
//	go test -run '^$' -bench DecodeStats ./manifest/
func BenchmarkDecodeStats(b *testing.B) {
	for _, stats := range []bool{false, true} {
		m := validManifest()
		m.Files, m.Rows, m.Bytes = nil, 0, 0
		for i := range 1000 {
			f := File{Path: fmt.Sprintf("part-%05d.parquet", i), Size: 1 << 20, Rows: 1000, Checksum: sumA}
			if stats {
				f.Columns = []ColumnStats{}
				for c := range 10 {
					f.Columns = append(f.Columns, ColumnStats{Name: fmt.Sprint("column_", c), Size: 100000, Values: 1000, Nulls: 3,
						Type: BoundLong, Min: strconv.Itoa(-c * 1000), Max: strconv.Itoa(c * 1000000)})
				}
			}
			m.Add(f)
		}
		doc := mustEncode(b, m)
		b.Run(fmt.Sprint("stats=", stats), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := Decode(doc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(doc)), "doc-bytes")
		})
	}
}
