package staging

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pq "github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

const testPrefix = "dt=2026-11-29/_pswap/gen/0001/"

func newMem(t testing.TB, opts Options) (*memstore.Store, *Stager) {
	t.Helper()
	st := memstore.New()
	return st, New(context.Background(), st, testPrefix, opts)
}

// fileBytes reads a staged file back from the store.
func fileBytes(t testing.TB, st store.Store, f manifest.File) []byte {
	t.Helper()
	b, _, err := store.ReadAll(context.Background(), st, testPrefix+f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != f.Size {
		t.Fatalf("%s: %d bytes in store, manifest says %d", f.Path, len(b), f.Size)
	}
	return b
}

// readArrow reads a whole Parquet file with Arrow's reader (pqarrow).
func readArrow(t testing.TB, b []byte) arrow.Table {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

// readParquetGo reads a whole Parquet file with parquet-go into T rows.
func readParquetGo[T any](t testing.TB, b []byte) []T {
	t.Helper()
	rows, err := pq.Read[T](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// keysUnder lists the keys of the store under the test prefix.
func keysUnder(t testing.TB, st store.Store, prefix string) []string {
	t.Helper()
	var keys []string
	for a, err := range st.List(context.Background(), prefix) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, a.Key)
	}
	return keys
}

type (
	contentT = manifest.Content
	storeT   = store.Store
)

// rowSchemaOf builds a schema from "name:type" specs; a trailing "!" makes
// the field non-nullable.
func rowSchemaOf(t testing.TB, specs ...string) *arrow.Schema {
	t.Helper()
	var fields []arrow.Field
	for _, spec := range specs {
		name, typ, _ := strings.Cut(spec, ":")
		f := arrow.Field{Name: name, Nullable: !strings.HasSuffix(typ, "!")}
		typ = strings.TrimSuffix(typ, "!")
		switch typ {
		case "int64":
			f.Type = arrow.PrimitiveTypes.Int64
		case "int32":
			f.Type = arrow.PrimitiveTypes.Int32
		case "float64":
			f.Type = arrow.PrimitiveTypes.Float64
		case "float16":
			f.Type = arrow.FixedWidthTypes.Float16
		case "utf8":
			f.Type = arrow.BinaryTypes.String
		case "binary":
			f.Type = arrow.BinaryTypes.Binary
		case "bool":
			f.Type = arrow.FixedWidthTypes.Boolean
		case "date32":
			f.Type = arrow.FixedWidthTypes.Date32
		case "timestamp[ms]":
			f.Type = &arrow.TimestampType{Unit: arrow.Millisecond}
		case "timestamp[us, UTC]":
			f.Type = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		case "decimal(10,2)":
			f.Type = &arrow.Decimal128Type{Precision: 10, Scale: 2}
		default:
			t.Fatalf("rowSchemaOf: unknown type %q", typ)
		}
		fields = append(fields, f)
	}
	return arrow.NewSchema(fields, nil)
}
