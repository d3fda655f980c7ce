package deltalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
)

// deltaField is a field of a Delta schema (PROTOCOL.md, "Schema
// Serialization Format").
type deltaField struct {
	Name     string         `json:"name"`
	Type     any            `json:"type"`
	Nullable bool           `json:"nullable"`
	Metadata map[string]any `json:"metadata"`
}

type deltaStruct struct {
	Type   string       `json:"type"` // "struct"
	Fields []deltaField `json:"fields"`
}

type deltaArray struct {
	Type         string `json:"type"` // "array"
	ElementType  any    `json:"elementType"`
	ContainsNull bool   `json:"containsNull"`
}

type deltaMap struct {
	Type              string `json:"type"` // "map"
	KeyType           any    `json:"keyType"`
	ValueType         any    `json:"valueType"`
	ValueContainsNull bool   `json:"valueContainsNull"`
}

// schemaInfo is a table's Delta schema and what it needs of the protocol.
type schemaInfo struct {
	schemaString     string
	partitionColumns []string
	ntz              bool // a timestamp_ntz column: reader 3 / writer 7 with timestampNtz
}

// deltaSchema converts table.json's schema to Delta's: the data columns,
// then the partition columns (Delta keeps them in the schema and names
// them in partitionColumns). A type Delta cannot express fails with
// ErrSchema naming the column.
func deltaSchema(t *tablemeta.Table) (schemaInfo, error) {
	var info schemaInfo
	fields := make([]deltaField, 0, len(t.Schema.Fields)+len(t.PartitionColumns))
	for _, f := range t.Schema.Fields {
		df, err := convertField(f.Name, f, &info)
		if err != nil {
			return info, err
		}
		fields = append(fields, df)
	}
	for _, c := range t.PartitionColumns {
		typ := "string"
		switch c.Type.Kind {
		case tablemeta.Date:
			typ = "date"
		case tablemeta.Int:
			typ = "integer"
		}
		if slices.ContainsFunc(fields, func(f deltaField) bool { return f.Name == c.Name }) {
			return info, fmt.Errorf("%w: partition column %q is also a data column", ErrSchema, c.Name)
		}
		fields = append(fields, deltaField{Name: c.Name, Type: typ, Nullable: true, Metadata: map[string]any{}})
		info.partitionColumns = append(info.partitionColumns, c.Name)
	}
	b, err := json.Marshal(deltaStruct{Type: "struct", Fields: fields})
	if err != nil {
		return info, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	info.schemaString = string(b)
	return info, nil
}

func convertField(path string, f tablemeta.Field, info *schemaInfo) (deltaField, error) {
	t, err := convertType(path, f.Type, info)
	if err != nil {
		return deltaField{}, err
	}
	return deltaField{Name: f.Name, Type: t, Nullable: f.Nullable, Metadata: map[string]any{}}, nil
}

func convertType(path string, t tablemeta.Type, info *schemaInfo) (any, error) {
	switch t.Kind {
	case tablemeta.Boolean:
		return "boolean", nil
	case tablemeta.Int:
		return "integer", nil
	case tablemeta.Long:
		return "long", nil
	case tablemeta.Float:
		return "float", nil
	case tablemeta.Double:
		return "double", nil
	case tablemeta.Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale), nil
	case tablemeta.Date:
		return "date", nil
	case tablemeta.Timestamp:
		info.ntz = true
		return "timestamp_ntz", nil
	case tablemeta.TimestampTZ:
		return "timestamp", nil
	case tablemeta.String:
		return "string", nil
	case tablemeta.Binary, tablemeta.Fixed:
		return "binary", nil
	case tablemeta.Struct:
		s := deltaStruct{Type: "struct", Fields: make([]deltaField, 0, len(t.Fields))}
		for _, f := range t.Fields {
			df, err := convertField(path+"."+f.Name, f, info)
			if err != nil {
				return nil, err
			}
			s.Fields = append(s.Fields, df)
		}
		return s, nil
	case tablemeta.List:
		e, err := convertType(path+".element", t.Element.Type, info)
		if err != nil {
			return nil, err
		}
		return deltaArray{Type: "array", ElementType: e, ContainsNull: t.Element.Nullable}, nil
	case tablemeta.Map:
		k, err := convertType(path+".key", t.Key.Type, info)
		if err != nil {
			return nil, err
		}
		v, err := convertType(path+".value", t.Value.Type, info)
		if err != nil {
			return nil, err
		}
		return deltaMap{Type: "map", KeyType: k, ValueType: v, ValueContainsNull: t.Value.Nullable}, nil
	}
	// time and nanosecond timestamps have no Delta type.
	return nil, fmt.Errorf("%w: column %s is %s, which Delta Lake has no type for", ErrSchema, path, t.Kind)
}

// protocolFor is the lowest protocol that reads and writes a schema:
// reader 1 / writer 2, or reader 3 / writer 7 with the timestampNtz
// feature when a column is a timestamp without zone.
func protocolFor(info schemaInfo) Protocol {
	if info.ntz {
		return Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"timestampNtz"}}
	}
	return Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
}

// covers reports whether protocol p is one pswap may write to a table
// needing want: the same versions and features, or (for a table whose
// schema gained a timestamp_ntz column) a lower one it upgrades.
func sameProtocol(p, want Protocol) bool {
	return p.MinReaderVersion == want.MinReaderVersion && p.MinWriterVersion == want.MinWriterVersion &&
		slices.Equal(p.ReaderFeatures, want.ReaderFeatures) && slices.Equal(p.WriterFeatures, want.WriterFeatures)
}

// partitionValues are a key's values as Delta serializes them: a date
// column as YYYY-MM-DD, an int column in decimal, a string as it is.
func partitionValues(t *tablemeta.Table, part string) (map[string]*string, error) {
	k, err := partition.Parse(part)
	if err != nil {
		return nil, err
	}
	cols := k.Columns()
	if len(cols) != len(t.PartitionColumns) {
		return nil, fmt.Errorf("%w: %s has %d columns, the table %d", ErrSchema, part, len(cols), len(t.PartitionColumns))
	}
	out := make(map[string]*string, len(cols))
	for i, c := range cols {
		pc := t.PartitionColumns[i]
		if c.Name != pc.Name {
			return nil, fmt.Errorf("%w: %s: column %q where the table has %q", ErrSchema, part, c.Name, pc.Name)
		}
		v := c.Value
		switch pc.Type.Kind {
		case tablemeta.Date:
			layout := pc.Layout
			if layout == "" {
				layout = time.DateOnly
			}
			d, err := time.Parse(layout, v)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %q is not a date of layout %q", ErrSchema, part, v, layout)
			}
			v = d.Format(time.DateOnly)
		case tablemeta.Int:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %q is not an int", ErrSchema, part, v)
			}
			v = strconv.FormatInt(n, 10)
		}
		out[c.Name] = &v
	}
	return out, nil
}

// schemaColumns are the top-level column names of a Delta schema string
// (false when it does not parse as a struct).
func schemaColumns(schema string) (map[string]bool, bool) {
	var st struct {
		Type   string `json:"type"`
		Fields []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(schema), &st); err != nil || st.Type != "struct" {
		return nil, false
	}
	out := make(map[string]bool, len(st.Fields))
	for _, f := range st.Fields {
		out[f.Name] = true
	}
	return out, true
}

// olderSchema reports whether the schema ours is older than the log's:
// it lacks a column the log's has, and has none the log's lacks. A pswap
// table's schema only ever gains columns (tablemeta.Evolve), so such a
// schema comes from a table.json read before an evolution that another
// publisher has already written into the log: writing it would take the
// new columns away from the log's readers.
func olderSchema(ours, log string) bool {
	oc, ok1 := schemaColumns(ours)
	lc, ok2 := schemaColumns(log)
	if !ok1 || !ok2 || len(oc) >= len(lc) {
		return false
	}
	for c := range oc {
		if !lc[c] {
			return false
		}
	}
	return true
}
