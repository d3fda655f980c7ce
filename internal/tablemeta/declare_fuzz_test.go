package tablemeta

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzParseColumnTypes: a declaration either parses into named columns of
// valid types, which format back into a declaration that parses the same,
// or fails with ErrBadDeclaration; it never panics.
func FuzzParseColumnTypes(f *testing.F) {
	for _, s := range []string{"amount=double,qty=int", "price=decimal(9,2),n=long", "a=", "=int", "a=int,a=long", "x=decimal(9,2", " a = string "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		cols, err := ParseColumnTypes(spec)
		if err != nil {
			if !errors.Is(err, ErrBadDeclaration) {
				t.Fatalf("ParseColumnTypes(%q): %v, not ErrBadDeclaration", spec, err)
			}
			return
		}
		var parts []string
		for _, c := range cols {
			if c.Name == "" {
				t.Fatalf("ParseColumnTypes(%q): a column without a name", spec)
			}
			parts = append(parts, c.Name+"="+c.Type.String())
		}
		again, err := ParseColumnTypes(strings.Join(parts, ","))
		if err != nil || len(again) != len(cols) {
			t.Fatalf("ParseColumnTypes(%q) = %v, whose spelling %q reads as %v, %v", spec, cols, strings.Join(parts, ","), again, err)
		}
		for i := range cols {
			if again[i].Name != cols[i].Name || again[i].Type.String() != cols[i].Type.String() {
				t.Fatalf("round trip of %q: %v, then %v", spec, cols, again)
			}
		}
	})
}

// FuzzDecodeColumnTypes: any bytes either decode into named columns or
// fail with ErrBadDeclaration; a decoded declaration of primitive types
// re-encoded as a list decodes the same.
func FuzzDecodeColumnTypes(f *testing.F) {
	for _, s := range []string{`{"amount": "double"}`, `[{"name": "a", "type": "int"}]`, `{"schema": [{"name": "a", "type": "long"}]}`, `[1]`, `{"a": 1}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cols, err := DecodeColumnTypes(data)
		if err != nil {
			if !errors.Is(err, ErrBadDeclaration) {
				t.Fatalf("DecodeColumnTypes(%q): %v, not ErrBadDeclaration", data, err)
			}
			return
		}
		type col struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}
		var list []col
		for _, c := range cols {
			if c.Name == "" {
				t.Fatalf("DecodeColumnTypes(%q): a column without a name", data)
			}
			if c.Type.Kind.Nested() {
				return // nested types are objects in the documents, not strings
			}
			list = append(list, col{c.Name, c.Type.String()})
		}
		enc, _ := json.Marshal(list)
		again, err := DecodeColumnTypes(enc)
		if err != nil || len(again) != len(cols) {
			t.Fatalf("DecodeColumnTypes(%q) = %v; re-encoded %s reads as %v, %v", data, cols, enc, again, err)
		}
	})
}
