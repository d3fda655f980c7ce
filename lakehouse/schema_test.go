package lakehouse_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pswap/pswap/lakehouse"
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
		got, err := lakehouse.IcebergType(f)
		old, oldErr := oldIcebergType(dt)
		switch {
		case oldErr == nil && !v3Only(old):
			if err != nil || !got.Equals(old) {
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

// A generation whose columns have no Iceberg v2 form, or whose nested
// Parquet field ids collide with the table's column ids, is ErrSchema and
// writes nothing (before, iceberg-go's builder reported the first as an
// error of its own, and iceberg.NewSchema panicked on the second).
func TestPublishRefusesSchemasIcebergCannotHold(t *testing.T) {
	for _, c := range []struct {
		name, want string
		fields     []arrow.Field
	}{
		{"null column", "no Iceberg type", []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "n", Type: arrow.Null, Nullable: true}}},
		{"colliding field id", "field id 1 is used twice", []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "tags", Type: arrow.ListOfField(withID(arrow.Field{Name: "element", Type: arrow.BinaryTypes.String}, 1)), Nullable: true}}},
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
