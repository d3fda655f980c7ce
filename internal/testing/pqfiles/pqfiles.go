package pqfiles

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/pqscan"
)

// ArrowParquet is rec written by Arrow's Parquet writer with props (nil:
// the defaults) and the Arrow writer options aopts.
func ArrowParquet(t testing.TB, rec arrow.RecordBatch, props *parquet.WriterProperties, aopts ...pqarrow.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.NewArrowWriterProperties(aopts...))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// WriteArrowFile writes rec to path with Arrow's Parquet writer and props.
func WriteArrowFile(t *testing.T, path string, rec arrow.RecordBatch, props *parquet.WriterProperties) {
	t.Helper()
	if err := os.WriteFile(path, ArrowParquet(t, rec, props), 0o644); err != nil {
		t.Fatal(err)
	}
}

// RefColsum is colsum128's row sum computed by its definition, one value
// at a time from each value's canonical (rowsum128) encoding.
func RefColsum(t testing.TB, rec arrow.RecordBatch, canon *arrow.Schema) checksum.Sum {
	t.Helper()
	encs := make([]checksum.ArrowEnc, rec.NumCols())
	for c, col := range rec.Columns() {
		var err error
		if encs[c], err = checksum.ArrowEncoder(col, canon.Field(c).Type); err != nil {
			t.Fatal(err)
		}
	}
	var sum checksum.Sum
	for i := 0; i < int(rec.NumRows()); i++ {
		var acc uint64
		for c, e := range encs {
			acc = checksum.FoldValue(acc, checksum.ValueHash(e(nil, i), checksum.ColSeed(c)))
		}
		sum.AddFold(acc)
	}
	return sum
}

// PrimitiveRecord is n rows of every primitive type the fast scan hashes,
// optional columns with nulls (one null in every seventh row, a column of
// nulls only), NaNs, negative and out-of-range values.
func PrimitiveRecord(t testing.TB, n int, seed int64) arrow.RecordBatch {
	t.Helper()
	fields := []arrow.Field{
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "t32", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "t64", Type: arrow.FixedWidthTypes.Time64us},
		{Name: "dec9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "dec18", Type: &arrow.Decimal128Type{Precision: 18, Scale: 3}},
		{Name: "dec38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 5}, Nullable: true},
		{Name: "dec50", Type: &arrow.Decimal256Type{Precision: 50, Scale: 0}, Nullable: true},
		{Name: "fix", Type: &arrow.FixedSizeBinaryType{ByteWidth: 4}, Nullable: true},
		{Name: "nulls", Type: arrow.BinaryTypes.String, Nullable: true},
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	for i := range n {
		null := i%7 == 3
		word := func(k int) string { return fmt.Sprintf("w%d", r.IntN(k)) }
		for c, fb := range b.Fields() {
			if fields[c].Nullable && (null || c == len(fields)-1) {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.BooleanBuilder:
				fb.Append(r.IntN(3) == 0)
			case *array.Int8Builder:
				fb.Append(int8(r.IntN(256) - 128))
			case *array.Int16Builder:
				fb.Append(int16(r.IntN(65536) - 32768))
			case *array.Int32Builder:
				fb.Append(int32(r.Uint32()))
			case *array.Int64Builder:
				fb.Append(int64(i)*1000 - int64(r.IntN(500)))
			case *array.Uint8Builder:
				fb.Append(uint8(r.IntN(256)))
			case *array.Uint16Builder:
				fb.Append(uint16(r.IntN(65536)))
			case *array.Uint32Builder:
				fb.Append(r.Uint32())
			case *array.Uint64Builder:
				fb.Append(r.Uint64())
			case *array.Float32Builder:
				fb.Append([]float32{float32(math.NaN()), 1.5, float32(math.Copysign(0, -1)), float32(r.NormFloat64())}[r.IntN(4)])
			case *array.Float64Builder:
				fb.Append([]float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1), r.NormFloat64()}[r.IntN(4)])
			case *array.StringBuilder:
				fb.Append(word(50 + i/10))
			case *array.BinaryBuilder:
				fb.Append([]byte(word(1000)))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(r.IntN(40000) - 20000))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(1_800_000_000_000 + int64(i)*1000 + int64(r.IntN(100))))
			case *array.Time32Builder:
				fb.Append(arrow.Time32(r.IntN(86_400_000)))
			case *array.Time64Builder:
				fb.Append(arrow.Time64(r.Int64N(86_400_000_000)))
			case *array.Decimal128Builder:
				p := fields[c].Type.(*arrow.Decimal128Type).Precision
				v := r.Int64N(999_999_999) - 499_999_999
				if p > 18 {
					fb.Append(decimal128.FromI64(v).Mul(decimal128.FromI64(-r.Int64N(1 << 62))))
				} else if p > 9 {
					fb.Append(decimal128.FromI64(v * 1_000_000))
				} else {
					fb.Append(decimal128.FromI64(v))
				}
			case *array.Decimal256Builder:
				fb.Append(decimal256.FromI64(r.Int64N(1 << 62)).Mul(decimal256.FromI64(-r.Int64N(1 << 62))))
			case *array.FixedSizeBinaryBuilder:
				fb.Append([]byte(fmt.Sprintf("%04d", r.IntN(10000))))
			default:
				t.Fatalf("no value for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// FastScanSeeds are small Parquet files of PrimitiveRecord's rows in the
// encodings the fast scan decodes.
func FastScanSeeds(t testing.TB) [][]byte {
	rec := PrimitiveRecord(t, 200, 2)
	defer rec.Release()
	var out [][]byte
	for i, props := range [][]parquet.WriterProperty{
		{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(512)},
		{parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDictionaryDefault(false),
			parquet.WithEncodingFor("i64", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("i32", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("f64", parquet.Encodings.ByteStreamSplit), parquet.WithEncodingFor("s", parquet.Encodings.DeltaLengthByteArray),
			parquet.WithEncodingFor("bin", parquet.Encodings.DeltaByteArray)},
		{parquet.WithStoreDecimalAsInteger(true)}, // and INT96 timestamps
	} {
		var aopts []pqarrow.WriterOption
		if i == 2 {
			aopts = append(aopts, pqarrow.WithDeprecatedInt96Timestamps(true))
		}
		out = append(out, ArrowParquet(t, rec, parquet.NewWriterProperties(props...), aopts...))
	}
	return out
}

// DefinitionChecksum is the colsum128 checksum of a Parquet file computed
// by its definition, value by value, over records that Arrow's reader
// decodes with its defaults (no dictionaries, Go's allocator), INT96
// columns read in microseconds beside Arrow's records (Arrow reads them in
// nanoseconds: pqscan's int96.go).
func DefinitionChecksum(t testing.TB, data []byte) string {
	t.Helper()
	pr, err := pqscan.Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	_, canon, err := pqscan.CheckFooter(pr, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var sum checksum.Sum
	var rows int64
	err = pqscan.ReadRecords(context.Background(), pr, canon, 1000, func(rec arrow.RecordBatch) error {
		sum.Add(RefColsum(t, rec, canon.Arrow))
		rows += rec.NumRows()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return checksum.ColSumOf(canon.Text, rows, sum)
}
