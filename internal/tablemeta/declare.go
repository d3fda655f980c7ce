package tablemeta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/strictjson"
)

// ErrBadDeclaration: a declared schema (ParseColumnTypes,
// DecodeColumnTypes) that cannot be read.
var ErrBadDeclaration = errkind.New("bad schema declaration", errkind.ErrBadInput)

// ColumnType is one column of a declared schema: a name and its type.
type ColumnType struct {
	Name string
	Type Type
}

// ParseColumnTypes parses a schema declared on a command line:
// "amount=double,qty=int,price=decimal(9,2)" (names and table types,
// primitive ones only; the same name twice is an error).
func ParseColumnTypes(spec string) ([]ColumnType, error) {
	var out []ColumnType
	rest := strings.TrimSpace(spec)
	for rest != "" {
		// A decimal(p,s) has a comma of its own: cut after its ")".
		item := rest
		if i := strings.IndexByte(rest, ','); i >= 0 {
			item = rest[:i]
			if strings.Contains(item, "(") && !strings.Contains(item, ")") {
				if j := strings.IndexByte(rest, ')'); j >= 0 {
					item = rest[:j+1]
				}
			}
		}
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, item), ",")
		name, typ, ok := strings.Cut(item, "=")
		name, typ = strings.TrimSpace(name), strings.TrimSpace(typ)
		if !ok || name == "" || typ == "" {
			return nil, fmt.Errorf("%w: %q: want NAME=TYPE[,NAME=TYPE...], such as amount=double,qty=int", ErrBadDeclaration, item)
		}
		t, err := ParseType(strings.ToLower(typ))
		if err != nil {
			return nil, fmt.Errorf("%w: column %s: %w", ErrBadDeclaration, name, err)
		}
		if slices.ContainsFunc(out, func(c ColumnType) bool { return c.Name == name }) {
			return nil, fmt.Errorf("%w: column %s declared twice", ErrBadDeclaration, name)
		}
		out = append(out, ColumnType{Name: name, Type: t})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no column declared", ErrBadDeclaration)
	}
	return out, nil
}

// DecodeColumnTypes reads a schema declared in a JSON document, in one of
// three forms:
//
//	{"amount": "double", "qty": "int"}                      names to types
//	[{"name": "amount", "type": "double"}, ...]             a list of columns
//	{..., "schema": [...], ...}                              a table.json, or `pswap show --json`
//
// The list is the form of table.json's "schema" and of the "schema" of
// `pswap show --json`, so a good table's schema can be declared for a new
// one (ids and nullability are ignored: ids are the new table's own, and
// converted columns are nullable). Nested types are taken as table.json
// writes them.
func DecodeColumnTypes(data []byte) ([]ColumnType, error) {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Errorf("%w: not JSON: %v", ErrBadDeclaration, err)
	}
	var obj map[string]json.RawMessage
	var list []json.RawMessage
	switch data = bytes.TrimSpace(data); data[0] {
	case '{':
		_ = json.Unmarshal(data, &obj) // valid JSON: cannot fail
		if s := obj["schema"]; len(s) > 0 && s[0] == '[' {
			_ = json.Unmarshal(s, &list) // a table.json, or the output of show --json (no type is a list)
			obj = nil
		}
	case '[':
		_ = json.Unmarshal(data, &list)
	default:
		return nil, fmt.Errorf("%w: want an object of names to types, a list of {name, type}, or a table.json", ErrBadDeclaration)
	}
	var out []ColumnType
	add := func(name string, typ json.RawMessage) error {
		if name == "" {
			return fmt.Errorf("%w: a column without a name", ErrBadDeclaration)
		}
		if slices.ContainsFunc(out, func(c ColumnType) bool { return c.Name == name }) {
			return fmt.Errorf("%w: column %s declared twice", ErrBadDeclaration, name)
		}
		fields := map[string]json.RawMessage{}
		if typ != nil {
			fields["type"] = typ
		}
		r := strictjson.NewReader(fields, Version)
		t := readType(r, "type", 0)
		if p := r.Err(); p != nil {
			return fmt.Errorf("%w: column %s: %v", ErrBadDeclaration, name, p)
		}
		out = append(out, ColumnType{Name: name, Type: t})
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if err := add(k, obj[k]); err != nil {
			return nil, err
		}
	}
	for i, c := range list {
		var o map[string]json.RawMessage
		if c[0] != '{' || json.Unmarshal(c, &o) != nil {
			return nil, fmt.Errorf("%w: column %d is not an object with a name and a type", ErrBadDeclaration, i)
		}
		var name string
		_ = json.Unmarshal(o["name"], &name) // not a string: no name
		if err := add(name, o["type"]); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no column declared", ErrBadDeclaration)
	}
	return out, nil
}
