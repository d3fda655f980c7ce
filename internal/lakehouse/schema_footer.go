package lakehouse

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/partition"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// The fallback source of a publish's schema: the data files' footers, for
// a table without table.json (one committed to only before pswap kept
// it). A table with table.json is published with its schema (tableSource).

// SchemaFunc returns the Arrow schema of a generation's data. The default,
// [FooterSchema], reads the footer of its first file. The metadata calls it
// only for a table without table.json, when a generation's schema
// fingerprint differs from the published one.
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

// footerSource is the source of a generation's Arrow schema (a footer's):
// its columns as iceberg-go 0.7.0's table.ArrowTypeToIceberg maps them,
// without field ids (the table assigns them: idPlan), and the partition
// columns as strings.
func footerSource(as *arrow.Schema, key partition.Key) (source, error) {
	var src source
	for _, f := range as.Fields() {
		t, err := footerType(f)
		if err != nil {
			return source{}, err
		}
		src.fields = append(src.fields, iceberg.NestedField{Name: f.Name, Type: t, Required: !f.Nullable})
	}
	for _, c := range key.Columns() {
		src.parts = append(src.parts, iceberg.NestedField{Name: c.Name, Type: iceberg.PrimitiveTypes.String})
	}
	return src, nil
}

// footerType is the Iceberg v2 type of an Arrow column, as iceberg-go
// 0.7.0's table.ArrowTypeToIceberg maps it (nanosecond timestamps read as
// microseconds), except that a type only format version 3 has is refused
// here rather than when the metadata is built. Its nested fields have no
// ids: iceberg-go took the files', pswap's table assigns them (idPlan), so
// that readers resolve nested columns of files without ids by name
// (nameMapping), as they do top-level ones.
//
// It is the mapping of tables from before table.json, kept as it was so
// that their published types stay; tables with table.json map its types
// (icebergType), which tablemeta.TypeFromArrow derived from the data.
func footerType(f arrow.Field) (iceberg.Type, error) {
	t, err := arrowType(f.Type)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q of type %s has no Iceberg type: %v", ErrSchema, f.Name, f.Type, err)
	}
	return t, nil
}

// utcAliases are the Arrow time zones of an Iceberg timestamptz.
var utcAliases = []string{"UTC", "+00:00", "Etc/UTC", "Z"}

func arrowType(dt arrow.DataType) (iceberg.Type, error) {
	switch dt := dt.(type) {
	case *arrow.StructType:
		fields := make([]iceberg.NestedField, 0, dt.NumFields())
		for _, f := range dt.Fields() {
			t, err := arrowType(f.Type)
			if err != nil {
				return nil, err
			}
			doc, _ := f.Metadata.GetValue("doc")
			fields = append(fields, iceberg.NestedField{Name: f.Name, Type: t, Required: !f.Nullable, Doc: doc})
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case *arrow.MapType:
		kt, err := arrowType(dt.KeyType())
		if err != nil {
			return nil, err
		}
		vt, err := arrowType(dt.ItemType())
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyType: kt, ValueType: vt, ValueRequired: !dt.ItemField().Nullable}, nil
	case arrow.ListLikeType:
		ef := dt.ElemField()
		et, err := arrowType(ef.Type)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{Element: et, ElementRequired: !ef.Nullable}, nil
	case *arrow.DictionaryType:
		return arrowType(dt.ValueType)
	case *arrow.RunEndEncodedType:
		return arrowType(dt.Encoded())
	}
	return arrowPrimitive(dt)
}

// arrowPrimitive is the Iceberg type of a primitive Arrow type.
func arrowPrimitive(dt arrow.DataType) (iceberg.Type, error) {
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
