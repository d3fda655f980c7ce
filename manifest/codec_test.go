package manifest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/testing/race"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		file   string
		encode func() ([]byte, error)
		decode func([]byte) (any, error)
		want   any
	}{
		{
			file:   "valid_manifest.json",
			encode: func() ([]byte, error) { return Encode(validManifest()) },
			decode: func(b []byte) (any, error) { return Decode(b) },
			want:   validManifest(),
		},
		{
			file:   "valid_pointer.json",
			encode: func() ([]byte, error) { return EncodePointer(validPointer()) },
			decode: func(b []byte) (any, error) { return DecodePointer(b) },
			want:   validPointer(),
		},
		{
			// A pointer written by a reader of format 1.0 (no history) still
			// decodes, and encodes back to the same bytes.
			file:   "valid_pointer_1.0.json",
			encode: func() ([]byte, error) { return EncodePointer(legacyPointer()) },
			decode: func(b []byte) (any, error) { return DecodePointer(b) },
			want:   legacyPointer(),
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			got, err := tc.encode()
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, golden) {
				t.Errorf("encoding differs from %s (run with -update if the change is intended):\n%s", path, got)
			}
			dec, err := tc.decode(golden)
			if err != nil {
				t.Fatalf("decode %s: %v", path, err)
			}
			if !reflect.DeepEqual(dec, tc.want) {
				t.Errorf("decode %s:\n got %+v\nwant %+v", path, dec, tc.want)
			}
		})
	}
}

func TestEncodeCanonical(t *testing.T) {
	m := validManifest()
	b := mustEncode(t, m)
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Errorf("no trailing newline: %q", b[len(b)-5:])
	}
	// Format, Version and time zones of the input do not matter.
	m2 := validManifest()
	m2.Format, m2.Version = "", "1.7"
	ny := time.FixedZone("EST", -5*3600)
	m2.CreatedAt = m2.CreatedAt.In(ny)
	m2.CommittedAt = m2.CommittedAt.In(ny)
	if b2 := mustEncode(t, m2); !bytes.Equal(b, b2) {
		t.Errorf("encoding depends on format/version/zone:\n%s\n%s", b, b2)
	}
	// Encode does not modify its argument.
	if m2.Version != "1.7" || m2.CreatedAt.Location() != ny {
		t.Errorf("Encode modified its argument: %+v", m2)
	}
	// Characters HTML escaping would mangle are written as they are.
	m3 := validManifest()
	m3.Schema = "a<b>&c"
	if b3 := mustEncode(t, m3); !bytes.Contains(b3, []byte(`"a<b>&c"`)) {
		t.Errorf("schema escaped: %s", b3)
	}
	// Headline fields come before the (possibly long) file list.
	if i, j := bytes.Index(b, []byte(`"content_checksum"`)), bytes.Index(b, []byte(`"files"`)); i < 0 || j < i {
		t.Errorf("files not last:\n%s", b)
	}
}

func TestRoundTrip(t *testing.T) {
	monotonic := time.Now() // carries a monotonic reading and a local zone
	cases := map[string]func(*Manifest){
		"golden":    func(*Manifest) {},
		"minimal":   func(m *Manifest) { m.Parent, m.RunID, m.Schema, m.Writer = "", "", "", "" },
		"no files":  func(m *Manifest) { m.Files, m.Rows, m.Bytes = nil, 0, 0 },
		"rollback":  func(m *Manifest) { m.DataGeneration, m.RollbackOf = genC, genC },
		"data gen":  func(m *Manifest) { m.DataGeneration = genA },
		"zero rows": func(m *Manifest) { m.Files[0].Rows, m.Files[1].Rows, m.Rows = 0, 0, 0 },
		"nested path": func(m *Manifest) {
			m.Files[1].Path = "bucket=3/part-1.parquet"
		},
		"unicode": func(m *Manifest) {
			m.Files[0].Path = "données/ünïcödé 文件.parquet"
			m.RunID = `run "7" \ ü`
			m.Schema = "line1\n\tline2 \u2028"
		},
		"max file size": func(m *Manifest) {
			m.Files = m.Files[:1]
			m.Files[0].Size = MaxFileSize
			m.Bytes, m.Rows = MaxFileSize, m.Files[0].Rows
		},
		"now": func(m *Manifest) { m.CreatedAt, m.CommittedAt = monotonic, monotonic.Add(time.Second) },
		"early": func(m *Manifest) {
			m.CreatedAt = time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			m := validManifest()
			mutate(m)
			b := mustEncode(t, m)
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, b)
			}
			want := *m
			want.CreatedAt, want.CommittedAt = m.CreatedAt.UTC(), m.CommittedAt.UTC()
			if want.Files == nil {
				want.Files = []File{}
			}
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, &want)
			}
			if b2 := mustEncode(t, got); !bytes.Equal(b, b2) {
				t.Errorf("re-encoding differs:\n%s\n%s", b, b2)
			}
		})
	}
}

func TestPointerRoundTrip(t *testing.T) {
	for name, mutate := range map[string]func(*Pointer){
		"golden": func(*Pointer) {},
		"first":  func(p *Pointer) { *p = *firstPointer() },
		"legacy": func(p *Pointer) { *p = *legacyPointer() },
		"truncated": func(p *Pointer) {
			p.History, p.HistoryTruncated = p.History[:1], true
		},
		"empty":   func(p *Pointer) { p.Rows, p.Bytes, p.Files, p.History[0].Rows = 0, 0, 0, 0 },
		"big seq": func(p *Pointer) { p.Seq = 1<<63 - 1 },
	} {
		t.Run(name, func(t *testing.T) {
			p := validPointer()
			mutate(p)
			b, err := EncodePointer(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodePointer(b)
			if err != nil {
				t.Fatalf("DecodePointer: %v\n%s", err, b)
			}
			if !reflect.DeepEqual(got, p) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, p)
			}
		})
	}
}

func TestManifestPointer(t *testing.T) {
	m := validManifest()
	p := m.Pointer(7)
	if p.Generation != m.Generation || p.Partition != m.Partition || p.Parent != m.Parent ||
		p.RunID != m.RunID || p.Rows != m.Rows || p.Bytes != m.Bytes ||
		p.ContentChecksum != m.ContentChecksum || !p.CommittedAt.Equal(m.CommittedAt) || p.Seq != 7 {
		t.Errorf("Pointer(7) = %+v does not reflect %+v", p, m)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("pointer of a valid manifest is invalid: %v", err)
	}
	if err := m.Pointer(0).Validate(); err == nil {
		t.Error("Pointer(0) validated")
	}
}

func TestDataGen(t *testing.T) {
	m := validManifest()
	if got := m.DataGen(); got != m.Generation {
		t.Errorf("DataGen() = %q, want the generation %q", got, m.Generation)
	}
	m.DataGeneration = genC
	if got := m.DataGen(); got != genC {
		t.Errorf("DataGen() = %q, want %q", got, genC)
	}
}

func TestContentAdd(t *testing.T) {
	var c Content
	c.Add(File{Path: "a.parquet", Size: 10, Rows: 3, Checksum: sumA})
	c.Add(File{Path: "b.parquet", Size: 5, Rows: 4, Checksum: sumB})
	c.ContentChecksum = sumC
	if c.Rows != 7 || c.Bytes != 15 || len(c.Files) != 2 {
		t.Errorf("after two Adds: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	c.Files[1].Rows++
	checkInvalid(t, c.Validate(), `rows 7: does not equal the sum of files[].rows (8)`)
}

// TestDecodeRejects covers every rule of the format, one broken field at a
// time, by editing the golden document.
func TestDecodeRejects(t *testing.T) {
	golden := mustEncode(t, validManifest())
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	setFile := func(i int, k string, v any) func(map[string]any) {
		return func(m map[string]any) { file(m, i)[k] = v }
	}
	cases := []struct {
		name        string
		mutate      func(map[string]any)
		want        string
		unsupported bool
	}{
		// format and version
		{"format missing", del("format"), "manifest: format: missing", false},
		{"format wrong", set("format", "pswap-manifesto"), `format "pswap-manifesto": want "pswap-manifest"`, false},
		{"format pointer", set("format", "pswap-pointer"), "this is a pointer, not a manifest", false},
		{"format not string", set("format", 1), "format: must be a string", false},
		{"version missing", del("version"), "version: missing", false},
		{"version number", set("version", 1.0), "version: must be a string", false},
		{"version no minor", set("version", "1"), `version "1": must have the form "major.minor"`, false},
		{"version leading zero", set("version", "01.0"), `must have the form "major.minor"`, false},
		{"version sign", set("version", "+1.0"), `must have the form "major.minor"`, false},
		{"version three parts", set("version", "1.0.0"), `must have the form "major.minor"`, false},
		{"version major 3", set("version", "3.0"), `version "3.0": unsupported major version 3`, true},
		{"version major 0", set("version", "0.9"), `unsupported major version 0`, true},
		{"unknown field", set("color", "red"), `manifest: color: unknown field`, false},
		{"case variant field", set("Partition", "dt=x"), `manifest: Partition: unknown field`, false},
		{"unknown file field", setFile(1, "md5", "x"), `manifest: files[1].md5: unknown field`, false},
		// required fields
		{"partition missing", del("partition"), "partition: missing", false},
		{"partition empty", set("partition", ""), "partition: missing", false},
		{"partition null", set("partition", nil), "partition: null is not allowed", false},
		{"partition invalid", set("partition", "dt=2026/../x"), "manifest: partition: ", false},
		{"partition not canonical", set("partition", "/dt=2026-11-29"), "manifest: partition: ", false},
		{"generation missing", del("generation"), "generation: missing", false},
		{"created_at missing", del("created_at"), "created_at: missing", false},
		{"committed_at missing", del("committed_at"), "committed_at: missing", false},
		{"writer missing", del("writer"), "writer: missing", false},
		{"rows missing", del("rows"), "manifest: rows: missing", false},
		{"bytes missing", del("bytes"), "manifest: bytes: missing", false},
		{"files missing", del("files"), "manifest: files: missing", false},
		{"content checksum missing", del("content_checksum"), "content_checksum: missing", false},
		{"files empty with rows", set("files", []any{}), "files: empty, but rows is 37345", false},
		{"files null", set("files", nil), "files: null is not allowed", false},
		{"files object", set("files", map[string]any{}), "files: must be an array", false},
		{"file not object", set("files", []any{"part-0.parquet"}), "files[0]: must be an object", false},
		{"file path missing", func(m map[string]any) { delete(file(m, 0), "path") }, "files[0].path: missing", false},
		{"file size missing", func(m map[string]any) { delete(file(m, 1), "size") }, "files[1].size: missing", false},
		{"file checksum missing", func(m map[string]any) { delete(file(m, 1), "checksum") }, "files[1].checksum: missing", false},
		// file paths
		{"path dotdot", setFile(1, "path", "../x"), `manifest: files[1].path "../x": escapes the generation prefix`, false},
		{"path inner dotdot", setFile(1, "path", "a/../../x"), `escapes the generation prefix`, false},
		{"path dot", setFile(1, "path", "./x"), `has a "." segment`, false},
		{"path absolute", setFile(1, "path", "/etc/passwd"), `is absolute`, false},
		{"path empty", setFile(1, "path", ""), `files[1].path "": empty`, false},
		{"path empty segment", setFile(1, "path", "a//b"), `has an empty segment`, false},
		{"path trailing slash", setFile(1, "path", "a/"), `has an empty segment`, false},
		{"path backslash", setFile(1, "path", `..\x`), `contains a backslash`, false},
		{"path control", setFile(1, "path", "a\nb"), `contains the control character U+000A`, false},
		{"path C1 control", setFile(1, "path", "a\u0085b"), `contains the control character U+0085`, false},
		{"path DEL", setFile(1, "path", "a\x7fb"), `contains the control character U+007F`, false},
		{"path underscore", setFile(1, "path", "_SUCCESS"), `segment "_SUCCESS" starts with "_"`, false},
		{"path dot file", setFile(1, "path", "x/.hidden"), `segment ".hidden" starts with "."`, false},
		{"path too long", setFile(1, "path", strings.Repeat("a", 513)), `longer than 512 bytes`, false},
		{"path reserved", setFile(1, "path", "x.pswap-tmp"), `reserved name`, false},
		{"path duplicate", setFile(1, "path", "part-00000.parquet"), `files[1].path "part-00000.parquet": duplicates files[0].path`, false},
		{"path duplicate case", setFile(1, "path", "PART-00000.parquet"), `duplicates files[0].path`, false},
		{"path under file", setFile(1, "path", "part-00000.parquet/x"), `lies inside files[0].path`, false},
		{"path not string", setFile(1, "path", 5), `files[1].path: must be a string`, false},
		// sizes, rows, totals
		{"size negative", setFile(0, "size", -1), `files[0].size -1: negative`, false},
		{"size too big", setFile(0, "size", MaxFileSize+1), `larger than the 5 TiB object limit`, false},
		{"size float", setFile(0, "size", 1.5), `files[0].size: must be an integer`, false},
		{"size string", setFile(0, "size", "10"), `files[0].size: must be an integer`, false},
		{"size huge", setFile(0, "size", json_number("100000000000000000000")), `must be an integer in the 64-bit range`, false},
		{"file rows negative", setFile(0, "rows", -5), `files[0].rows -5: negative`, false},
		{"rows overflow", func(m map[string]any) {
			file(m, 0)["rows"] = int64(1<<63 - 1)
			file(m, 1)["rows"] = 1
		}, `total rows overflow`, false},
		{"rows negative", set("rows", -1), `manifest: rows -1: negative`, false},
		{"bytes negative", set("bytes", -1), `manifest: bytes -1: negative`, false},
		{"rows mismatch", set("rows", 37346), `rows 37346: does not equal the sum of files[].rows (37345)`, false},
		{"bytes mismatch", set("bytes", 1), `bytes 1: does not equal the sum of files[].size (1572864)`, false},
		// checksums
		{"checksum md5", setFile(0, "checksum", "md5:9e107d9d372bb6826bd81d3542a419d6"), `must start with "sha256:"`, false},
		{"checksum short", setFile(0, "checksum", "sha256:abcd"), `has 4 hex digits, want 64`, false},
		{"checksum upper", setFile(0, "checksum", strings.ToUpper(sumA[:7])+sumA[7:]), `must start with "sha256:"`, false},
		{"checksum upper hex", setFile(0, "checksum", "sha256:"+strings.ToUpper(sumA[7:])), `digest is not lowercase hex`, false},
		{"checksum empty", setFile(0, "checksum", ""), `files[0].checksum "": must start`, false},
		{"content checksum no algo", set("content_checksum", ":0123456789abcdef"), `algorithm name must be 1 to 32 characters`, false},
		{"content checksum long algo", set("content_checksum", strings.Repeat("a", 33)+":0123456789abcdef"), `algorithm name must be 1 to 32`, false},
		{"content checksum algo chars", set("content_checksum", "XXH:0123456789abcdef"), `algorithm name must use only [a-z0-9-]`, false},
		{"content checksum no colon", set("content_checksum", "0123456789abcdef"), `must have the form "<algo>:<hex>"`, false},
		{"content checksum short", set("content_checksum", "x:0123456789abcd"), `has 14 hex digits`, false},
		{"content checksum long", set("content_checksum", "x:"+strings.Repeat("ab", 65)), `has 130 hex digits`, false},
		{"content checksum odd", set("content_checksum", "x:0123456789abcdef0"), `has 17 hex digits`, false},
		{"content checksum not hex", set("content_checksum", "x:0123456789abcdeg"), `digest is not lowercase hex`, false},
		{"content checksum empty", set("content_checksum", ""), `content_checksum "": empty`, false},
		// generation ids
		{"generation upper", set("generation", strings.ToUpper(genA)), `not in canonical lowercase form`, false},
		{"generation v4", set("generation", "0193a1b2-3c4d-4e5f-8a6b-7c8d9e0f1a2b"), `UUID version 4, want 7`, false},
		{"generation braces", set("generation", "{"+genA+"}"), `not a UUID in canonical 8-4-4-4-12 form`, false},
		{"generation no dashes", set("generation", strings.ReplaceAll(genA, "-", "")), `canonical 8-4-4-4-12 form`, false},
		{"generation junk", set("generation", "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2x"), `not a UUID`, false},
		{"generation variant", set("generation", "0193a1b2-3c4d-7e5f-ca6b-7c8d9e0f1a2b"), `not an RFC 9562 variant`, false},
		{"generation path", set("generation", "../../../../etc/passwd"), `generation "../../../../etc/passwd": not a UUID`, false},
		{"data generation", set("data_generation", "x"), `data_generation "x": not a UUID`, false},
		{"parent", set("parent", "x"), `parent "x": not a UUID`, false},
		{"parent self", set("parent", genA), `parent "` + genA + `": equals the generation itself`, false},
		{"rollback_of", set("rollback_of", "x"), `rollback_of "x": not a UUID`, false},
		{"rollback_of self", set("rollback_of", genA), `rollback_of "` + genA + `": equals the generation`, false},
		// free text
		{"run id control", set("run_id", "a\tb"), `run_id "a\tb": contains the non-printable character U+0009`, false},
		{"run id bidi", set("run_id", "a\u202eb"), `non-printable character U+202E`, false},
		{"run id long", set("run_id", strings.Repeat("r", 257)), `longer than 256 bytes`, false},
		{"writer control", set("writer", "pswap\x00"), `writer "pswap\x00": contains the non-printable`, false},
		{"schema control", set("schema", "a\rb"), `schema "a\rb": contains the control character U+000D`, false},
		// times
		{"time zero", set("created_at", "0001-01-01T00:00:00Z"), `created_at: missing (zero time)`, false},
		{"time year 0 in UTC", set("created_at", "0001-01-01T00:00:00+01:00"), `year 0 is outside`, false},
		{"time not RFC 3339", set("committed_at", "2026-11-29 14:05:07"), `committed_at: must be an RFC 3339 time string`, false},
		{"time number", set("committed_at", 1764424800), `committed_at: must be an RFC 3339 time string`, false},
		{"time empty", set("committed_at", ""), `committed_at: must be an RFC 3339`, false},
		{"time no zone", set("committed_at", "2026-11-29T14:05:07"), `must be an RFC 3339`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := mutateJSON(t, golden, tc.mutate)
			m, err := Decode(doc)
			if m != nil {
				t.Errorf("Decode returned a manifest with an error")
			}
			checkInvalid(t, err, tc.want)
			if got := errors.Is(err, ErrUnsupportedVersion); got != tc.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupportedVersion) = %v, want %v (err: %v)", got, tc.unsupported, err)
			}
		})
	}
}

// json_number builds a literal JSON number that float64 cannot carry.
type json_number string

func (n json_number) MarshalJSON() ([]byte, error) { return []byte(n), nil }

func TestDecodeRejectsSyntax(t *testing.T) {
	golden := mustEncode(t, validManifest())
	g := string(golden)
	cases := []struct {
		name, doc, want string
	}{
		{"empty", "", "truncated JSON"},
		{"whitespace", "  \n", "truncated JSON"},
		{"truncated", g[:len(g)/2], "truncated JSON"},
		{"truncated one byte", g[:len(g)-2], "truncated JSON"},
		{"syntax", strings.Replace(g, `"rows": 37345`, `"rows": 37345,,`, 1), "invalid JSON at byte"},
		{"trailing object", g + "{}", "trailing data after the JSON object"},
		{"trailing garbage", g + "x", "trailing data after the JSON object"},
		{"two documents", strings.TrimSpace(g) + g, "trailing data"},
		{"array", "[" + g + "]", "document: not a JSON object"},
		{"string", `"pswap-manifest"`, "document: not a JSON object"},
		{"null", `null`, "document: not a JSON object"},
		{"invalid UTF-8", strings.Replace(g, "sales", "sa\xffles", 1), "document: not valid UTF-8"},
		{"duplicate key", strings.Replace(g, `"rows": 37345,`, `"rows": 37345, "rows": 1,`, 1), "manifest: rows: duplicate key"},
		{"duplicate file key", strings.Replace(g, `"size": 524288,`, `"size": 524288, "size": 1,`, 1), "files[1].size: duplicate key"},
		{"duplicate key via escape", strings.Replace(g, `"rows": 37345,`, `"rows": 37345, "r\u006fws": 1,`, 1), "rows: duplicate key"},
		{"deep nesting", strings.Replace(g, `"rows": 37345,`, `"rows": 37345, "x": `+strings.Repeat("[", 40)+strings.Repeat("]", 40)+",", 1), "nested more than 32 levels"},
		{"very deep nesting", strings.Repeat("[", 100000), "document: not a JSON object"},
		{"very deep object", `{"a":` + strings.Repeat(`{"a":`, 100000), "nested more than 32 levels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.doc))
			checkInvalid(t, err, tc.want)
		})
	}
}

func TestDecodeTooLarge(t *testing.T) {
	// Padding with white space keeps the document otherwise valid, which
	// shows that the size limit alone rejects it.
	golden := mustEncode(t, validManifest())
	doc := append(bytes.Repeat([]byte(" "), MaxDocumentBytes+1-len(golden)), golden...)
	_, err := Decode(doc)
	checkInvalid(t, err, fmt.Sprintf("document: %d bytes, more than the limit of %d", len(doc), MaxDocumentBytes))
	if _, err := DecodePointer(doc); err == nil {
		t.Error("DecodePointer accepted an oversized document")
	}
	if testing.Short() || race.Enabled {
		return
	}
	if _, err := Decode(doc[1:]); err != nil {
		t.Errorf("a document of exactly the limit was rejected: %v", err)
	}
}

func TestForwardCompatibility(t *testing.T) {
	golden := mustEncode(t, validManifest())
	newer := mutateJSON(t, golden, func(m map[string]any) {
		m["version"] = "1.3"
		m["compression"] = map[string]any{"codec": "zstd", "level": []any{1, 2}}
		file(m, 0)["min_dt"] = "2026-11-29"
	})
	m, err := Decode(newer)
	if err != nil {
		t.Fatalf("a document of a newer minor version with extra fields was rejected: %v", err)
	}
	if m.Version != "1.3" {
		t.Errorf("Version = %q, want the document's 1.3", m.Version)
	}
	m.Version = Version
	if !reflect.DeepEqual(m, validManifest()) {
		t.Errorf("known fields of a newer document changed:\n got %+v\nwant %+v", m, validManifest())
	}
	// Re-encoding writes our version and drops the unknown fields.
	b := mustEncode(t, m)
	if !bytes.Equal(b, golden) {
		t.Errorf("re-encoded newer document differs from the golden one:\n%s", b)
	}
	// The same extra fields in a document of our version are rejected, and a
	// newer minor version still has to satisfy every rule for known fields.
	same := mutateJSON(t, newer, func(m map[string]any) { m["version"] = Version })
	_, err = Decode(same)
	checkInvalid(t, err, "manifest: compression: unknown field")
	broken := mutateJSON(t, newer, func(m map[string]any) { file(m, 0)["path"] = "../x" })
	_, err = Decode(broken)
	checkInvalid(t, err, "escapes the generation prefix")
	// Lower minor versions than ours and a high one parse.
	for _, v := range []string{"1.0", "1.1", "1.2", "1.999999999"} {
		if _, err := Decode(mutateJSON(t, golden, func(m map[string]any) { m["version"] = v })); err != nil {
			t.Errorf("version %s: %v", v, err)
		}
	}
}

func TestDecodePointerRejects(t *testing.T) {
	golden, err := EncodePointer(validPointer())
	if err != nil {
		t.Fatal(err)
	}
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	cases := []struct {
		name        string
		mutate      func(map[string]any)
		want        string
		unsupported bool
	}{
		{"format manifest", set("format", "pswap-manifest"), "pointer: format \"pswap-manifest\": this is a manifest, not a pointer", false},
		{"format wrong", set("format", "x"), `want "pswap-pointer"`, false},
		{"version major", set("version", "3.1"), "unsupported major version 3", true},
		{"version missing", del("version"), "pointer: version: missing", false},
		{"unknown field", set("filez", []any{}), "pointer: filez: unknown field", false},
		{"files missing", del("files"), "pointer: files: missing", false},
		{"files negative", set("files", -1), "pointer: files: must be between 0", false},
		{"history missing", del("history"), "pointer: history: missing", false},
		{"history empty", set("history", []any{}), "pointer: history: empty", false},
		{"history not array", set("history", 3), "pointer: history: must be an array", false},
		{"history truncated string", set("history_truncated", "yes"), "pointer: history_truncated: must be true or false", false},
		{"history 1.0 fields", set("version", "1.0"), "pointer: files: unknown field (version", false},
		{"history entry", func(m map[string]any) { m["history"].([]any)[1].(map[string]any)["generation"] = "x" }, `pointer: history[1].generation "x": not a UUID`, false},
		{"history entry unknown", func(m map[string]any) { m["history"].([]any)[2].(map[string]any)["lease"] = 1 }, `pointer: history[2].lease: unknown field`, false},
		{"history entry rows", func(m map[string]any) { m["history"].([]any)[2].(map[string]any)["rows"] = -4 }, `pointer: history[2].rows -4: negative`, false},
		{"history entry dup", func(m map[string]any) {
			h := m["history"].([]any)
			h[2].(map[string]any)["generation"] = h[1].(map[string]any)["generation"]
		}, `duplicates history[1].generation`, false},
		{"history not current", func(m map[string]any) { m["generation"] = genC; m["history"] = m["history"].([]any)[:2] }, `pointer: history[0].generation "` + genA + `": is not the current generation`, false},
		{"history run differs", func(m map[string]any) { m["history"].([]any)[0].(map[string]any)["run_id"] = "other" }, `pointer: history[0].run_id "other": differs from run_id`, false},
		{"history rows differ", func(m map[string]any) { m["history"].([]any)[0].(map[string]any)["rows"] = 1 }, `pointer: history[0].rows 1: differs from rows`, false},
		{"history not parent", func(m map[string]any) { m["parent"] = genC }, `pointer: history[1].generation "` + genB + `": is not the parent`, false},
		{"history too long", func(m map[string]any) {
			h := make([]any, MaxHistory+1)
			for i := range h {
				h[i] = m["history"].([]any)[0]
			}
			m["history"] = h
		}, `pointer: history: 101 entries, at most 100 allowed`, false},
		{"history ends early", func(m map[string]any) { m["history"] = m["history"].([]any)[:1] }, `pointer: history: ends at the current generation`, false},
		{"partition missing", del("partition"), "pointer: partition: missing", false},
		{"partition invalid", set("partition", "dt=1/../x"), "pointer: partition: ", false},
		{"generation missing", del("generation"), "pointer: generation: missing", false},
		{"generation invalid", set("generation", "x"), `pointer: generation "x": not a UUID`, false},
		{"seq missing", del("seq"), "pointer: seq: missing", false},
		{"seq zero", set("seq", 0), "pointer: seq 0: must be at least 1", false},
		{"seq negative", set("seq", -3), "pointer: seq -3: must be at least 1", false},
		{"seq float", set("seq", 1.5), "pointer: seq: must be an integer", false},
		{"parent invalid", set("parent", "x"), `pointer: parent "x": not a UUID`, false},
		{"parent self", set("parent", genA), "equals the generation itself", false},
		{"run id", set("run_id", "\x1b[31m"), `pointer: run_id "\x1b[31m": contains the non-printable`, false},
		{"rows negative", set("rows", -1), "pointer: rows -1: negative", false},
		{"bytes negative", set("bytes", -1), "pointer: bytes -1: negative", false},
		{"rows missing", del("rows"), "pointer: rows: missing", false},
		{"checksum", set("content_checksum", "x"), `pointer: content_checksum "x": must have the form`, false},
		{"checksum missing", del("content_checksum"), "pointer: content_checksum: missing", false},
		{"committed_at missing", del("committed_at"), "pointer: committed_at: missing", false},
		{"committed_at zero", set("committed_at", "0001-01-01T00:00:00Z"), "pointer: committed_at: missing (zero time)", false},
		{"committed_at null", set("committed_at", nil), "pointer: committed_at: null is not allowed", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := DecodePointer(mutateJSON(t, golden, tc.mutate))
			if p != nil {
				t.Error("DecodePointer returned a pointer with an error")
			}
			checkInvalid(t, err, tc.want)
			if got := errors.Is(err, ErrUnsupportedVersion); got != tc.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupportedVersion) = %v, want %v", got, tc.unsupported)
			}
		})
	}
	for name, doc := range map[string]string{
		"truncated": string(golden[:40]),
		"trailing":  string(golden) + "[]",
		"duplicate": strings.Replace(string(golden), `"seq": 42,`, `"seq": 42, "seq": 43,`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodePointer([]byte(doc))
			checkInvalid(t, err, "pointer: ")
		})
	}
}

// TestValidate checks that Validate and Encode agree and reject what Decode
// rejects, for values built in memory.
func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Manifest)
		want   string
	}{
		{"valid", func(*Manifest) {}, ""},
		{"empty format and version", func(m *Manifest) { m.Format, m.Version = "", "" }, ""},
		{"newer minor", func(m *Manifest) { m.Version = "1.4" }, ""},
		{"wrong format", func(m *Manifest) { m.Format = FormatPointer }, `format "pswap-pointer": want "pswap-manifest"`},
		{"bad version", func(m *Manifest) { m.Version = "v1" }, `version "v1": must have the form`},
		{"major version", func(m *Manifest) { m.Version = "3.0" }, `unsupported major version 3`},
		{"no partition", func(m *Manifest) { m.Partition = "" }, "partition: missing"},
		{"no generation", func(m *Manifest) { m.Generation = "" }, "generation: missing"},
		{"zero created", func(m *Manifest) { m.CreatedAt = time.Time{} }, "created_at: missing"},
		{"zero committed", func(m *Manifest) { m.CommittedAt = time.Time{} }, "committed_at: missing"},
		{"far future", func(m *Manifest) { m.CommittedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "year 10000 is outside"},
		{"too many files", func(m *Manifest) {
			m.Files = make([]File, MaxFiles+1)
		}, "100001 files, at most 100000 allowed"},
		{"path", func(m *Manifest) { m.Files[1].Path = "../x" }, `manifest: files[1].path "../x": escapes the generation prefix`},
		{"invalid UTF-8 path", func(m *Manifest) { m.Files[1].Path = "a\xffb" }, `not valid UTF-8`},
		{"invalid UTF-8 run id", func(m *Manifest) { m.RunID = "a\xffb" }, `run_id "a\xffb": not valid UTF-8`},
		{"invalid UTF-8 schema", func(m *Manifest) { m.Schema = "a\xffb" }, `not valid UTF-8`},
		{"huge schema", func(m *Manifest) { m.Schema = strings.Repeat("s", MaxSchemaBytes+1) }, `schema "sss`},
		{"long writer", func(m *Manifest) { m.Writer = strings.Repeat("w", 257) }, `writer "www`},
		{"rows without files", func(m *Manifest) { m.Files = nil; m.Bytes = 0 }, "files: empty, but rows is 37345"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validManifest()
			tc.mutate(m)
			verr := m.Validate()
			_, eerr := Encode(m)
			if tc.want == "" {
				if verr != nil || eerr != nil {
					t.Fatalf("Validate: %v, Encode: %v; want success", verr, eerr)
				}
				return
			}
			checkInvalid(t, verr, tc.want)
			checkInvalid(t, eerr, tc.want)
		})
	}
	var nilManifest *Manifest
	checkInvalid(t, nilManifest.Validate(), "nil manifest")
	_, err := Encode(nil)
	checkInvalid(t, err, "nil manifest")
	var nilPointer *Pointer
	checkInvalid(t, nilPointer.Validate(), "nil pointer")
	_, err = EncodePointer(nil)
	checkInvalid(t, err, "nil pointer")
	// A valid manifest's Validate returns a true nil interface.
	if err := validManifest().Validate(); err != nil {
		t.Errorf("Validate of a valid manifest: %#v", err)
	}
}

func TestEncodeTooLarge(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("builds a 64 MiB document (skipped with -short or -race)")
	}
	// 100000 files with long paths full of quotes (each escaped to two
	// bytes) encode to more than a reader accepts: Encode must refuse.
	m := validManifest()
	m.Files = make([]File, MaxFiles)
	m.Rows, m.Bytes = 0, 0
	long := strings.Repeat(`"`, 480)
	for i := range m.Files {
		m.Files[i] = File{Path: fmt.Sprintf("%s%08d", long, i), Checksum: sumA}
	}
	_, err := Encode(m)
	checkInvalid(t, err, "more than the 67108864 bytes a reader accepts")
}

func TestManyFiles(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("encodes and decodes the largest number of files (skipped with -short or -race)")
	}
	m := validManifest()
	m.Files = nil
	m.Rows, m.Bytes = 0, 0
	for i := range MaxFiles {
		m.Add(File{Path: fmt.Sprintf("part-%06d.parquet", i), Size: int64(i), Rows: 1, Checksum: sumA})
	}
	b := mustEncode(t, m)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != MaxFiles || got.Rows != MaxFiles || got.Bytes != m.Bytes {
		t.Errorf("decoded %d files, %d rows, %d bytes", len(got.Files), got.Rows, got.Bytes)
	}
}

func TestErrorMessageClipsValue(t *testing.T) {
	m := validManifest()
	m.Files[0].Path = strings.Repeat("é", 200) + "/../x"
	err := m.Validate()
	checkInvalid(t, err, "escapes the generation prefix")
	if len(err.Error()) > 200 {
		t.Errorf("error message not clipped (%d bytes): %s", len(err.Error()), err)
	}
}

// TestLargeObjects covers duplicate detection in objects with many keys
// (where a linear search would be quadratic) in a newer-minor document.
func TestLargeObjects(t *testing.T) {
	golden := mustEncode(t, validManifest())
	var extra strings.Builder
	for i := range 50_000 {
		fmt.Fprintf(&extra, `"k%d": %d, `, i, i)
	}
	base := strings.Replace(string(golden), `"version": "1.0",`, `"version": "1.3", "x": {`+extra.String()+`"last": 0},`, 1)
	if _, err := Decode([]byte(base)); err != nil {
		t.Fatalf("many distinct keys: %v", err)
	}
	dup := strings.Replace(base, `"last": 0`, `"k49999": 0`, 1)
	_, err := Decode([]byte(dup))
	checkInvalid(t, err, "manifest: x.k49999: duplicate key")
	dup = strings.Replace(base, `"last": 0`, `"k3": 0`, 1)
	_, err = Decode([]byte(dup))
	checkInvalid(t, err, "manifest: x.k3: duplicate key")
}
