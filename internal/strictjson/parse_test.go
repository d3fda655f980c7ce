package strictjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	deep := func(n int) string { return `{"a": ` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + "}" }
	for _, c := range []struct {
		name, doc string
		lim       Limits
		want      string // "" for accepted
	}{
		{"object", `{"a": 1, "b": [1, {"c": null}]}`, Limits{}, ""},
		{"at max depth", deep(5), Limits{MaxDepth: 5}, ""},
		{"over max depth", deep(6), Limits{MaxDepth: 5}, "document: nested more than 5 levels deep"},
		{"over max depth, invalid", deep(6) + "x", Limits{MaxDepth: 5}, "document: nested more than 5 levels deep"},
		{"default depth", deep(33), Limits{}, "nested more than 32 levels deep"},
		{"size", `{"a": 1}`, Limits{MaxBytes: 7}, "document: 8 bytes, more than the limit of 7"},
		{"utf8", "{\"a\": \"\xff\"}", Limits{}, "document: not valid UTF-8"},
		{"utf8 keys", "{\"\xc0\":0,\"\xe7\":0}", Limits{}, "document: not valid UTF-8"},
		{"empty", ``, Limits{}, "document: truncated JSON"},
		{"truncated", `{"a": [1, 2`, Limits{}, "document: truncated JSON"},
		{"syntax", `{"a": 1,,}`, Limits{}, "document: invalid JSON at byte"},
		{"array", `[{}]`, Limits{}, "document: not a JSON object"},
		{"trailing", `{} {}`, Limits{}, "document: trailing data after the JSON object at byte"},
		{"duplicate", `{"a": 1, "b": {"c": [{"d": 1, "d": 2}]}}`, Limits{}, "b.c[0].d: duplicate key"},
		{"duplicate escaped", `{"a": 1, "\u0061": 2}`, Limits{}, "a: duplicate key"},
		{"duplicate, invalid", `{"a": 1, "a": 2,}`, Limits{}, "a: duplicate key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			top, p := Parse([]byte(c.doc), c.lim)
			switch {
			case c.want == "" && p != nil:
				t.Fatalf("refused: %v", p)
			case c.want == "" && top == nil:
				t.Fatal("accepted without fields")
			case c.want != "" && (p == nil || !strings.Contains(p.Error(), c.want)):
				t.Fatalf("got %v, want %q", p, c.want)
			}
		})
	}
}

func TestReader(t *testing.T) {
	top, p := Parse([]byte(`{"s": "a\"b", "n": 12, "big": 3000000000, "f": 1.5, "q": "12", "b": true, "z": null,
		"t": "2026-01-02T03:04:05+01:00", "l": [{"x": 1}, {"x": 2, "y": 3}], "ss": ["a", "b"], "o": {"k": "v"}}`), Limits{})
	if p != nil {
		t.Fatal(p)
	}
	r := NewReader(top, "1.0")
	if s, n, b := r.Str("s", true), r.Int("n", 32), r.Bool("b", true); s != `a"b` || n != 12 || !b || r.Err() != nil {
		t.Fatalf("%q %d %v %v", s, n, b, r.Err())
	}
	if tm := r.Time("t"); tm.Hour() != 2 || tm.Location().String() != "UTC" {
		t.Fatalf("time %v", tm)
	}
	if ss := r.Strings("ss", 2); len(ss) != 2 || ss[1] != "b" {
		t.Fatalf("strings %v", ss)
	}
	if o := r.Object("o", true); o == nil || o.Str("k", true) != "v" || o.Path() != "o" {
		t.Fatalf("object %v", o)
	}
	if r.Str("absent", false) != "" || !r.Null("z") || r.Has("absent") || r.Err() != nil {
		t.Fatalf("optional: %v", r.Err())
	}
	for name, c := range map[string]struct {
		read func(r *Reader)
		want string
	}{
		"missing":     {func(r *Reader) { r.Str("absent", true) }, "absent: missing"},
		"null":        {func(r *Reader) { r.Str("z", false) }, "z: null is not allowed"},
		"not string":  {func(r *Reader) { r.Str("n", true) }, "n: must be a string"},
		"32-bit":      {func(r *Reader) { r.Int("big", 32) }, "big: must be an integer in the 32-bit range"},
		"fraction":    {func(r *Reader) { r.Int("f", 64) }, "f: must be an integer in the 64-bit range"},
		"quoted int":  {func(r *Reader) { r.Int("q", 64) }, "q: must be an integer"},
		"not bool":    {func(r *Reader) { r.Bool("n", true) }, "n: must be true or false"},
		"not time":    {func(r *Reader) { r.Time("s") }, "s: must be an RFC 3339 time string"},
		"too many":    {func(r *Reader) { r.Objects("l", 1, "things") }, "l: 2 things, at most 1 allowed"},
		"not array":   {func(r *Reader) { r.Objects("o", 9, "things") }, "o: must be an array"},
		"not objects": {func(r *Reader) { r.Objects("ss", 9, "things") }, "ss[0]: must be an object"},
		"not strings": {func(r *Reader) { r.Strings("l", 9) }, "l[0]: must be a string"},
		"not object":  {func(r *Reader) { r.Object("ss", true) }, "ss: must be an object"},
		"unknown": {func(r *Reader) {
			r.Objects("l", 2, "things")[1].Known("x")
		}, "l[1].y: unknown field (version 1.0 has no such field)"},
		"first wins": {func(r *Reader) { r.Str("n", true); r.Str("absent", true) }, "n: must be a string"},
	} {
		r := NewReader(top, "1.0")
		c.read(r)
		if p := r.Err(); p == nil || p.Error() != c.want {
			t.Errorf("%s: %v, want %q", name, p, c.want)
		}
	}
	lenient := NewReader(top, "1.0")
	lenient.SetLenient(true)
	lenient.Known("s")
	if lenient.Err() != nil {
		t.Fatalf("lenient: %v", lenient.Err())
	}
}

// FuzzParse: the fast path (json.Valid and the hand-written structure
// check) and the slow path (the standard decoder's token walk, which
// explains what is wrong) agree on every valid JSON input that is valid
// UTF-8 (Parse refuses any other before either path runs: the decoder
// turns invalid bytes into U+FFFD, so "\xc0" and "\xe7" would be one key
// to it and two to the fast path), and whatever
// Parse accepts is one object whose fields re-encode to a document Parse
// accepts again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": [1, {"b": "c"}]}`, `{"a": 1, "a": 2}`, `{"a": {"b": 1, "\u0062": 2}}`,
		`[1]`, `{"a": [[[[[]]]]]}`, `{"a": 1} x`, `{"a": "\"}"}`, "{\"a\": \"\xff\"}", "{\"\xc0\":0,\"\xe7\":0}", `{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k1":0}`} {
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, data []byte, depth uint8) {
		d := int(depth%40) + 1
		if utf8.Valid(data) && json.Valid(data) {
			fast, slow := checkStructure(data, d), checkSyntax(data, d)
			if (fast == nil) != (slow == nil) || (fast != nil && *fast != *slow) {
				t.Fatalf("%q (depth %d): fast path says %v, slow path %v", data, d, fast, slow)
			}
		}
		top, p := Parse(data, Limits{MaxDepth: d})
		if p != nil {
			if top != nil || p.Field == "" || p.Msg == "" {
				t.Fatalf("%q: problem %+v with fields %v", data, p, top)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
			t.Fatalf("%q accepted, but not an object: %v", data, err)
		}
		again, _ := json.Marshal(top)
		if _, p := Parse(again, Limits{MaxDepth: d}); p != nil {
			t.Fatalf("%q accepted, its re-encoding %q not: %v", data, again, p)
		}
	})
}
