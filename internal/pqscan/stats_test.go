package pqscan_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/testing/pqfiles"
)

// statsSeeds are whole Parquet files of many column types and encodings,
// and Spark's INT96 file.
func statsSeeds(t testing.TB) [][]byte {
	seeds := pqfiles.FastScanSeeds(t)
	spark, err := os.ReadFile(filepath.Join("..", "..", "staging", "testdata", "parquet-testing", "int96_from_spark.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return append(seeds, spark)
}

// ColumnStatsOfTail gives from a file's last bytes what ColumnStats gives
// from its footer, and nil (unknown) from a tail too short to hold it.
func TestColumnStatsOfTail(t *testing.T) {
	for i, data := range statsSeeds(t) {
		r, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		want := pqscan.ColumnStats(r.MetaData())
		if len(want) == 0 {
			t.Fatalf("seed %d: no statistics", i)
		}
		footer := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
		if got := pqscan.ColumnStatsOfTail(data[len(data)-footer-8:]); !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d: from the tail\n%+v\nfrom the footer\n%+v", i, got, want)
		}
		if got := pqscan.ColumnStatsOfTail(data[len(data)-footer-7:]); got != nil {
			t.Errorf("seed %d: a tail without the whole footer gave %+v", i, got)
		}
	}
}

// FuzzColumnStatsOfTail: whatever the bytes, ColumnStatsOfTail does not
// panic, and what it returns obeys the manifest's rules.
func FuzzColumnStatsOfTail(f *testing.F) {
	for _, s := range statsSeeds(f) {
		f.Add(s)
		f.Add(s[len(s)-200:])
	}
	f.Add([]byte("PAR1\x04\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for i, c := range pqscan.ColumnStatsOfTail(data) {
			if err := c.Validate(); err != nil {
				t.Fatalf("column %d: %v", i, err)
			}
		}
	})
}

// Two top-level columns of one name get no statistics (readers map them by
// name), and the others keep theirs: the manifest, which refuses duplicate
// names, still encodes.
func TestColumnStatsDuplicateNames(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range 3 {
		b.Field(i).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	data := pqfiles.ArrowParquet(t, rec, nil)
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got := pqscan.ColumnStats(r.MetaData())
	if len(got) != 1 || got[0].Name != "b" || got[0].Min != "1" || got[0].Max != "2" {
		t.Fatalf("statistics %+v, want b's only", got)
	}
}
