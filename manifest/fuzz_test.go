package manifest

import (
	"bytes"
	"errors"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// seedManifests returns valid and tampered manifest documents: the seeds of
// FuzzDecode (both as f.Add calls and as files in testdata/fuzz).
func seedManifests(t testing.TB) map[string][]byte {
	golden := mustEncode(t, validManifest())
	g := string(golden)
	rollback := validManifest()
	rollback.DataGeneration, rollback.RollbackOf = genC, genC
	withStats := statsManifest()
	empty := validManifest()
	empty.Files, empty.Rows, empty.Bytes, empty.Schema = nil, 0, 0, ""
	head, _, _ := packedHead(t, 40, 2)
	headDoc := string(mustEncode(t, head))
	return map[string][]byte{
		"valid-head":       []byte(headDoc),
		"bad-head-1.2":     []byte(strings.Replace(headDoc, `"version": "2.0"`, `"version": "1.2"`, 1)),
		"bad-head-totals":  []byte(strings.Replace(headDoc, `"files": 32, "rows": `, `"files": 32, "rows": 9`, 1)),
		"valid":            golden,
		"valid-rollback":   mustEncode(t, rollback),
		"valid-empty":      mustEncode(t, empty),
		"valid-compact":    mutateJSON(t, golden, func(map[string]any) {}),
		"valid-stats":      mustEncode(t, withStats),
		"bad-stats-1.1":    []byte(strings.Replace(string(mustEncode(t, withStats)), `"version": "1.2"`, `"version": "1.1"`, 1)),
		"bad-stats-bounds": []byte(strings.Replace(string(mustEncode(t, withStats)), `"min": "-5"`, `"min": "500"`, 1)),
		"valid-newer-minor": mutateJSON(t, golden, func(m map[string]any) {
			m["version"] = "1.3"
			m["extra"] = map[string]any{"a": []any{1, "b", nil, true}}
			file(m, 0)["extra"] = 1.5
		}),
		"valid-escapes":     []byte(strings.Replace(g, `"part-00001.parquet"`, `"p\u0061rt-00001.parquet"`, 1)),
		"bad-traversal":     []byte(strings.Replace(g, `part-00001.parquet`, `../../other/part-00001.parquet`, 1)),
		"bad-absolute":      []byte(strings.Replace(g, `part-00001.parquet`, `/etc/passwd`, 1)),
		"bad-duplicate":     []byte(strings.Replace(g, `"rows": 37345,`, `"rows": 37345, "rows": 0,`, 1)),
		"bad-major":         []byte(strings.Replace(g, `"version": "1.0"`, `"version": "3.0"`, 1)),
		"bad-unknown":       []byte(strings.Replace(g, `"rows": 37345,`, `"rowz": 37345,`, 1)),
		"bad-truncated":     golden[:len(golden)/3],
		"bad-trailing":      append(append([]byte{}, golden...), golden...),
		"bad-totals":        []byte(strings.Replace(g, `"bytes": 1572864`, `"bytes": 1572865`, 1)),
		"bad-checksum":      []byte(strings.Replace(g, "sha256:9f86", "sha256:9F86", 1)),
		"bad-generation":    []byte(strings.Replace(g, genA, strings.ToUpper(genA), 1)),
		"bad-pointer":       mustEncodePointer(t, validPointer()),
		"bad-null":          []byte(strings.Replace(g, `"writer": "pswap/0.1.0"`, `"writer": null`, 1)),
		"bad-deep":          []byte(`{"a":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + "}"),
		"valid-time-offset": []byte(strings.Replace(g, "14:02:03.12Z", "00:00:00+23:59", 1)),
	}
}

func seedPointers(t testing.TB) map[string][]byte {
	golden := mustEncodePointer(t, validPointer())
	g := string(golden)
	return map[string][]byte{
		"valid":          golden,
		"valid-first":    mustEncodePointer(t, firstPointer()),
		"valid-legacy":   mustEncodePointer(t, legacyPointer()),
		"valid-newer":    []byte(strings.Replace(g, `"version": "1.1",`, `"version": "1.9", "lease": {"until": 5},`, 1)),
		"bad-seq":        []byte(strings.Replace(g, `"seq": 42`, `"seq": 0`, 1)),
		"bad-seq-float":  []byte(strings.Replace(g, `"seq": 42`, `"seq": 4.2e1`, 1)),
		"bad-manifest":   mustEncode(t, validManifest()),
		"bad-duplicate":  []byte(strings.Replace(g, `"seq": 42,`, `"seq": 42, "seq": 41,`, 1)),
		"bad-major":      []byte(strings.Replace(g, `"version": "1.1"`, `"version": "10.0"`, 1)),
		"bad-history":    []byte(strings.Replace(g, `"rows": 37000}`, `"rows": -1}`, 1)),
		"bad-truncated":  golden[:len(golden)-3],
		"bad-generation": []byte(strings.Replace(g, genA, "../../x", 1)),
	}
}

func mustEncodePointer(t testing.TB, p *Pointer) []byte {
	t.Helper()
	b, err := EncodePointer(p)
	if err != nil {
		t.Fatalf("EncodePointer: %v", err)
	}
	return b
}

// TestFuzzCorpus checks that the seed corpus in testdata/fuzz holds the
// seeds (rewrite it with -update) and that each seed decodes as its name
// says ("valid-*" decode, "bad-*" fail).
func TestFuzzCorpus(t *testing.T) {
	for target, seeds := range map[string]map[string][]byte{
		"FuzzDecode":        seedManifests(t),
		"FuzzDecodePointer": seedPointers(t),
	} {
		dir := filepath.Join("testdata", "fuzz", target)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range seeds {
				content := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name, data := range seeds {
			stored, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("seed corpus file missing (run with -update): %v", err)
				continue
			}
			if want := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"; string(stored) != want {
				t.Errorf("%s/%s is stale (run with -update)", target, name)
			}
			if target == "FuzzDecode" {
				_, err = Decode(data)
			} else {
				_, err = DecodePointer(data)
			}
			if valid := strings.HasPrefix(name, "valid"); valid != (err == nil) {
				t.Errorf("%s seed %s: err = %v", target, name, err)
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, seed := range seedManifests(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			if m != nil {
				t.Fatal("Decode returned both a manifest and an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid: %v", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("decoded manifest does not validate: %v", err)
		}
		for _, fl := range m.Files {
			p := path.Join("gen", m.DataGen(), fl.Path)
			if !strings.HasPrefix(p, "gen/"+m.DataGen()+"/") || path.Clean(p) != p {
				t.Fatalf("file %q escapes its generation prefix", fl.Path)
			}
		}
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("a decoded manifest does not encode: %v", err)
		}
		m2, err := Decode(b)
		if err != nil {
			t.Fatalf("an encoded manifest does not decode: %v\n%s", err, b)
		}
		m.Version = m.EncodedVersion() // re-encoding writes our version
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the manifest:\n%+v\n%+v", m, m2)
		}
		if b2, err := Encode(m2); err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not canonical (err %v):\n%s\n%s", err, b, b2)
		}
	})
}

func FuzzDecodePointer(f *testing.F) {
	for _, seed := range seedPointers(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePointer(data)
		if err != nil {
			if p != nil {
				t.Fatal("DecodePointer returned both a pointer and an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid: %v", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("decoded pointer does not validate: %v", err)
		}
		b, err := EncodePointer(p)
		if err != nil {
			t.Fatalf("a decoded pointer does not encode: %v", err)
		}
		p2, err := DecodePointer(b)
		if err != nil {
			t.Fatalf("an encoded pointer does not decode: %v\n%s", err, b)
		}
		p.Version = Version // what EncodePointer writes
		if p.HasHistory() {
			p.Version = PointerVersion
		}
		if !reflect.DeepEqual(p, p2) {
			t.Fatalf("round trip changed the pointer:\n%+v\n%+v", p, p2)
		}
	})
}

// FuzzValidateFilePath checks the safety property of file paths: an
// accepted path, joined to a generation prefix, stays inside it, is already
// clean, and is a valid store key.
func FuzzValidateFilePath(f *testing.F) {
	for _, s := range []string{"part-0.parquet", "a/b/c", "../x", "a/./b", "/x", `a\b`, "a//b", "_x", ".x", "a/.b", "é/ü", "a\x00b", "x.pswap-tmp"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if ValidateFilePath(p) != nil {
			return
		}
		const prefix = "t/dt=1/_pswap/gen/g/"
		joined := prefix + p
		if path.Clean(joined) != joined || !strings.HasPrefix(path.Clean(joined), prefix) {
			t.Fatalf("accepted path %q is not confined", p)
		}
		if strings.ContainsAny(p, "\\\x00") {
			t.Fatalf("accepted path %q has a backslash or NUL", p)
		}
	})
}
