package staging

import (
	"github.com/pswap/pswap/internal/checksum"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// scanBoth scans a file with the fast scan allowed and with the Arrow path
// alone, and returns both results and how many row groups the fast scan
// hashed.
func scanBoth(t testing.TB, path string) (fast, slow string, hashed int64, fastErr, slowErr error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	scan := func(off bool) (string, int64, error) {
		noFastScan = off
		defer func() { noFastScan = false }()
		before := fastGroups.Load()
		rows, sum, canon, err := scanParquet(context.Background(), f, fi.Size(), false, false)
		n := fastGroups.Load() - before
		if err != nil {
			return "", n, err
		}
		return checksum.ColSumOf(canon.text, rows, sum.Col), n, nil
	}
	fast, hashed, fastErr = scan(false)
	slow, _, slowErr = scan(true)
	return fast, slow, hashed, fastErr, slowErr
}

// TestFastScanMatchesArrowOnCorpus: on every file of the test corpora the
// fast scan and the Arrow path agree (the same checksum, or both refuse).
func TestFastScanMatchesArrowOnCorpus(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*/*.parquet")
	if len(paths) < 20 {
		t.Fatalf("corpus has %d files", len(paths))
	}
	var fastFiles int
	for _, p := range paths {
		fast, slow, hashed, fe, se := scanBoth(t, p)
		if (fe == nil) != (se == nil) || fast != slow {
			t.Errorf("%s: fast scan %s (%v), Arrow %s (%v)", p, fast, fe, slow, se)
		}
		if hashed > 0 {
			fastFiles++
		}
		t.Logf("%s: %d row groups by the fast scan, err %v", filepath.Base(p), hashed, fe)
	}
	if fastFiles == 0 {
		t.Fatal("no file took the fast scan")
	}
}

// primitiveRecord is n rows of every primitive type the fast scan hashes,
// optional columns with nulls (one null in every seventh row, a column of
// nulls only), NaNs, negative and out-of-range values.
func primitiveRecord(t testing.TB, n int, seed int64) arrow.RecordBatch {
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

// TestFastScanEncodings: files of every primitive type written by Arrow
// in the encodings, page versions, codecs and layouts the fast scan
// decodes are hashed by it (every row group) to the checksum of the Arrow
// path and of the definition; an encoding it leaves to Arrow gives the
// same checksum too.
func TestFastScanEncodings(t *testing.T) {
	rec := primitiveRecord(t, 5000, 1)
	defer rec.Release()
	v2 := parquet.WithDataPageVersion(parquet.DataPageV2)
	delta := func(names ...string) []parquet.WriterProperty {
		var ps []parquet.WriterProperty
		for _, n := range names {
			ps = append(ps, parquet.WithDictionaryFor(n, false), parquet.WithEncodingFor(n, parquet.Encodings.DeltaBinaryPacked))
		}
		return ps
	}
	for _, c := range []struct {
		name  string
		props []parquet.WriterProperty
		fast  bool              // every row group by the fast scan
		want  map[string]string // column: an encoding its chunks use
	}{
		{"dictionary, snappy, one row group", []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy)}, true, map[string]string{"s": "RLE_DICTIONARY", "i32": "RLE_DICTIONARY"}},
		{"plain, uncompressed", []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}, true, map[string]string{"s": "PLAIN", "b": "PLAIN"}},
		{"dictionary falls back to PLAIN mid-chunk, zstd, tiny pages", []parquet.WriterProperty{
			parquet.WithDictionaryPageSizeLimit(256), parquet.WithDataPageSize(300), parquet.WithCompression(compress.Codecs.Zstd)}, true,
			map[string]string{"s": "PLAIN", "i64": "RLE_DICTIONARY"}},
		{"DataPage v2, gzip, row groups of 777", []parquet.WriterProperty{v2, parquet.WithCompression(compress.Codecs.Gzip), parquet.WithMaxRowGroupLength(777)}, true,
			map[string]string{"b": "RLE", "s": "RLE_DICTIONARY"}},
		{"DataPage v2, plain, uncompressed, pages of 100 rows", []parquet.WriterProperty{v2, parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(1), parquet.WithBatchSize(100)}, true, nil},
		{"decimals as integers", []parquet.WriterProperty{parquet.WithStoreDecimalAsInteger(true)}, true,
			map[string]string{"dec9": "PLAIN", "dec18": "PLAIN", "dec38": "PLAIN", "fix": "PLAIN"}},
		{"decimals as integers, plain, v2", []parquet.WriterProperty{parquet.WithStoreDecimalAsInteger(true), parquet.WithDictionaryDefault(false), v2}, true,
			map[string]string{"dec9": "PLAIN", "dec18": "PLAIN"}},
		{"DELTA_BINARY_PACKED integers, v2", append(delta("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "d", "ts", "ms", "t32", "t64", "dec9", "dec18"),
			v2, parquet.WithStoreDecimalAsInteger(true)), true,
			map[string]string{"i8": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED"}},
		{"BYTE_STREAM_SPLIT floats, lz4_raw", []parquet.WriterProperty{
			parquet.WithDictionaryFor("f32", false), parquet.WithEncodingFor("f32", parquet.Encodings.ByteStreamSplit),
			parquet.WithDictionaryFor("f64", false), parquet.WithEncodingFor("f64", parquet.Encodings.ByteStreamSplit),
			parquet.WithDictionaryFor("fix", false), parquet.WithEncodingFor("fix", parquet.Encodings.ByteStreamSplit),
			parquet.WithCompression(compress.Codecs.Lz4Raw)}, true,
			map[string]string{"f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT", "fix": "BYTE_STREAM_SPLIT"}},
		{"DELTA_LENGTH_BYTE_ARRAY strings", []parquet.WriterProperty{
			parquet.WithDictionaryFor("s", false), parquet.WithEncodingFor("s", parquet.Encodings.DeltaLengthByteArray),
			parquet.WithDictionaryFor("bin", false), parquet.WithEncodingFor("bin", parquet.Encodings.DeltaLengthByteArray)}, true,
			map[string]string{"s": "DELTA_LENGTH_BYTE_ARRAY"}},
		{"DELTA_BYTE_ARRAY strings, v2", []parquet.WriterProperty{v2,
			parquet.WithDictionaryFor("s", false), parquet.WithEncodingFor("s", parquet.Encodings.DeltaByteArray),
			parquet.WithDictionaryFor("bin", false), parquet.WithEncodingFor("bin", parquet.Encodings.DeltaByteArray)}, true,
			map[string]string{"s": "DELTA_BYTE_ARRAY"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.parquet")
			writeArrowFile(t, path, rec, parquet.NewWriterProperties(c.props...))
			fast, slow, hashed, fe, se := scanBoth(t, path)
			if fe != nil || se != nil {
				t.Fatalf("fast scan: %v, Arrow: %v", fe, se)
			}
			if fast != slow {
				t.Fatalf("fast scan %s, Arrow %s", fast, slow)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if def := definitionChecksum(t, data); fast != def {
				t.Fatalf("fast scan %s, by the definition %s", fast, def)
			}
			pr, err := file.NewParquetReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			groups := int64(pr.NumRowGroups())
			defer pr.Close()
			for col, enc := range c.want {
				i := pr.MetaData().Schema.ColumnIndexByName(col)
				cc, err := pr.MetaData().RowGroup(0).ColumnChunk(i)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(fmt.Sprint(cc.Encodings()), enc) {
					t.Errorf("column %s is in %v, not %s: the case tests something else", col, cc.Encodings(), enc)
				}
			}
			if c.fast && hashed != groups {
				t.Fatalf("fast scan hashed %d of %d row groups", hashed, groups)
			}
			if !c.fast && hashed != 0 {
				t.Fatalf("fast scan hashed %d row groups of an encoding it does not decode", hashed)
			}
		})
	}
}

// fastScanSeeds are small Parquet files of primitiveRecord's rows in the
// encodings the fast scan decodes.
func fastScanSeeds(t testing.TB) [][]byte {
	rec := primitiveRecord(t, 200, 2)
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
		out = append(out, arrowParquet(t, rec, parquet.NewWriterProperties(props...), aopts...))
	}
	return out
}

// FuzzFastScan: on any file the fast scan takes, each row group it hashes
// is one that Arrow's reader decodes too (plainly, without dictionaries),
// to the same row sum by colsum128's definition: the fast scan is never
// more lenient than the Arrow path, and never computes another checksum.
// Row groups it gives up are the Arrow path's (AddParquetFile scans them
// again there). Seeds: small files in the encodings it decodes.
func FuzzFastScan(f *testing.F) {
	for _, seed := range fastScanSeeds(f) {
		f.Add(seed)
	}
	for _, name := range []string{"corpus/flat.parquet-go.zstd.parquet", "corpus/flat.duckdb.v2-pages-delta.parquet",
		"parquet-testing/datapage_v2_empty_datapage.snappy.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pr, err := openParquet(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		defer pr.Close()
		_, canon, err := checkFooter(pr, int64(len(data)))
		if err != nil {
			return
		}
		fs := newFastScanner(pr.MetaData(), canon)
		if fs == nil {
			return
		}
		for g := range pr.NumRowGroups() {
			var fast checksum.Sum
			rows, err := fs.rowGroup(context.Background(), pr.RowGroup(g), &fast)
			if err != nil {
				continue
			}
			arrowRows, want, err := arrowRowGroupSum(t, pr, canon, g)
			if err != nil {
				t.Fatalf("row group %d: the fast scan hashed %d rows, Arrow's reader fails: %v", g, rows, err)
			}
			if rows != arrowRows || fast != want {
				t.Fatalf("row group %d: fast scan %d rows %x, Arrow %d rows %x", g, rows, fast, arrowRows, want)
			}
		}
	})
}

// arrowRowGroupSum is the colsum128 row sum of row group g by the
// definition, over records Arrow's reader decodes with its defaults.
func arrowRowGroupSum(t testing.TB, pr *file.Reader, canon *canonSchema, g int) (rows int64, sum checksum.Sum, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1000}, memory.DefaultAllocator)
	if err != nil {
		return 0, sum, err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, []int{g})
	if err != nil {
		return 0, sum, err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		sum.Add(refColsum(t, rec, canon.arrow))
		rows += rec.NumRows()
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return 0, sum, err
	}
	if rows != pr.MetaData().RowGroup(g).NumRows() {
		return 0, sum, fmt.Errorf("%d rows, the footer says %d", rows, pr.MetaData().RowGroup(g).NumRows())
	}
	return rows, sum, nil
}

// TestFastScanRefusesDamagedPages: a file the fast scan takes whose pages
// carry no CRC (Arrow's writer does not write them) and whose compressed
// bytes are damaged is refused with ErrCorrupt naming the file, and
// nothing of it stays on the store.
func TestFastScanRefusesDamagedPages(t *testing.T) {
	ctx := context.Background()
	rec := primitiveRecord(t, 20000, 3)
	defer rec.Release()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeArrowFile(t, good, rec, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if n, err := VerifyPageChecksums(bytes.NewReader(data), int64(len(data))); err != nil || n != 0 {
		t.Fatalf("%d pages with a CRC (%v): the test needs pages without", n, err)
	}
	before := fastGroups.Load()
	if _, s := newMem(t, Options{}); s.AddParquetFile(ctx, good) != nil {
		t.Fatal("the undamaged file is refused")
	}
	if fastGroups.Load() == before {
		t.Fatal("the undamaged file did not take the fast scan")
	}
	for _, col := range []string{"i64", "s", "f64", "ts"} {
		t.Run(col, func(t *testing.T) {
			cc, err := pr.MetaData().RowGroup(0).ColumnChunk(pr.MetaData().Schema.ColumnIndexByName(col))
			if err != nil {
				t.Fatal(err)
			}
			// The middle of the chunk's last (data) page: past its header.
			off := cc.DataPageOffset() + cc.TotalCompressedSize()*3/4
			if cc.HasDictionaryPage() {
				off = cc.DataPageOffset() + (cc.DictionaryPageOffset()+cc.TotalCompressedSize()-cc.DataPageOffset())/2
			}
			b := bytes.Clone(data)
			for i := off; i < off+48; i++ {
				b[i] ^= 0xa5
			}
			path := filepath.Join(t.TempDir(), "bad.parquet")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			st, s := newMem(t, Options{})
			err = s.AddParquetFile(ctx, path)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want ErrCorrupt naming %s", err, path)
			}
			t.Log(err)
			if keys := keysUnder(t, st, ""); len(keys) != 0 {
				t.Errorf("left %v", keys)
			}
		})
	}
}

// TestFastScanInt96: INT96 timestamps (Spark's default), plain and in a
// dictionary, are hashed by the fast scan as the microseconds Spark reads,
// the same as the Arrow path's nanoseconds converted (within Arrow's
// range).
func TestFastScanInt96(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range 3000 {
		if i%5 == 1 {
			b.Field(0).(*array.TimestampBuilder).AppendNull()
		} else {
			b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(-2_000_000_000_000_000_000 + int64(i%300)*13_000_000_000_007))
		}
		b.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for name, props := range map[string]*parquet.WriterProperties{
		"dictionary": parquet.NewWriterProperties(),
		"plain, v2":  parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2)),
	} {
		t.Run(name, func(t *testing.T) {
			data := arrowParquet(t, rec, props, pqarrow.WithDeprecatedInt96Timestamps(true))
			path := filepath.Join(t.TempDir(), "int96.parquet")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			pr, err := file.NewParquetReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if pt := pr.MetaData().Schema.Column(0).PhysicalType(); pt != parquet.Types.Int96 {
				t.Fatalf("ts stored as %s, not INT96", pt)
			}
			pr.Close()
			fast, slow, hashed, fe, se := scanBoth(t, path)
			if fe != nil || se != nil || fast != slow || hashed != 1 {
				t.Fatalf("fast scan %s (%v, %d row groups), Arrow %s (%v)", fast, fe, hashed, slow, se)
			}
			if def := definitionChecksum(t, data); fast != def {
				t.Fatalf("fast scan %s, by the definition %s", fast, def)
			}
		})
	}
}
