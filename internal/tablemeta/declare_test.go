package tablemeta

import (
	"errors"
	"strings"
	"testing"
)

func TestParseColumnTypes(t *testing.T) {
	cols, err := ParseColumnTypes(" amount=double, qty=INT,price=decimal(9,2),d=date ")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"amount double", "qty int", "price decimal(9,2)", "d date"}
	if len(cols) != len(want) {
		t.Fatalf("%v", cols)
	}
	for i, c := range cols {
		if got := c.Name + " " + c.Type.String(); got != want[i] {
			t.Errorf("column %d: %s, want %s", i, got, want[i])
		}
	}
	for _, bad := range []string{"", "amount", "amount=", "=double", "amount=dubble", "a=int,a=long", "a=decimal(9,2"} {
		if _, err := ParseColumnTypes(bad); !errors.Is(err, ErrBadDeclaration) {
			t.Errorf("ParseColumnTypes(%q) = %v, want ErrBadDeclaration", bad, err)
		}
	}
}

func TestDecodeColumnTypes(t *testing.T) {
	for _, doc := range []string{
		`{"qty": "int", "amount": "double"}`,
		`[{"name": "amount", "type": "double"}, {"name": "qty", "type": "int"}]`,
		`{"format": "pswap-table", "schema": [{"id": 1, "name": "amount", "type": "double", "nullable": true}, {"id": 2, "name": "qty", "type": "int", "nullable": true}]}`,
		`{"table": "x", "schema": [{"id": 1, "name": "amount", "type": "double", "nullable": true}, {"id": 2, "name": "qty", "type": "int", "nullable": true}]}`,
	} {
		cols, err := DecodeColumnTypes([]byte(doc))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		got := map[string]string{}
		for _, c := range cols {
			got[c.Name] = c.Type.String()
		}
		if len(got) != 2 || got["amount"] != "double" || got["qty"] != "int" {
			t.Errorf("%s: %v", doc, got)
		}
	}
	for _, bad := range []string{`nope`, `{}`, `[]`, `{"a": "dubble"}`, `[{"type": "int"}]`, `[1]`, `"int"`, `[{"name": "a", "type": "int"}, {"name": "a", "type": "long"}]`} {
		if _, err := DecodeColumnTypes([]byte(bad)); !errors.Is(err, ErrBadDeclaration) {
			t.Errorf("DecodeColumnTypes(%s) = %v, want ErrBadDeclaration", bad, err)
		}
	}
}

// TestDecodeColumnTypesNested: a nested type declared as table.json writes
// it (ids and all) is read, not refused for its ids.
func TestDecodeColumnTypesNested(t *testing.T) {
	cols, err := DecodeColumnTypes([]byte(`{"tags": {"type": "list", "element_id": 7, "element": "string", "element_nullable": true},
		"attrs": {"type": "map", "key_id": 8, "key": "string", "value_id": 9, "value": "long", "value_nullable": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 2 || cols[0].Name != "attrs" || cols[1].Name != "tags" {
		t.Fatalf("columns %v", cols)
	}
	if m := cols[0].Type; m.Kind != Map || m.Key.Type.Kind != String || m.Value.Type.Kind != Long || m.Value.Nullable {
		t.Fatalf("attrs: %v", m)
	}
	if l := cols[1].Type; l.Kind != List || l.Element.Type.Kind != String || !l.Element.Nullable {
		t.Fatalf("tags: %v", l)
	}
	_, err = DecodeColumnTypes([]byte(`{"tags": {"type": "list", "element_id": 1.5, "element": "string", "element_nullable": true}}`))
	if !errors.Is(err, ErrBadDeclaration) || !strings.Contains(err.Error(), "column tags: type.element_id: must be an integer") {
		t.Fatalf("fractional id: %v", err)
	}
}
