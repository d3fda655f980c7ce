package textconv

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Nested JSON Lines values: a JSON array is an Arrow list, a JSON object a
// struct (or, when the schema says so, a map with string keys). CSV values
// are never nested.

// nestedFuncs sets the converters of a list, struct or map column; ok is
// false for other types.
func (c *column) nestedFuncs() (ok bool, err error) {
	name := c.field.Type.String()
	noText := func(string) error {
		return fmt.Errorf("%w: column %q has type %s: only JSON Lines values can be nested", ErrUnsupported, c.field.Name, name)
	}
	switch b := c.b.(type) {
	case *array.ListBuilder:
		elem := c.field.Type.(*arrow.ListType).ElemField()
		child, err := columnOf(b.ValueBuilder(), elem)
		if err != nil {
			return true, err
		}
		c.text = noText
		c.json = func(v any) error {
			items, ok := v.([]any)
			if !ok {
				return errType(name, v)
			}
			b.Append(true)
			for i, x := range items {
				if err := child.jsonOrNull(x); err != nil {
					return fmt.Errorf("element %d: %w", i, err)
				}
			}
			return nil
		}
		return true, nil
	case *array.MapBuilder:
		mt := c.field.Type.(*arrow.MapType)
		if mt.KeyType().ID() != arrow.STRING {
			return true, fmt.Errorf("%w: column %q has type %s: JSON object keys are strings", ErrUnsupported, c.field.Name, name)
		}
		keys, err := columnOf(b.KeyBuilder(), mt.KeyField())
		if err != nil {
			return true, err
		}
		items, err := columnOf(b.ItemBuilder(), mt.ItemField())
		if err != nil {
			return true, err
		}
		c.text = noText
		c.json = func(v any) error {
			obj, ok := v.(map[string]any)
			if !ok {
				return errType(name, v)
			}
			b.Append(true)
			// Keys sorted: the same line gives the same file.
			for _, k := range sortedKeys(obj) {
				if err := keys.json(k); err != nil {
					return err
				}
				if err := items.jsonOrNull(obj[k]); err != nil {
					return fmt.Errorf("key %q: %w", k, err)
				}
			}
			return nil
		}
		return true, nil
	case *array.StructBuilder:
		st := c.field.Type.(*arrow.StructType)
		fields := make([]*column, st.NumFields())
		for i, f := range st.Fields() {
			if fields[i], err = columnOf(b.FieldBuilder(i), f); err != nil {
				return true, err
			}
		}
		c.text = noText
		c.json = func(v any) error {
			obj, ok := v.(map[string]any)
			if !ok {
				return errType(name, v)
			}
			for k := range obj {
				if _, ok := st.FieldIdx(k); !ok {
					return fmt.Errorf("key %q is not a field of %s", k, name)
				}
			}
			b.Append(true)
			for _, f := range fields {
				if err := f.jsonOrNull(obj[f.field.Name]); err != nil {
					return fmt.Errorf("field %q: %w", f.field.Name, err)
				}
			}
			return nil
		}
		return true, nil
	}
	return false, nil
}

// jsonOrNull appends a JSON value or, for nil, a null.
func (c *column) jsonOrNull(v any) error {
	if v == nil {
		return c.appendNull()
	}
	return c.json(v)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// observeJSON records one non-null JSON value of any kind.
func (st *inferState) observeJSON(v any) {
	switch x := v.(type) {
	case bool:
		st.seen = true
		st.bools++
	case json.Number:
		st.seen = true
		if _, err := x.Int64(); err == nil {
			st.ints++
		} else {
			st.floats++
		}
	case string:
		st.observeString(x)
	case []any:
		st.seen = true
		st.arrays++
		if st.elem == nil {
			st.elem = &inferState{name: "element"}
		}
		for _, e := range x {
			if e != nil {
				st.elem.observeJSON(e)
			}
		}
	case map[string]any:
		st.seen = true
		st.objects++
		if st.fields == nil {
			st.fields = map[string]*inferState{}
		}
		for _, k := range sortedKeys(x) {
			f := st.fields[k]
			if f == nil {
				f = &inferState{name: k}
				st.fields[k] = f
				st.order = append(st.order, k)
			}
			if x[k] != nil {
				f.observeJSON(x[k])
			}
		}
	}
}

// nestedField returns the inferred list or struct column; ok is false
// when the values seen were not all arrays or all objects.
func (st *inferState) nestedField() (f arrow.Field, ok bool) {
	scalars := st.ints + st.floats + st.bools + st.strs
	switch {
	case st.arrays > 0 && st.objects == 0 && scalars == 0:
		return arrow.Field{Name: st.name, Nullable: true, Type: arrow.ListOfField(st.elem.field())}, true
	case st.objects > 0 && st.arrays == 0 && scalars == 0:
		sort.Strings(st.order)
		fields := make([]arrow.Field, len(st.order))
		for i, k := range st.order {
			fields[i] = st.fields[k].field()
		}
		return arrow.Field{Name: st.name, Nullable: true, Type: arrow.StructOf(fields...)}, true
	}
	return arrow.Field{}, false
}
