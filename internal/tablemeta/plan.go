package tablemeta

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// PlanOptions tune Plan and Evolve.
type PlanOptions struct {
	// Text: the data was converted from text (CSV, JSON Lines) with
	// inferred types, so an integer column may go into a double column
	// (its values were integers only by chance).
	Text bool
	// FillMissing: a nullable column of the table that the data lacks is
	// accepted (Plan's schema has it; the data is stored with NULL in
	// it), as TableOptions.FillMissingNullable asks. A NOT NULL column
	// the data lacks is still ErrSchemaMismatch.
	FillMissing bool
}

// Plan checks data's schema (as staging derives it) against the table's
// and returns the Arrow schema the data must be stored in: the table's
// columns, in the table's order, of their canonical types (Type.Arrow),
// nullable where both the table's column and the data's are. Data whose schema equals it is stored as it is; other
// data is converted (staging does it). Plan accepts:
//   - the same columns in any order;
//   - a type that maps to the column's type (int8 for int, a timestamp in
//     milliseconds for timestamp, large_string for string ...), and a
//     timestamp in nanoseconds for timestamp (staging refuses a value that
//     is not a whole microsecond);
//   - the safe promotions: int into long, float into double, decimal(P,S)
//     into decimal(P',S) with P' >= P, timestamp into timestamp_ns (and
//     with opts.Text, int or long into double);
//   - a nullable column into a NOT NULL one (staging then refuses a null);
//   - a column of nulls only into any nullable column.
//
// Anything else is ErrSchemaMismatch naming the column: a table column the
// data lacks (dropped or renamed), a data column the table lacks (added:
// see Evolve), another type. Nested types follow the same rules field by
// field.
func (t *Table) Plan(data *arrow.Schema, opts PlanOptions) (*arrow.Schema, error) {
	if data == nil {
		return nil, fmt.Errorf("%w: no schema", ErrSchemaMismatch)
	}
	byName := map[string]arrow.Field{}
	for _, f := range data.Fields() {
		byName[f.Name] = f
	}
	var missing, extra, required []string
	for _, f := range t.Schema.Fields {
		if _, ok := byName[f.Name]; !ok {
			missing = append(missing, f.Name)
			if !f.Nullable {
				required = append(required, f.Name)
			}
		}
	}
	for _, f := range data.Fields() {
		if _, ok := t.Schema.Field(f.Name); !ok {
			extra = append(extra, f.Name)
		}
	}
	if len(extra) > 0 || len(missing) > 0 && (!opts.FillMissing || len(required) > 0) {
		if opts.FillMissing && len(extra) == 0 { // required columns missing
			return nil, fmt.Errorf("%w: column %s of the table is missing from the data, and it is NOT NULL: only nullable columns are filled with NULL", ErrSchemaMismatch, quoted(required))
		}
		err := columnsError(missing, extra)
		if len(extra) == 0 && len(required) == 0 {
			err = fmt.Errorf("%w; to write NULL in a nullable column that an input lacks, --fill-missing-nullable (TableOptions.FillMissingNullable)", err)
		}
		return nil, err
	}
	out := make([]arrow.Field, len(t.Schema.Fields))
	for i, f := range t.Schema.Fields {
		d, ok := byName[f.Name]
		if !ok { // FillMissing: a nullable column, all NULL
			out[i] = f.Arrow()
			out[i].Nullable = true
			continue
		}
		if err := compatible(f.Name, d.Type, f.Type, opts); err != nil {
			return nil, err
		}
		out[i] = f.Arrow()
		// Data without nulls fits a nullable column as it is; nullable
		// data goes into a NOT NULL column only without nulls (checked on
		// the values).
		out[i].Nullable = f.Nullable && d.Nullable
	}
	return arrow.NewSchema(out, nil), nil
}

// Missing returns the columns of the table that data lacks.
func (t *Table) Missing(data *arrow.Schema) []string {
	var out []string
	for _, f := range t.Schema.Fields {
		if !data.HasField(f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

func quoted(names []string) string {
	qs := make([]string, len(names))
	for i, n := range names {
		qs[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(qs, ", ")
}

// columnsError describes dropped, renamed and added columns.
func columnsError(missing, extra []string) error {
	q := quoted
	switch {
	case len(missing) > 0 && len(extra) > 0:
		return fmt.Errorf("%w: column %s of the table is missing from the data, which has column %s that the table lacks (renamed? a table's columns are never renamed or dropped)", ErrSchemaMismatch, q(missing), q(extra))
	case len(missing) > 0:
		return fmt.Errorf("%w: column %s of the table is missing from the data (a table's columns are never dropped)", ErrSchemaMismatch, q(missing))
	}
	return fmt.Errorf("%w: column %s is not in the table's schema (add it on purpose with --evolve-schema, or the library's TableOptions.EvolveSchema)", ErrSchemaMismatch, q(extra))
}

// compatible reports whether data of Arrow type dt can be stored in a
// column of table type want (path names the column).
func compatible(path string, dt arrow.DataType, want Type, opts PlanOptions) error {
	if dt.ID() == arrow.NULL {
		return nil // nulls only: any type holds them (nullability is checked on the values)
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	// A nested type's kind, and its fields checked one by one below: a
	// list of nulls only (an all-null list column: its element type is
	// null) fits the table's list whatever its element type.
	var got Type
	switch dt.ID() {
	case arrow.STRUCT:
		got = Type{Kind: Struct}
	case arrow.LIST, arrow.LARGE_LIST:
		got = Type{Kind: List}
	case arrow.MAP:
		got = Type{Kind: Map}
	default:
		var err error
		if got, err = TypeFromArrow(path, dt); err != nil {
			return err
		}
	}
	retyped := func() error {
		g := got.String()
		if got.Kind.Nested() {
			g = dt.String()
		}
		return fmt.Errorf("%w: column %q is %s in the data, the table's column is %s", ErrSchemaMismatch, path, g, want)
	}
	if got.Kind != want.Kind {
		switch {
		case got.Kind == Int && want.Kind == Long,
			got.Kind == Float && want.Kind == Double,
			got.Kind == Timestamp && want.Kind == TimestampNs,
			got.Kind == TimestampTZ && want.Kind == TimestampTZNs,
			got.Kind == TimestampNs && want.Kind == Timestamp, // converted; a value not a whole microsecond is refused
			got.Kind == TimestampTZNs && want.Kind == TimestampTZ,
			opts.Text && (got.Kind == Int || got.Kind == Long) && want.Kind == Double:
			return nil
		}
		return retyped()
	}
	switch want.Kind {
	case Decimal:
		if got.Scale != want.Scale || got.Precision > want.Precision {
			return retyped()
		}
	case Fixed:
		if got.Length != want.Length {
			return retyped()
		}
	case Struct:
		st := dt.(*arrow.StructType)
		var missing, extra []string
		for _, f := range want.Fields {
			if _, ok := st.FieldByName(f.Name); !ok {
				missing = append(missing, path+"."+f.Name)
			}
		}
		for _, f := range st.Fields() {
			if !slices.ContainsFunc(want.Fields, func(w Field) bool { return w.Name == f.Name }) {
				extra = append(extra, path+"."+f.Name)
			}
		}
		if len(missing) > 0 || len(extra) > 0 {
			return columnsError(missing, extra)
		}
		for _, f := range want.Fields {
			d, _ := st.FieldByName(f.Name)
			if err := compatible(path+"."+f.Name, d.Type, f.Type, opts); err != nil {
				return err
			}
		}
	case List:
		return compatible(path+".element", elemType(dt), want.Element.Type, opts)
	case Map:
		mt := dt.(*arrow.MapType)
		if err := compatible(path+".key", mt.KeyType(), want.Key.Type, opts); err != nil {
			return err
		}
		return compatible(path+".value", mt.ItemType(), want.Value.Type, opts)
	}
	return nil
}

func elemType(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	return dt.(arrow.ListLikeType).Elem()
}

// Evolve returns the table with data's new top-level columns added, as
// nullable columns (older generations lack them: readers see nulls) with
// fresh ids, and the next schema id; added names them. A data column the
// table has must still fit it (see Plan): evolving never retypes, renames
// or drops a column. Without new columns it returns t itself and no
// names.
func (t *Table) Evolve(data *arrow.Schema, opts PlanOptions) (evolved *Table, added []string, err error) {
	n := t.Clone()
	next := n.LastColumnID + 1
	var fresh []Field
	for _, f := range data.Fields() {
		if _, ok := t.Schema.Field(f.Name); ok {
			continue
		}
		tf, err := fieldFromArrow(f.Name, f)
		if err != nil {
			return nil, nil, err
		}
		fs := []Field{tf}
		microTimestamps(fs)
		tf = fs[0]
		tf.Nullable = true
		fresh = append(fresh, tf)
		added = append(added, f.Name)
	}
	if len(fresh) == 0 {
		return t, nil, nil
	}
	assignIDs(fresh, &next)
	n.Schema.Fields = append(n.Schema.Fields, fresh...)
	n.LastColumnID = next - 1
	n.SchemaID++
	if err := n.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrSchemaMismatch, err)
	}
	if _, err := n.Plan(data, opts); err != nil {
		return nil, nil, err
	}
	return n, added, nil
}

// SameTypes reports whether two schemas have the same columns with the
// same types and nullability, ignoring ids and docs.
func (s Schema) SameTypes(o Schema) bool {
	return fieldsSameTypes(s.Fields, o.Fields)
}

func fieldsSameTypes(a, b []Field) bool {
	return slices.EqualFunc(a, b, func(x, y Field) bool {
		return x.Name == y.Name && x.Nullable == y.Nullable && typesSame(x.Type, y.Type)
	})
}

func typesSame(a, b Type) bool {
	if a.Kind != b.Kind || a.Precision != b.Precision || a.Scale != b.Scale || a.Length != b.Length || !fieldsSameTypes(a.Fields, b.Fields) {
		return false
	}
	for _, p := range [][2]*Field{{a.Element, b.Element}, {a.Key, b.Key}, {a.Value, b.Value}} {
		if (p[0] == nil) != (p[1] == nil) {
			return false
		}
		if p[0] != nil && (p[0].Nullable != p[1].Nullable || !typesSame(p[0].Type, p[1].Type)) {
			return false
		}
	}
	return true
}
