package lakehouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/tablemeta"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// SchemaFunc returns the Arrow schema of a generation's data. The default,
// [FooterSchema], reads the footer of its first file. The metadata calls it
// only when a generation's schema fingerprint differs from the published one.
type SchemaFunc func(ctx context.Context, st store.Store, files []swap.FileRef) (*arrow.Schema, error)

// FooterSchema reads the Arrow schema of the first data file (the files of
// one generation share one schema) from its Parquet footer, fetched with
// ranged GETs (usually one: the file's last 64 KiB), not the whole file.
// The footer is read as staging read it when the file was committed
// (pqscan.Open: a logical type Arrow does not know reads as its
// physical type), and a footer that makes Arrow's reader panic is
// ErrSchema, never a panic.
func FooterSchema(ctx context.Context, st store.Store, files []swap.FileRef) (s *arrow.Schema, err error) {
	if len(files) == 0 {
		return nil, errors.New("no data files to read a schema from")
	}
	f := files[0]
	md, err := readFooter(ctx, st, f)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("%w: %s: reading its footer failed: %v", ErrSchema, f.URI, p)
		}
	}()
	s, err = pqarrow.FromParquet(md.Schema, &pqarrow.ArrowReadProperties{}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSchema, f.URI, err)
	}
	return s, nil
}

// readFooter reads a data file's Parquet footer with ranged GETs (usually
// one: the file's last 64 KiB), as staging read it when the file was
// committed (pqscan.Open). A footer that makes Arrow's reader
// panic is ErrSchema, never a panic.
func readFooter(ctx context.Context, st store.Store, f swap.FileRef) (md *metadata.FileMetaData, err error) {
	defer func() {
		if p := recover(); p != nil {
			md, err = nil, fmt.Errorf("%w: %s: reading its footer failed: %v", ErrSchema, f.URI, p)
		}
	}()
	a := store.Attrs{Key: f.Key, Size: f.Size}
	if a.Size <= 0 {
		// A reference without the manifest's size: ask the store.
		var err error
		if a, err = st.Stat(ctx, f.Key); err != nil {
			return nil, fmt.Errorf("read the footer of %s: %w", f.URI, err)
		}
	}
	r := store.NewTailReader(ctx, st, f.Key, a, 0)
	pf, err := pqscan.Open(r, a.Size)
	if r.Err() != nil {
		return nil, fmt.Errorf("read the footer of %s: %w", f.URI, r.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSchema, f.URI, err)
	}
	defer pf.Close()
	return pf.MetaData(), nil
}

// Properties the metadata carries for pswap.
const (
	propFingerprint = "pswap.schema-fingerprint"
	propFormat      = "pswap.format"
)

// buildSchema merges a generation's Arrow schema into the table's Iceberg
// schema (prev, nil for a new table): columns keep their field ids by name,
// new columns get fresh ids after lastID, columns missing from this
// generation stay (optional), and a column may widen int -> long and
// float -> double. Partition columns that the files lack are added as
// optional columns of their type in partTypes (table.json's declared type:
// date, int), else strings. It returns the schema (id = prev's id + 1 when it
// changed) and whether it changed.
func buildSchema(prev *iceberg.Schema, lastID int, as *arrow.Schema, key partition.Key, partTypes map[string]iceberg.Type) (*iceberg.Schema, bool, error) {
	var fields []iceberg.NestedField
	byName := map[string]int{}
	if prev != nil {
		for _, f := range prev.Fields() {
			byName[f.Name] = len(fields)
			fields = append(fields, f)
		}
	}
	changed := prev == nil
	next := lastID
	add := func(name string, t iceberg.Type, required bool) error {
		if i, ok := byName[name]; ok {
			f := &fields[i]
			switch {
			case f.Type.Equals(t):
			case widens(f.Type, t):
			case widens(t, f.Type):
				f.Type, changed = t, true
			default:
				return fmt.Errorf("%w: column %q is %s in the table but %s in this generation", ErrSchema, name, f.Type, t)
			}
			if f.Required && !required {
				f.Required, changed = false, true
			}
			return nil
		}
		next++
		byName[name] = len(fields)
		// A column new to an existing table is optional: older files lack it.
		fields = append(fields, iceberg.NestedField{ID: next, Name: name, Type: t, Required: required && prev == nil})
		changed = true
		return nil
	}
	for _, f := range as.Fields() {
		var prevType iceberg.Type
		if i, ok := byName[f.Name]; ok {
			prevType = fields[i].Type
		}
		t, err := icebergType(f, prevType, &next)
		if err != nil {
			return nil, false, err
		}
		if err := add(f.Name, t, !f.Nullable); err != nil {
			return nil, false, err
		}
	}
	for _, c := range key.Columns() {
		if _, ok := byName[c.Name]; !ok {
			t := partTypes[c.Name]
			if t == nil {
				t = iceberg.PrimitiveTypes.String
			}
			if err := add(c.Name, t, false); err != nil {
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
		if f.Required && as.FieldIndices(f.Name) == nil && !slices.ContainsFunc(key.Columns(), func(c partition.Column) bool { return c.Name == f.Name }) {
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

// icebergType is the Iceberg v2 type of an Arrow column, as iceberg-go
// 0.7.0's table.ArrowTypeToIceberg maps it (nanosecond timestamps read as
// microseconds), except that a type only format version 3 has is refused
// here rather than when the metadata is built.
//
// The fields nested in a struct, list or map get their field ids from the
// table, never from the files: prev is the column's type in the table (nil
// for a new column), whose nested ids are kept by name (a struct's fields,
// a list's element, a map's key and value), and a nested field the table
// does not have yet gets the next id after *next. The name mapping
// (nameMapping) maps every one of them, so readers resolve nested columns
// of files without ids by name, as they do top-level ones.
func icebergType(f arrow.Field, prev iceberg.Type, next *int) (iceberg.Type, error) {
	t, err := (&idAssigner{next: next}).convert(f.Type, prev)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q of type %s has no Iceberg type: %v", ErrSchema, f.Name, f.Type, err)
	}
	return t, nil
}

// utcAliases are the Arrow time zones of an Iceberg timestamptz.
var utcAliases = []string{"UTC", "+00:00", "Etc/UTC", "Z"}

// idAssigner converts Arrow types to Iceberg types, giving nested fields
// the ids of the table's type or fresh ones.
type idAssigner struct{ next *int }

// id is prevID if the table had the field (prevID > 0), else a fresh id.
func (a *idAssigner) id(prevID int) int {
	if prevID > 0 {
		return prevID
	}
	*a.next++
	return *a.next
}

func (a *idAssigner) convert(dt arrow.DataType, prev iceberg.Type) (iceberg.Type, error) {
	switch dt := dt.(type) {
	case *arrow.StructType:
		ps, _ := prev.(*iceberg.StructType)
		fields := make([]iceberg.NestedField, 0, dt.NumFields())
		for _, f := range dt.Fields() {
			var pid int
			var pt iceberg.Type
			if ps != nil {
				for _, pf := range ps.FieldList {
					if pf.Name == f.Name {
						pid, pt = pf.ID, pf.Type
					}
				}
			}
			id := a.id(pid)
			t, err := a.convert(f.Type, pt)
			if err != nil {
				return nil, err
			}
			doc, _ := f.Metadata.GetValue("doc")
			fields = append(fields, iceberg.NestedField{ID: id, Name: f.Name, Type: t, Required: !f.Nullable, Doc: doc})
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case *arrow.MapType:
		pm, _ := prev.(*iceberg.MapType)
		var pk, pv iceberg.Type
		var pkid, pvid int
		if pm != nil {
			pk, pv, pkid, pvid = pm.KeyType, pm.ValueType, pm.KeyID, pm.ValueID
		}
		kid, vid := a.id(pkid), a.id(pvid)
		kt, err := a.convert(dt.KeyType(), pk)
		if err != nil {
			return nil, err
		}
		vt, err := a.convert(dt.ItemType(), pv)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyID: kid, KeyType: kt, ValueID: vid, ValueType: vt, ValueRequired: !dt.ItemField().Nullable}, nil
	case arrow.ListLikeType:
		pl, _ := prev.(*iceberg.ListType)
		var pe iceberg.Type
		var peid int
		if pl != nil {
			pe, peid = pl.Element, pl.ElementID
		}
		id := a.id(peid)
		ef := dt.ElemField()
		et, err := a.convert(ef.Type, pe)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: id, Element: et, ElementRequired: !ef.Nullable}, nil
	case *arrow.DictionaryType:
		return a.convert(dt.ValueType, prev)
	case *arrow.RunEndEncodedType:
		return a.convert(dt.Encoded(), prev)
	}
	return arrowToIceberg(dt)
}

// arrowToIceberg is the Iceberg type of a primitive Arrow type.
func arrowToIceberg(dt arrow.DataType) (iceberg.Type, error) {
	switch dt := dt.(type) {
	case *arrow.BooleanType:
		return iceberg.PrimitiveTypes.Bool, nil
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type:
		return iceberg.PrimitiveTypes.Int32, nil
	case *arrow.Uint64Type, *arrow.Int64Type:
		return iceberg.PrimitiveTypes.Int64, nil
	case *arrow.Float16Type, *arrow.Float32Type:
		return iceberg.PrimitiveTypes.Float32, nil
	case *arrow.Float64Type:
		return iceberg.PrimitiveTypes.Float64, nil
	case *arrow.Decimal32Type, *arrow.Decimal64Type, *arrow.Decimal128Type:
		d := dt.(arrow.DecimalType)
		return iceberg.DecimalTypeOf(int(d.GetPrecision()), int(d.GetScale())), nil
	case *arrow.StringType, *arrow.LargeStringType:
		return iceberg.PrimitiveTypes.String, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return iceberg.PrimitiveTypes.Binary, nil
	case *arrow.Date32Type:
		return iceberg.PrimitiveTypes.Date, nil
	case *arrow.Time64Type:
		if dt.Unit == arrow.Microsecond {
			return iceberg.PrimitiveTypes.Time, nil
		}
	case *arrow.TimestampType:
		switch {
		case slices.Contains(utcAliases, dt.TimeZone):
			return iceberg.PrimitiveTypes.TimestampTz, nil
		case dt.TimeZone == "":
			return iceberg.PrimitiveTypes.Timestamp, nil
		}
	case *arrow.FixedSizeBinaryType:
		return iceberg.FixedTypeOf(dt.ByteWidth), nil
	case arrow.ExtensionType:
		if dt.ExtensionName() == "arrow.uuid" {
			return iceberg.PrimitiveTypes.UUID, nil
		}
	}
	return nil, fmt.Errorf("%s is not supported in an Iceberg v2 table", dt)
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

// partitionTypes returns the Iceberg types of the partition columns that
// table.json declares, for a table's first version: a dt=2006-01-02
// column is a date, an int column (hr=15) an int, so that typed filters
// (dt = DATE '2026-11-29', hr = 13) type-check. A column whose values
// another layout writes stays a string, as does every column of a table
// without table.json (one committed to before it existed). A table
// published before keeps the types it has: an Iceberg column's type never
// changes from string to date.
func partitionTypes(ctx context.Context, st store.Store) (map[string]iceberg.Type, error) {
	t, _, err := tablemeta.Read(ctx, st)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the table's partition columns: %w", err)
	}
	out := map[string]iceberg.Type{}
	for _, c := range t.PartitionColumns {
		switch {
		case c.Type.Kind == tablemeta.Date && c.Layout == time.DateOnly:
			out[c.Name] = iceberg.PrimitiveTypes.Date
		case c.Type.Kind == tablemeta.Int:
			out[c.Name] = iceberg.PrimitiveTypes.Int32
		}
	}
	return out, nil
}
