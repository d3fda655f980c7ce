package lakehouse

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// source is the schema a publish merges into the table's Iceberg schema
// for a generation (buildSchema): its data columns and the table's
// partition columns, Iceberg-typed. Its field ids are proposals
// (table.json's, or 0 from a footer): idPlan decides.
type source struct {
	fields []iceberg.NestedField
	parts  []iceberg.NestedField // the partition columns, in key order
}

// maxID is the highest id the source proposes.
func (s source) maxID() int { return max(maxID(s.fields), maxID(s.parts)) }

// has reports whether the source has a data column named name.
func (s source) has(name string) bool {
	for _, f := range s.fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// sourceOf is the schema u's generation is published with: table.json's,
// when the table has one (every generation committed since is stored in
// its schema), else the footer's (Options.Schema), for tables committed
// to only before pswap kept table.json.
func (p *publisher) sourceOf(ctx context.Context, u partUpdate, key partition.Key) (source, error) {
	t, err := p.tableDoc(ctx)
	if err != nil {
		return source{}, err
	}
	if t != nil {
		return tableSource(t, key)
	}
	as, err := p.opts.Schema(ctx, p.st, swap.Files(p.st, u.m))
	if err != nil {
		return source{}, err
	}
	return footerSource(as, key)
}

// tableDoc is table.json as this attempt knows it: the one the commit was
// checked against (Commit.Table) while the pointer names its generation,
// else read once per attempt, after the attempt read its pointers (a
// commit that evolves the schema writes table.json before its pointer, so
// the document read covers every generation the attempt publishes). Nil:
// the table has none.
func (p *publisher) tableDoc(ctx context.Context) (*tablemeta.Table, error) {
	if p.doc.given != nil {
		return p.doc.given, nil
	}
	if p.doc.read {
		return p.doc.t, nil
	}
	t, tag, err := tablemeta.Read(ctx, p.st)
	switch {
	case errors.Is(err, store.ErrNotFound):
		t, tag = nil, ""
	case errors.Is(err, tablemeta.ErrInvalid):
		return nil, fmt.Errorf("read the table's schema: %w: %w", errkind.ErrCorrupt, err)
	case err != nil:
		return nil, fmt.Errorf("read the table's schema: %w", err)
	}
	p.doc.t, p.doc.tag, p.doc.read = t, tag, true
	return t, nil
}

// docState is what a publisher knows of table.json (tableDoc).
type docState struct {
	given *tablemeta.Table // Commit.Table, while it describes what is published
	t     *tablemeta.Table
	tag   string // t's version tag, for writeBackIDs's conditional update
	read  bool   // t is this attempt's read
}

// tableSource is the source of a table with table.json: its columns and
// partition columns with their ids. A table published before table.json
// existed has other nested ids (the publish assigned them, nested fields
// first), and possibly other top-level ones: idPlan keeps those.
func tableSource(t *tablemeta.Table, key partition.Key) (source, error) {
	var src source
	for _, f := range t.Schema.Fields {
		nf, err := icebergField(f.Name, f)
		if err != nil {
			return source{}, err
		}
		src.fields = append(src.fields, nf)
	}
	for _, c := range key.Columns() {
		pf := iceberg.NestedField{Name: c.Name, Type: iceberg.PrimitiveTypes.String}
		for _, tc := range t.PartitionColumns {
			if tc.Name == c.Name {
				pf.ID, pf.Type = tc.ID, partitionType(tc)
			}
		}
		src.parts = append(src.parts, pf)
	}
	return src, nil
}

// partitionType is the Iceberg type of a partition column: a dt=2006-01-02
// column is a date, an int column (hr=15) an int, so that typed filters
// (dt = DATE '2026-11-29', hr = 13) type-check; a column whose values
// another layout writes is a string, as is every column of a table
// without table.json. A partition column takes it when the table's
// Iceberg schema gets it, its first version: an Iceberg column's type
// never changes from string to date.
func partitionType(c tablemeta.PartitionColumn) iceberg.Type {
	switch {
	case c.Type.Kind == tablemeta.Date && c.Layout == time.DateOnly:
		return iceberg.PrimitiveTypes.Date
	case c.Type.Kind == tablemeta.Int:
		return iceberg.PrimitiveTypes.Int32
	}
	return iceberg.PrimitiveTypes.String
}

// icebergField is a table.json field as an Iceberg field, with its id;
// path names it in errors.
func icebergField(path string, f tablemeta.Field) (iceberg.NestedField, error) {
	t, err := icebergType(path, f.Type)
	if err != nil {
		return iceberg.NestedField{}, err
	}
	return iceberg.NestedField{ID: f.ID, Name: f.Name, Type: t, Required: !f.Nullable, Doc: f.Doc}, nil
}

// icebergPrimitives are the Iceberg types of table.json's primitive kinds
// without parameters.
var icebergPrimitives = map[tablemeta.Kind]iceberg.Type{
	tablemeta.Boolean:       iceberg.PrimitiveTypes.Bool,
	tablemeta.Int:           iceberg.PrimitiveTypes.Int32,
	tablemeta.Long:          iceberg.PrimitiveTypes.Int64,
	tablemeta.Float:         iceberg.PrimitiveTypes.Float32,
	tablemeta.Double:        iceberg.PrimitiveTypes.Float64,
	tablemeta.Date:          iceberg.PrimitiveTypes.Date,
	tablemeta.Time:          iceberg.PrimitiveTypes.Time,
	tablemeta.Timestamp:     iceberg.PrimitiveTypes.Timestamp,
	tablemeta.TimestampNs:   iceberg.PrimitiveTypes.Timestamp,
	tablemeta.TimestampTZ:   iceberg.PrimitiveTypes.TimestampTz,
	tablemeta.TimestampTZNs: iceberg.PrimitiveTypes.TimestampTz,
	tablemeta.String:        iceberg.PrimitiveTypes.String,
	tablemeta.Binary:        iceberg.PrimitiveTypes.Binary,
}

// icebergType is the Iceberg v2 type of a table.json type, with the ids
// of its nested fields: the one mapping of table types to Iceberg's (its
// kinds are Iceberg's). A nanosecond timestamp (timestamp_ns, which only
// tables from before pswap stored microseconds have) is published as
// Iceberg v2's timestamp, as it always was: v2 has no nanosecond type, and
// readers read the files' values by their Parquet unit.
func icebergType(path string, t tablemeta.Type) (iceberg.Type, error) {
	if p, ok := icebergPrimitives[t.Kind]; ok {
		return p, nil
	}
	switch t.Kind {
	case tablemeta.Decimal:
		return iceberg.DecimalTypeOf(t.Precision, t.Scale), nil
	case tablemeta.Fixed:
		return iceberg.FixedTypeOf(t.Length), nil
	case tablemeta.Struct:
		fields := make([]iceberg.NestedField, len(t.Fields))
		for i, f := range t.Fields {
			nf, err := icebergField(path+"."+f.Name, f)
			if err != nil {
				return nil, err
			}
			fields[i] = nf
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case tablemeta.List:
		e, err := icebergField(path+".element", *t.Element)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: e.ID, Element: e.Type, ElementRequired: e.Required}, nil
	case tablemeta.Map:
		k, err := icebergField(path+".key", *t.Key)
		if err != nil {
			return nil, err
		}
		v, err := icebergField(path+".value", *t.Value)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyID: k.ID, KeyType: k.Type, ValueID: v.ID, ValueType: v.Type, ValueRequired: v.Required}, nil
	}
	return nil, fmt.Errorf("%w: column %s is %s, which has no Iceberg type", ErrSchema, path, t)
}
