package pqscan_test

import (
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/testing/pqfiles"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// testdata holds the test corpora, package staging's.
const testdata = "../../staging/testdata"

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
		pqscan.SetFastScan(!off)
		defer pqscan.SetFastScan(true)
		before := pqscan.FastRowGroups()
		rows, sum, canon, err := pqscan.Scan(context.Background(), f, fi.Size(), false, false)
		n := pqscan.FastRowGroups() - before
		if err != nil {
			return "", n, err
		}
		return checksum.ColSumOf(canon.Text, rows, sum.Col), n, nil
	}
	fast, hashed, fastErr = scan(false)
	slow, _, slowErr = scan(true)
	return fast, slow, hashed, fastErr, slowErr
}

// TestFastScanMatchesArrowOnCorpus: on every file of the test corpora the
// fast scan and the Arrow path agree (the same checksum, or both refuse).
func TestFastScanMatchesArrowOnCorpus(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(testdata, "*/*.parquet"))
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

// TestFastScanEncodings: files of every primitive type written by Arrow
// in the encodings, page versions, codecs and layouts the fast scan
// decodes are hashed by it (every row group) to the checksum of the Arrow
// path and of the definition; an encoding it leaves to Arrow gives the
// same checksum too.
func TestFastScanEncodings(t *testing.T) {
	rec := pqfiles.PrimitiveRecord(t, 5000, 1)
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
			pqfiles.WriteArrowFile(t, path, rec, parquet.NewWriterProperties(c.props...))
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
			if def := pqfiles.DefinitionChecksum(t, data); fast != def {
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

// FuzzFastScan: on any file the fast scan takes, each row group it hashes
// is one that Arrow's reader decodes too (plainly, without dictionaries),
// to the same row sum by colsum128's definition: the fast scan is never
// more lenient than the Arrow path, and never computes another checksum.
// Row groups it gives up are the Arrow path's (AddParquetFile scans them
// again there). Seeds: small files in the encodings it decodes.
func FuzzFastScan(f *testing.F) {
	for _, seed := range pqfiles.FastScanSeeds(f) {
		f.Add(seed)
	}
	for _, name := range []string{"corpus/flat.parquet-go.zstd.parquet", "corpus/flat.duckdb.v2-pages-delta.parquet",
		"parquet-testing/datapage_v2_empty_datapage.snappy.parquet"} {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pr, err := pqscan.Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		defer pr.Close()
		_, canon, err := pqscan.CheckFooter(pr, int64(len(data)))
		if err != nil {
			return
		}
		fs := pqscan.NewFastScanner(pr.MetaData(), canon)
		if fs == nil {
			return
		}
		for g := range pr.NumRowGroups() {
			var fast checksum.Sum
			rows, err := fs.RowGroup(context.Background(), pr.RowGroup(g), &fast)
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
func arrowRowGroupSum(t testing.TB, pr *file.Reader, canon *pqscan.Schema, g int) (rows int64, sum checksum.Sum, err error) {
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
		sum.Add(pqfiles.RefColsum(t, rec, canon.Arrow))
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
			data := pqfiles.ArrowParquet(t, rec, props, pqarrow.WithDeprecatedInt96Timestamps(true))
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
			if def := pqfiles.DefinitionChecksum(t, data); fast != def {
				t.Fatalf("fast scan %s, by the definition %s", fast, def)
			}
		})
	}
}
