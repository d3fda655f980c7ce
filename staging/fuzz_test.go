package staging

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/pswap/pswap/internal/testing/pqfiles"
)

var fuzzSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "c", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
}, nil)

// checkFuzzResult: an input either fails with one of the documented
// errors and leaves nothing behind, or yields readable files.
func checkFuzzResult(t *testing.T, s *Stager, st storeT, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrBadInput) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("undocumented error: %v", err)
		}
		if keys := keysUnder(t, st, ""); len(keys) != 0 {
			t.Fatalf("left %v after %v", keys, err)
		}
		return
	}
	c, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, f := range c.Files {
		r, err := file.NewParquetReader(bytes.NewReader(fileBytes(t, st, f)))
		if err != nil {
			t.Fatal(err)
		}
		rows += r.NumRows()
		r.Close()
	}
	if rows != c.Rows {
		t.Fatalf("files hold %d rows, Content says %d", rows, c.Rows)
	}
}

func FuzzAddCSV(f *testing.F) {
	for _, seed := range []string{
		textCSV,
		"a,b,c,d\n1,x,2026-11-29T10:00:00Z,1.25\n,,,\n",
		"a,b\n1,\"multi\nline\"\n2,y\n",
		"a\n007\n+1\n-0\n1e3\ninf\n",
		"a,b\n1,2,3\n",
		"a,a\n1,2\n",
		"a,b\n\"unterminated\n",
		"",
		"\n\n",
		"x\n2026-11-29\n2026-13-01\n",
		"t\n2026-11-29 10:00\n2026-11-29T10:00:00.123456789+05:30\n",
	} {
		f.Add([]byte(seed), uint8(0))
		f.Add([]byte(seed), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		st, s := newMem(t, Options{})
		opts := CSVOptions{InferRows: int(mode%4) + 1}
		if mode&4 != 0 {
			opts.Schema = fuzzSchema
		}
		if mode&8 != 0 {
			opts.NoHeader = true
			opts.Schema = fuzzSchema
		}
		err := s.AddCSV(context.Background(), bytes.NewReader(data), "fuzz.csv", opts)
		checkFuzzResult(t, s, st, err)
	})
}

func FuzzAddJSONL(f *testing.F) {
	for _, seed := range []string{
		textJSONL,
		`{"a":1,"b":"x","c":"2026-11-29T10:00:00Z","d":"1.25"}` + "\n" + `{"a":null}`,
		`{"a":1}` + "\n" + `{"a":1.5}`,
		`{"a":1}` + "\n" + `{"a":"x"}`,
		`{"a":{"b":1}}`,
		`{"a":[1,null,2],"b":{"x":[{"y":"z"}]}}` + "\n" + `{"a":[],"b":{"x":null}}`,
		`{"a":[[1],[2,3]]}` + "\n" + `{"a":[{"b":1}]}`,
		`[1,2]`,
		`{"a":1,"a":2}`,
		`{"a":1} {"a":2}`,
		`{"a":9223372036854775808}`,
		`{"d":1e400}`,
		"\n\n\r\n",
		`{"`,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, withSchema bool) {
		opts := Options{}
		if withSchema {
			opts.Schema = fuzzSchema
		}
		st, s := newMem(t, opts)
		err := s.AddJSONL(context.Background(), bytes.NewReader(data), "fuzz.jsonl")
		checkFuzzResult(t, s, st, err)
	})
}

// FuzzAddParquetFile: any bytes given as a Parquet file are either added
// (and read back) or refused with a documented error, never a panic, and
// nothing is left behind. Seeds: the corpus files.
func FuzzAddParquetFile(f *testing.F) {
	for _, name := range []string{
		"corpus/nested.duckdb.snappy.parquet", "corpus/flat.parquet-go.zstd.parquet",
		"corpus/nested.arrow.v2-pages-gzip.parquet", "parquet-testing/hadoop_lz4_compressed.parquet",
		"parquet-testing/datapage_v1-snappy-compressed-checksum.parquet",
		"parquet-testing/int96_from_spark.parquet",
	} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Small files of every primitive type in the encodings the fast scan
	// decodes (scanfast.go), so that mutations reach its decoders.
	for _, seed := range pqfiles.FastScanSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		st, s := newMem(t, Options{})
		err := s.AddParquetFile(context.Background(), path)
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("undocumented error: %v", err)
		}
		if err != nil {
			if keys := keysUnder(t, st, ""); len(keys) != 0 {
				t.Fatalf("left %v after %v", keys, err)
			}
			return
		}
		c, err := s.Finish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The fast scan (scanfast.go, or for other schemas Arrow with
		// dictionaries, pooled buffers and column hashers) computes the
		// checksum the definition gives over plainly decoded records, and
		// accepts nothing that Arrow's reader refuses (pqfiles.DefinitionChecksum
		// fails then).
		if want := pqfiles.DefinitionChecksum(t, data); c.Rows > 0 && c.ContentChecksum != want {
			t.Fatalf("content checksum %s, by the definition %s", c.ContentChecksum, want)
		}
	})
}
