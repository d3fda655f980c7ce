package lakehouse

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/partition"
)

// Properties the metadata carries for pswap.
const (
	propFingerprint = "pswap.schema-fingerprint"
	propFormat      = "pswap.format"
)

// buildSchema merges a generation's schema (src) into the table's Iceberg
// schema (prev, nil for a new table): columns keep their field ids by name,
// nested fields by name path, new fields get ids as idPlan plans them
// above lastID, columns missing from src stay (optional), and a column may
// widen int -> long and float -> double. Partition columns that src lacks
// are added as optional columns of src's partition type. It returns the
// schema (id = prev's id + 1 when it changed) and whether it changed.
func buildSchema(prev *iceberg.Schema, lastID int, src source, key partition.Key) (*iceberg.Schema, bool, error) {
	var fields []iceberg.NestedField
	byName := map[string]int{}
	if prev != nil {
		for _, f := range prev.Fields() {
			byName[f.Name] = len(fields)
			fields = append(fields, f)
		}
	}
	changed := prev == nil
	ids := newIDPlan(lastID, src.maxID())
	add := func(sf iceberg.NestedField) error {
		if i, ok := byName[sf.Name]; ok {
			f := &fields[i]
			switch t := sf.Type; {
			case f.Type.Equals(t):
			case widens(f.Type, t):
			case widens(t, f.Type):
				f.Type, changed = t, true
			default:
				return fmt.Errorf("%w: column %q is %s in the table but %s in this generation", ErrSchema, sf.Name, f.Type, t)
			}
			if f.Required && !sf.Required {
				f.Required, changed = false, true
			}
			return nil
		}
		byName[sf.Name] = len(fields)
		sf.ID = ids.id(0, sf.ID)
		// A column new to an existing table is optional: older files lack it.
		sf.Required = sf.Required && prev == nil
		fields = append(fields, sf)
		changed = true
		return nil
	}
	for _, f := range src.fields {
		var prevType iceberg.Type
		if i, ok := byName[f.Name]; ok {
			prevType = fields[i].Type
		}
		// The nested fields' ids first, then the column's.
		f.Type = ids.typ(f.Type, prevType)
		if err := add(f); err != nil {
			return nil, false, err
		}
	}
	for _, c := range src.parts {
		if _, ok := byName[c.Name]; !ok {
			c.Required = false
			if err := add(c); err != nil {
				return nil, false, err
			}
		}
	}
	// A column of the table that this generation's files lack is optional
	// from now on: readers fill it with nulls, and a required column that
	// a data file lacks makes them fail. (The partition columns are filled
	// from the partition values.)
	for i := range fields {
		f := &fields[i]
		if f.Required && !src.has(f.Name) && !slices.ContainsFunc(key.Columns(), func(c partition.Column) bool { return c.Name == f.Name }) {
			f.Required, changed = false, true
		}
	}
	if !changed {
		return prev, false, nil
	}
	id := 0
	if prev != nil {
		id = prev.ID + 1
	}
	if err := checkFieldIDs(fields); err != nil {
		return nil, false, err
	}
	sc := iceberg.NewSchema(id, fields...)
	if _, err := iceberg.IndexNameByID(sc); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	return sc, true, nil
}

// widens reports whether values of type from are readable as type to.
func widens(to, from iceberg.Type) bool {
	return (to.Equals(iceberg.PrimitiveTypes.Int64) && from.Equals(iceberg.PrimitiveTypes.Int32)) ||
		(to.Equals(iceberg.PrimitiveTypes.Float64) && from.Equals(iceberg.PrimitiveTypes.Float32))
}

// checkFieldIDs refuses the fields of a schema whose ids (nested ones from
// the files included) repeat, which iceberg.NewSchema panics on, or fall in
// the range reserved for metadata columns.
func checkFieldIDs(fields []iceberg.NestedField) error {
	seen := map[int]bool{}
	var walk func(id int, t iceberg.Type) error
	walk = func(id int, t iceberg.Type) error {
		if seen[id] {
			return fmt.Errorf("%w: field id %d is used twice (a nested field's Parquet field id?)", ErrSchema, id)
		}
		if iceberg.IsReservedFieldID(id) {
			return fmt.Errorf("%w: field id %d is reserved for metadata columns", ErrSchema, id)
		}
		seen[id] = true
		switch t := t.(type) {
		case *iceberg.StructType:
			for _, f := range t.FieldList {
				if err := walk(f.ID, f.Type); err != nil {
					return err
				}
			}
		case *iceberg.ListType:
			return walk(t.ElementID, t.Element)
		case *iceberg.MapType:
			if err := walk(t.KeyID, t.KeyType); err != nil {
				return err
			}
			return walk(t.ValueID, t.ValueType)
		}
		return nil
	}
	for _, f := range fields {
		if err := walk(f.ID, f.Type); err != nil {
			return err
		}
	}
	return nil
}

// partitionSpec is the identity spec of the key's columns, with partition
// field ids from 1000 as the spec recommends.
func partitionSpec(sc *iceberg.Schema, key partition.Key) (iceberg.PartitionSpec, error) {
	var opts []iceberg.PartitionOption
	for i, c := range key.Columns() {
		id := 1000 + i
		opts = append(opts, iceberg.AddPartitionFieldByName(c.Name, c.Name, iceberg.IdentityTransform{}, sc, &id))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition spec of %s: %v", ErrSchema, key, err)
	}
	return spec, nil
}

// specFits checks that a partition key has the columns of the table's spec.
func specFits(spec *iceberg.PartitionSpec, key partition.Key) error {
	cols := key.Columns()
	n := 0
	for _, f := range spec.Fields() {
		if n >= len(cols) || cols[n].Name != f.Name {
			return fmt.Errorf("%w: partition %s does not fit the table's partition columns %s", ErrLayout, key, specNames(spec))
		}
		n++
	}
	if n != len(cols) {
		return fmt.Errorf("%w: partition %s does not fit the table's partition columns %s", ErrLayout, key, specNames(spec))
	}
	return nil
}

func specNames(spec *iceberg.PartitionSpec) string {
	s := ""
	for _, f := range spec.Fields() {
		if s != "" {
			s += "/"
		}
		s += f.Name
	}
	return s
}

// partitionValues converts the key's values to the types of their source
// columns: string, int, long or date (YYYY-MM-DD).
func partitionValues(sc *iceberg.Schema, spec *iceberg.PartitionSpec, key partition.Key) (map[int]any, error) {
	out := map[int]any{}
	for _, f := range spec.Fields() {
		v, _ := key.Value(f.Name)
		src, ok := sc.FindFieldByID(f.SourceIDs[0])
		if !ok {
			return nil, fmt.Errorf("%w: partition column %q is not in the schema", ErrSchema, f.Name)
		}
		var err error
		switch src.Type.Type() {
		case "string":
			out[f.FieldID] = v
		case "int":
			var n int64
			n, err = strconv.ParseInt(v, 10, 32)
			out[f.FieldID] = int32(n)
		case "long":
			var n int64
			n, err = strconv.ParseInt(v, 10, 64)
			out[f.FieldID] = n
		case "date":
			var d time.Time
			d, err = time.Parse(time.DateOnly, v)
			out[f.FieldID] = iceberg.Date(d.Unix() / 86400)
		default:
			err = fmt.Errorf("type %s is not supported for a partition column", src.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: partition %s: value %q of column %q: %v", ErrSchema, key, v, f.Name, err)
		}
	}
	return out, nil
}

// nameMapping maps every column name to its field id, and every nested
// field (a struct's fields, a list's "element", a map's "key" and "value")
// to its own: pswap's files carry no Iceberg field ids, so readers resolve
// columns, top-level and nested, by name.
func nameMapping(sc *iceberg.Schema) (string, error) {
	b, err := json.Marshal(iceberg.NameMapping(mapFields(sc.Fields())))
	return string(b), err
}

func mapFields(fields []iceberg.NestedField) []iceberg.MappedField {
	out := make([]iceberg.MappedField, 0, len(fields))
	for _, f := range fields {
		out = append(out, mapped(f.Name, f.ID, f.Type))
	}
	return out
}

func mapped(name string, id int, t iceberg.Type) iceberg.MappedField {
	m := iceberg.MappedField{Names: []string{name}, FieldID: &id}
	switch t := t.(type) {
	case *iceberg.StructType:
		m.Fields = mapFields(t.FieldList)
	case *iceberg.ListType:
		m.Fields = []iceberg.MappedField{mapped("element", t.ElementID, t.Element)}
	case *iceberg.MapType:
		m.Fields = []iceberg.MappedField{mapped("key", t.KeyID, t.KeyType), mapped("value", t.ValueID, t.ValueType)}
	}
	return m
}
