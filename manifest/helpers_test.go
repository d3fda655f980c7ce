package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// Fixed ids (valid UUIDv7) for deterministic documents.
const (
	genA = "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b"
	genB = "0193a1b0-0000-7000-8000-000000000001"
	genC = "01939f00-1111-7222-b333-444455556666"
	sumA = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	sumB = "sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
	sumC = "xxh3-128-set:8c7e2f0a1b3d4c5e6f708192a3b4c5d6"
)

// validManifest is the manifest of testdata/valid_manifest.json.
func validManifest() *Manifest {
	return &Manifest{
		Format:     FormatManifest,
		Version:    Version,
		Partition:  "dt=2026-11-29/hr=13",
		Generation: genA,
		Parent:     genB,
		RunID:      "scheduled__2026-11-29T13:00:00+00:00",
		Content: Content{
			Files: []File{
				{Path: "part-00000.parquet", Size: 1048576, Rows: 25000, Checksum: sumA},
				{Path: "part-00001.parquet", Size: 524288, Rows: 12345, Checksum: sumB},
			},
			Rows:            37345,
			Bytes:           1572864,
			ContentChecksum: sumC,
			Schema:          "message sales { required int64 id; optional binary name (STRING); }",
		},
		CreatedAt:   time.Date(2026, 11, 29, 14, 2, 3, 120000000, time.UTC),
		CommittedAt: time.Date(2026, 11, 29, 14, 5, 7, 987654321, time.UTC),
		Writer:      "pswap/0.1.0",
	}
}

// validPointer is the pointer of testdata/valid_pointer.json: a version 1.1
// pointer whose history lists its parent (a rollback to genC's data by a
// backfill run) and genC.
func validPointer() *Pointer {
	p := validManifest().Pointer(42)
	p.History = append(p.History,
		HistoryEntry{Generation: genB, DataGeneration: genC, RunID: "backfill__2026-11-29", CommittedAt: time.Date(2026, 11, 29, 13, 30, 0, 0, time.UTC), Rows: 37000},
		HistoryEntry{Generation: genC, CommittedAt: time.Date(2026, 11, 29, 13, 10, 0, 5, time.UTC), Rows: 37000},
	)
	p.HistoryTruncated = false
	return p
}

// firstPointer is validPointer as the partition's first commit, without a run id.
func firstPointer() *Pointer {
	p := validPointer()
	p.Seq, p.Parent, p.RunID = 1, "", ""
	p.History = p.History[:1]
	p.History[0].RunID = ""
	return p
}

// legacyPointer is the version 1.0 pointer of testdata/valid_pointer_1.0.json.
func legacyPointer() *Pointer {
	p := validManifest().Pointer(42)
	p.Version, p.Files, p.History, p.HistoryTruncated = Version, 0, nil, false
	return p
}

// mustEncode encodes a valid manifest or fails the test.
func mustEncode(t testing.TB, m *Manifest) []byte {
	t.Helper()
	b, err := Encode(m)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b
}

// mutateJSON decodes doc into a generic tree, lets f change it, and encodes
// it again, so tests can build documents Encode would refuse to write.
func mutateJSON(t testing.TB, doc []byte, f func(map[string]any)) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("mutateJSON: %v", err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("mutateJSON: %v", err)
	}
	return b
}

// file returns files[i] of a generic manifest tree.
func file(m map[string]any, i int) map[string]any {
	return m["files"].([]any)[i].(map[string]any)
}

// checkInvalid asserts that err reports an invalid document mentioning want.
func checkInvalid(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", want)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("error %q does not match ErrInvalid", err)
	}
	var fe *Error
	if !errors.As(err, &fe) {
		t.Errorf("error %q is not an *Error", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}

// statsManifest is validManifest with column statistics (version 1.2): the
// first file has every kind of bound, the second an empty list (recorded:
// no flat column).
func statsManifest() *Manifest {
	m := validManifest()
	m.Files[0].Columns = []ColumnStats{
		{Name: "id", Size: 1000, Values: 25000, Nulls: 0, Type: BoundLong, Min: "-5", Max: "99"},
		{Name: "name", Size: 2000, Values: 25000, Nulls: 3, Type: BoundString, Min: "Ann", Max: "Zoë"},
		{Name: "ok", Size: 10, Values: 25000, Nulls: -1, Type: BoundBoolean, Min: "false", Max: "true"},
		{Name: "day", Size: 10, Values: 25000, Nulls: 0, Type: BoundDate, Min: "20000"},
		{Name: "ts", Size: 10, Values: 25000, Nulls: 25000},
		{Name: "t96", Size: 10, Values: 25000, Nulls: 7},
	}
	m.Files[1].Columns = []ColumnStats{}
	return m
}
