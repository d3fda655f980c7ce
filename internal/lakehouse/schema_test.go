package lakehouse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/storetest"
	"github.com/pswap/pswap/swap"
)

func withID(f arrow.Field, id int) arrow.Field {
	f.Metadata = arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(id)})
	return f
}

// TestIcebergTypeMatchesIcebergGo: pswap maps every Arrow type as
// iceberg-go's table.ArrowTypeToIceberg did (with nanosecond timestamps
// read as microseconds), and refuses with ErrSchema what it refused (it
// panicked on some) and what only format version 3 has, which a v2 table's
// metadata could not hold.
func TestIcebergTypeMatchesIcebergGo(t *testing.T) {
	str := arrow.Field{Name: "element", Type: arrow.BinaryTypes.String, Nullable: true}
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Uint64, arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		&arrow.Decimal32Type{Precision: 9, Scale: 2}, &arrow.Decimal64Type{Precision: 18, Scale: 3},
		&arrow.Decimal128Type{Precision: 38, Scale: 10}, &arrow.Decimal256Type{Precision: 60, Scale: 1},
		arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.StringView,
		arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary, arrow.BinaryTypes.BinaryView,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64,
		arrow.FixedWidthTypes.Time32ms, arrow.FixedWidthTypes.Time64us, arrow.FixedWidthTypes.Time64ns,
		&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Millisecond},
		&arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Nanosecond},
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Etc/UTC"},
		&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "+00:00"}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Z"},
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"},
		&arrow.FixedSizeBinaryType{ByteWidth: 16}, extensions.NewUUIDType(),
		arrow.Null, arrow.FixedWidthTypes.Duration_ms, arrow.FixedWidthTypes.MonthInterval,
		arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String),
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String},
		// Nested types need the Parquet field ids of their fields.
		arrow.ListOf(arrow.BinaryTypes.String),
		arrow.ListOfField(withID(str, 7)),
		arrow.LargeListOfField(withID(str, 7)),
		arrow.FixedSizeListOfField(3, withID(str, 7)),
		arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32}),
		arrow.StructOf(withID(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32, Metadata: arrow.NewMetadata([]string{"doc"}, []string{"a doc"})}, 8),
			withID(arrow.Field{Name: "y", Type: arrow.ListOfField(withID(str, 10)), Nullable: true}, 9)),
		arrow.StructOf(withID(arrow.Field{Name: "n", Type: arrow.Null, Nullable: true}, 8)),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64),
	}
	m := arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64)
	withIDs := *m
	kv := withIDs.Elem().(*arrow.StructType).Fields()
	withIDs = *arrow.MapOfWithMetadata(kv[0].Type, arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"11"}),
		kv[1].Type, arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"12"}))
	types = append(types, &withIDs)

	mapped, refused := 0, 0
	for _, dt := range types {
		f := arrow.Field{Name: "c", Type: dt, Nullable: true}
		next := 100
		got, err := lakehouse.IcebergType(f, nil, &next)
		old, oldErr := oldIcebergType(dt)
		switch {
		case oldErr != nil && strings.Contains(oldErr.Error(), "missing field_id") && err == nil:
			// iceberg-go needs the files' ids of nested fields; pswap
			// assigns its own (TestNestedFieldIDs).
			mapped++
		case oldErr == nil && !v3Only(old):
			if err != nil || !sameShape(got, old) {
				t.Errorf("%s: pswap %v (%v), iceberg-go %v", dt, got, err, old)
			}
			mapped++
		default:
			if !errors.Is(err, lakehouse.ErrSchema) {
				t.Errorf("%s: pswap %v (%v), iceberg-go %v (%v): want ErrSchema", dt, got, err, old, oldErr)
			}
			refused++
		}
	}
	if mapped < 30 || refused < 10 {
		t.Fatalf("%d types mapped, %d refused: the list lost its cases", mapped, refused)
	}
}

// oldIcebergType is what schema.go called before, which panicked on some
// types.
func oldIcebergType(dt arrow.DataType) (t iceberg.Type, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	return table.ArrowTypeToIceberg(dt, true)
}

// v3Only reports whether a type (or one nested in it) needs format
// version 3, where iceberg-go's builder refused it in a v2 table.
func v3Only(t iceberg.Type) bool {
	switch t := t.(type) {
	case iceberg.UnknownType, iceberg.VariantType, iceberg.GeometryType, iceberg.GeographyType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return true
	case *iceberg.StructType:
		for _, f := range t.FieldList {
			if v3Only(f.Type) {
				return true
			}
		}
	case *iceberg.ListType:
		return v3Only(t.Element)
	case *iceberg.MapType:
		return v3Only(t.KeyType) || v3Only(t.ValueType)
	}
	return false
}

// A generation whose columns have no Iceberg v2 form is ErrSchema and
// writes nothing (before, iceberg-go's builder reported it as an error of
// its own). Nested Parquet field ids that collide with the table's column
// ids no longer matter: the table assigns nested ids (TestNestedFieldIDs).
func TestPublishRefusesSchemasIcebergCannotHold(t *testing.T) {
	for _, c := range []struct {
		name, want string
		fields     []arrow.Field
	}{
		{"null column", "no Iceberg type", []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "n", Type: arrow.Null, Nullable: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memstore.New(memstore.Options{})
			res := commit(t, mem, "dt=2026-11-01", 3, "a", swap.Options{})
			schema := func(context.Context, store.Store, []swap.FileRef) (*arrow.Schema, error) {
				return arrow.NewSchema(c.fields, nil), nil
			}
			_, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
				lakehouse.Options{Schema: schema})
			if !errors.Is(err, lakehouse.ErrSchema) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("publish: %v, want ErrSchema saying %q", err, c.want)
			}
			if _, v, err := lakehouse.Latest(ctx, mem); v != 0 || err != nil {
				t.Fatalf("a refused publish wrote version %d (%v)", v, err)
			}
		})
	}
}

// FooterSchema fetches a data file's footer with one ranged GET of its
// tail, not the whole file (a first publish of a table of large files
// used to download one of them), and reads the schema the footer holds.
func TestFooterSchemaReadsOnlyTheTail(t *testing.T) {
	mem := memstore.New()
	res := commit(t, mem, "dt=2026-11-29", 200_000, "tail", swap.Options{})
	snap, err := swap.ReadManifest(ctx, mem, "dt=2026-11-29", res.Generation)
	if err != nil {
		t.Fatal(err)
	}
	files := swap.Files(mem, snap)
	if len(files) != 1 || files[0].Size < 4*store.DefaultTail {
		t.Fatalf("want one file of more than %d bytes: %+v", 4*store.DefaultTail, files)
	}
	counted := storetest.NewCounting(mem)
	s, err := lakehouse.FooterSchema(ctx, counted, files)
	if err != nil {
		t.Fatal(err)
	}
	if got := counted.Counts(); got["get-range"] != 1 || counted.Total() != 1 {
		t.Fatalf("requests %v, want one get-range", got)
	}
	if names := fmt.Sprint(s.Fields()[0].Name, s.Fields()[1].Name, s.Fields()[2].Name); s.NumFields() != 3 || names != "idnameamount" {
		t.Fatalf("schema %v", s)
	}
	// Without the manifest's size, one Stat finds it.
	counted.Reset()
	bare := []swap.FileRef{{Key: files[0].Key, URI: files[0].URI}}
	s2, err := lakehouse.FooterSchema(ctx, counted, bare)
	if err != nil || !s2.Equal(s) {
		t.Fatalf("without a size: %v, %v", s2, err)
	}
	if got := counted.Counts(); got["stat"] != 1 || got["get-range"] != 1 || counted.Total() != 2 {
		t.Fatalf("without a size: requests %v, want a stat and a get-range", got)
	}
	// A file that is not Parquet: ErrSchema naming it.
	if _, err := mem.Put(ctx, "junk.parquet", bytes.Repeat([]byte("x"), 1000), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = lakehouse.FooterSchema(ctx, mem, []swap.FileRef{{Key: "junk.parquet", URI: "mem://junk.parquet"}})
	if !errors.Is(err, lakehouse.ErrSchema) || !strings.Contains(err.Error(), "junk.parquet") {
		t.Fatalf("a file that is not Parquet: %v", err)
	}
	// A missing file: the store's error, not ErrSchema.
	_, err = lakehouse.FooterSchema(ctx, mem, []swap.FileRef{{Key: "gone.parquet", URI: "mem://gone.parquet", File: files[0].File}})
	if !errors.Is(err, store.ErrNotFound) || errors.Is(err, lakehouse.ErrSchema) {
		t.Fatalf("a missing file: %v", err)
	}
}

// sameShape compares two types without their nested field ids: pswap
// assigns those itself, where iceberg-go takes the files' ids.
func sameShape(a, b iceberg.Type) bool {
	switch a := a.(type) {
	case *iceberg.StructType:
		b, ok := b.(*iceberg.StructType)
		if !ok || len(a.FieldList) != len(b.FieldList) {
			return false
		}
		for i, f := range a.FieldList {
			g := b.FieldList[i]
			if f.Name != g.Name || f.Required != g.Required || f.Doc != g.Doc || !sameShape(f.Type, g.Type) {
				return false
			}
		}
		return true
	case *iceberg.ListType:
		b, ok := b.(*iceberg.ListType)
		return ok && a.ElementRequired == b.ElementRequired && sameShape(a.Element, b.Element)
	case *iceberg.MapType:
		b, ok := b.(*iceberg.MapType)
		return ok && a.ValueRequired == b.ValueRequired && sameShape(a.KeyType, b.KeyType) && sameShape(a.ValueType, b.ValueType)
	}
	return a.Equals(b)
}

// TestNestedFieldIDs: the fields nested in a list, a struct and a map get
// field ids from the table, unique and kept from one generation to the
// next, whether or not the files carry Parquet field ids (here a second
// generation whose file ids collide with the table's), and the name
// mapping maps every nested field, so that readers resolve nested columns
// of files without ids by name (before, such a column made every publish
// fail: "nested field element has no Parquet field id").
func TestNestedFieldIDs(t *testing.T) {
	str := arrow.Field{Name: "element", Type: arrow.BinaryTypes.String, Nullable: true}
	gen := func(ids bool) []arrow.Field {
		el, x := str, arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
		if ids {
			el, x = withID(el, 1), withID(x, 2)
		}
		return []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "tags", Type: arrow.ListOfField(el), Nullable: true},
			{Name: "info", Type: arrow.StructOf(x, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
			{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
		}
	}
	mem := memstore.New(memstore.Options{})
	var schemas []string
	for i, ids := range []bool{false, true} {
		res := commit(t, mem, fmt.Sprintf("dt=2026-11-0%d", i+1), 3, "nested", swap.Options{})
		schema := func(context.Context, store.Store, []swap.FileRef) (*arrow.Schema, error) {
			return arrow.NewSchema(gen(ids), nil), nil
		}
		if _, err := lakehouse.PublishCommit(ctx, mem, lakehouse.Commit{Partition: res.Partition, Generation: res.Generation, Seq: res.Seq},
			lakehouse.Options{Schema: schema}); err != nil {
			t.Fatalf("publish %d: %v", i+1, err)
		}
		_, v, err := lakehouse.Latest(ctx, mem)
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := store.ReadAll(ctx, mem, lakehouse.MetadataKey(v))
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Schemas []struct {
				ID     int               `json:"schema-id"`
				Fields []json.RawMessage `json:"fields"`
			} `json:"schemas"`
			Current    int               `json:"current-schema-id"`
			Properties map[string]string `json:"properties"`
		}
		if err := json.Unmarshal(data, &md); err != nil {
			t.Fatal(err)
		}
		var fields []json.RawMessage
		for _, s := range md.Schemas {
			if s.ID == md.Current {
				fields = s.Fields
			}
		}
		enc, _ := json.Marshal(fields)
		schemas = append(schemas, string(enc))
		ids := map[float64]string{}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for _, k := range []string{"id", "element-id", "key-id", "value-id"} {
					if id, ok := v[k].(float64); ok {
						if prev, dup := ids[id]; dup {
							t.Errorf("field id %v used by %s and %s", id, prev, path+"/"+k)
						}
						ids[id] = path + "/" + k
					}
				}
				for k, x := range v {
					walk(path+"/"+k, x)
				}
			case []any:
				for _, x := range v {
					walk(path, x)
				}
			}
		}
		var all any
		json.Unmarshal(enc, &all)
		walk("", all)
		if len(ids) != 10 { // id, tags, element, info, x, y, attrs, key, value, dt
			t.Errorf("version %d: %d field ids, want 10: %v", v, len(ids), ids)
		}
		var nm []struct {
			Names  []string          `json:"names"`
			Fields []json.RawMessage `json:"fields"`
		}
		if err := json.Unmarshal([]byte(md.Properties["schema.name-mapping.default"]), &nm); err != nil {
			t.Fatal(err)
		}
		nested := 0
		for _, f := range nm {
			nested += len(f.Fields)
		}
		if nested != 5 { // element; x, y; key, value
			t.Errorf("version %d: the name mapping maps %d nested fields, want 5: %s", v, nested, md.Properties["schema.name-mapping.default"])
		}
	}
	if schemas[0] != schemas[1] {
		t.Errorf("the second generation changed the schema's ids:\n%s\n%s", schemas[0], schemas[1])
	}
}
