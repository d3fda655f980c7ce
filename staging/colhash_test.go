package staging

import (
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/pqscan"

	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	pq "github.com/parquet-go/parquet-go"
	"github.com/zeebo/xxh3"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/internal/testing/pqfiles"
	"github.com/pswap/pswap/manifest"
)

// mixedRecord has the columns the Arrow hashers treat specially: a
// dictionary (with nulls), timestamps in seconds (stored in milliseconds),
// times, half floats, fixed-size binary, NaN.
func mixedRecord(t *testing.T) arrow.RecordBatch {
	t.Helper()
	mem := memory.DefaultAllocator
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "d", Type: dt, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Second}, Nullable: true},
		{Name: "t32", Type: arrow.FixedWidthTypes.Time32ms},
		{Name: "h", Type: arrow.FixedWidthTypes.Float16},
		{Name: "fx", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	words := []string{"x", "yy", "", "zzz"}
	for i := range 300 {
		db := b.Field(0).(*array.BinaryDictionaryBuilder)
		if i%11 == 0 {
			db.AppendNull()
		} else if err := db.AppendString(words[i%len(words)]); err != nil {
			t.Fatal(err)
		}
		if i%13 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(1_800_000_000 + i - 150))
		}
		b.Field(2).(*array.Time32Builder).Append(arrow.Time32(i * 1000))
		b.Field(3).(*array.Float16Builder).Append(float16.New(float32(i) / 8))
		b.Field(4).(*array.FixedSizeBinaryBuilder).Append([]byte{byte(i), byte(i >> 8), 7})
		f := float64(i) * 0.25
		if i%17 == 0 {
			f = 0
			f /= f // NaN
		}
		b.Field(5).(*array.Float64Builder).Append(f)
		if i%3 == 0 {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.BooleanBuilder).Append(i%2 == 0)
		}
	}
	return b.NewRecordBatch()
}

// TestColumnHashMatchesEncoding: the column-at-a-time Arrow hashers compute
// colsum128 as defined value by value, for every kind of column (flat,
// nested, dictionary, converted units), with and without nulls, and with
// the hasher's buffers and dictionary cache reused between batches.
func TestColumnHashMatchesEncoding(t *testing.T) {
	props, err := Options{}.arrowProps()
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]arrow.RecordBatch{
		"flat":   toRecord(makeRows(2000, 5)),
		"nested": nestedRecord(t, nestedJSON),
		"mixed":  mixedRecord(t),
	}
	var h checksum.ColHasher
	defer h.Release()
	for name, rec := range recs {
		defer rec.Release()
		canon, err := pqscan.SchemaOfArrow(rec.Schema(), props)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := pqfiles.RefColsum(t, rec, canon.Arrow)
		for round := range 2 { // the second round meets the cached dictionary
			var got checksum.Sum
			if err := h.AddRecord(rec, canon.Arrow, &got); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got != want {
				t.Errorf("%s round %d: column hash %x, by definition %x", name, round, got, want)
			}
		}
		// Slices hash as their rows do.
		var parts checksum.Sum
		for off := int64(0); off < rec.NumRows(); off += 7 {
			s := rec.NewSlice(off, min(rec.NumRows(), off+7))
			if err := h.AddRecord(s, canon.Arrow, &parts); err != nil {
				t.Fatal(err)
			}
			s.Release()
		}
		if parts != want {
			t.Errorf("%s: sliced %x, whole %x", name, parts, want)
		}
	}
}

// TestColsumDistinguishes: moving a value to another column, swapping two
// rows' values within a column, a null for a zero, and a changed value all
// change colsum128; reordering rows does not.
func TestColsumDistinguishes(t *testing.T) {
	type two struct {
		A *int64 `parquet:"a,optional"`
		B *int64 `parquet:"b,optional"`
	}
	i := func(v int64) *int64 { return &v }
	sum := func(rows ...two) string {
		_, s := newMem(t, Options{})
		if err := Write(s, rows...); err != nil {
			t.Fatal(err)
		}
		return finish(t, s).ContentChecksum
	}
	base := sum(two{i(1), i(2)}, two{i(3), i(4)})
	for name, c := range map[string]string{
		"columns swapped":      sum(two{i(2), i(1)}, two{i(4), i(3)}),
		"values across rows":   sum(two{i(1), i(4)}, two{i(3), i(2)}),
		"null for zero":        sum(two{i(1), i(2)}, two{nil, i(4)}),
		"zero for null":        sum(two{i(1), i(2)}, two{i(0), i(4)}),
		"value changed":        sum(two{i(1), i(2)}, two{i(3), i(5)}),
		"row duplicated":       sum(two{i(1), i(2)}, two{i(3), i(4)}, two{i(3), i(4)}),
		"row replaced by copy": sum(two{i(1), i(2)}, two{i(1), i(2)}),
	} {
		if c == base {
			t.Errorf("%s: same checksum %s", name, c)
		}
	}
	if r := sum(two{i(3), i(4)}, two{i(1), i(2)}); r != base {
		t.Errorf("rows reordered: %s, want %s", r, base)
	}
	if !strings.HasPrefix(base, checksum.ColSum+":") {
		t.Errorf("checksum %s does not name %s", base, checksum.ColSum)
	}
}

// scanFile is pqscan.RowScan's checksum of one file in algo.
func scanFile(t *testing.T, path, algo string) (int64, string) {
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
	r := pqscan.RowScan{Algo: algo}
	if err := r.Add(context.Background(), f, fi.Size(), path); err != nil {
		t.Fatal(err)
	}
	return r.Checksum()
}

// writeVariants writes rec as Parquet files with Arrow's writer in other
// encodings than pswap's: without dictionaries, with small and large row
// groups, DataPage v2, tiny pages, a dictionary that falls back to PLAIN,
// and other codecs.
func writeVariants(t *testing.T, dir string, rec arrow.RecordBatch) []string {
	t.Helper()
	var files []string
	for name, props := range map[string]*parquet.WriterProperties{
		"arrow, no dictionary, gzip, row groups of 500, page v2": parquet.NewWriterProperties(
			parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Gzip),
			parquet.WithMaxRowGroupLength(500), parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithStoreDecimalAsInteger(true)),
		"arrow, dictionary, zstd, one row group, tiny pages": parquet.NewWriterProperties(
			parquet.WithDictionaryDefault(true), parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithMaxRowGroupLength(1<<20), parquet.WithDataPageSize(512),
			parquet.WithStoreDecimalAsInteger(true)),
		"arrow, dictionary fallback, uncompressed": parquet.NewWriterProperties(
			parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(64),
			parquet.WithStoreDecimalAsInteger(true)),
	} {
		p := filepath.Join(dir, strings.NewReplacer(",", "", " ", "-").Replace(name)+".parquet")
		pqfiles.WriteArrowFile(t, p, rec, props)
		files = append(files, p)
	}
	return files
}

// TestSameChecksumAcrossPathsAndEncodings: the same rows give one colsum128
// checksum (and, with LegacyChecksum, one rowsum128 checksum, equal to
// pqscan.RowScan's in rowsum128) whatever path and encoding they came from: Go
// structs (fast and slow hash), Arrow records, CSV-like row order changes,
// pswap's own file ingested again, Arrow's writer without dictionaries, with
// other row groups, DataPage v2 and other codecs, parquet-go's writer
// with its defaults (TestDuckDBFileSameChecksumAcrossEncodings starts from
// DuckDB's file).
func TestSameChecksumAcrossPathsAndEncodings(t *testing.T) {
	ctx := context.Background()
	rows := makeRows(6000, 3)
	dir := t.TempDir()
	type result struct{ col, row, schema string }
	results := map[string]result{}
	add := func(name string, c manifest.Content) {
		t.Helper()
		if c.Rows != int64(len(rows)) {
			t.Errorf("%s: %d rows, want %d", name, c.Rows, len(rows))
		}
		if len(c.Equivalent) != 1 || !strings.HasPrefix(c.Equivalent[0], checksum.RowSum+":") {
			t.Fatalf("%s: Equivalent %q, want one %s checksum", name, c.Equivalent, checksum.RowSum)
		}
		results[name] = result{c.ContentChecksum, c.Equivalent[0], c.Schema}
	}
	legacy := Options{LegacyChecksum: true}

	_, c := stageStructs(t, legacy, rows)
	add("structs", c)
	slowStructHash = true
	_, c = stageStructs(t, legacy, rows)
	slowStructHash = false
	add("structs, slow hash", c)
	rev := slices.Clone(rows)
	slices.Reverse(rev)
	_, c = stageStructs(t, legacy, rev)
	add("structs reversed", c)
	st0, c0 := stageArrow(t, Options{LegacyChecksum: true, TargetFileSize: 64 << 10, RowGroupRows: 999}, rows)
	add("arrow records", c0)

	// Files of the same rows in other encodings.
	var files []string
	for _, f := range c0.Files {
		p := filepath.Join(dir, "own-"+f.Path)
		if err := os.WriteFile(p, fileBytes(t, st0, f), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	rec := toRecord(rows)
	defer rec.Release()
	files = append(files, writeVariants(t, dir, rec)...)
	pgo := filepath.Join(dir, "parquet-go.parquet")
	if err := pq.WriteFile(pgo, rows, pq.MaxRowsPerRowGroup(1234)); err != nil {
		t.Fatal(err)
	}
	files = append(files, pgo)
	// Each file set alone, through AddParquetFile and pqscan.RowScan.
	sets := map[string][]string{"pswap's own files": files[:len(c0.Files)]}
	for _, p := range files[len(c0.Files):] {
		sets[filepath.Base(p)] = []string{p}
	}
	for name, set := range sets {
		_, s := newMem(t, legacy)
		for _, p := range set {
			if err := s.AddParquetFile(ctx, p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		add("ingested "+name, finish(t, s))
		if len(set) == 1 {
			_, col := scanFile(t, set[0], "")
			_, row := scanFile(t, set[0], checksum.RowSum)
			results["scanned "+name] = result{col, row, results["ingested "+name].schema}
		}
	}

	want := results["structs"]
	for name, r := range results {
		if r != want {
			t.Errorf("%s: %s / %s, want %s / %s", name, r.col, r.row, want.col, want.row)
		}
	}
	if len(results) < 11 {
		t.Errorf("only %d paths compared", len(results))
	}
	// Without LegacyChecksum there is no Equivalent, and the same colsum.
	_, c = stageStructs(t, Options{}, rows)
	if c.ContentChecksum != want.col || c.Equivalent != nil {
		t.Errorf("without LegacyChecksum: %s %q", c.ContentChecksum, c.Equivalent)
	}
}

// TestDuckDBFileSameChecksumAcrossEncodings: DuckDB's file (dictionary
// encoded strings, its row groups), pswap's own file of the same rows
// (staged from the records Arrow reads from DuckDB's file), and the same
// rows in other encodings, row groups and codecs have one colsum128
// checksum, through AddParquetFile and pqscan.RowScan alike.
func TestDuckDBFileSameChecksumAcrossEncodings(t *testing.T) {
	duckcheck.SkipIfUnavailable(t)
	ctx := context.Background()
	dir := t.TempDir()
	duck := filepath.Join(dir, "duck.parquet")
	if _, err := duckcheck.Run(ctx, "COPY (SELECT range AS id, (range % 97)::INTEGER AS k, "+
		"CASE WHEN range % 11 = 0 THEN NULL ELSE 'name-' || (range % 50) END AS s, range * 0.5 AS v, "+
		"to_timestamp(1800000000 + range) AS t, (range % 3 = 0) AS b FROM range(30000)) TO "+
		duckcheck.Quote(duck)+" (FORMAT parquet, ROW_GROUP_SIZE 4096)"); err != nil {
		t.Fatal(err)
	}
	_, want := scanFile(t, duck, "")
	tbl := readArrow(t, mustRead(t, duck))
	tr := array.NewTableReader(tbl, tbl.NumRows())
	defer tr.Release()
	if !tr.Next() {
		t.Fatal("no record")
	}
	rec := tr.RecordBatch()

	st0, s := newMem(t, Options{RowGroupRows: 10_000})
	if err := s.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	own := finish(t, s)
	if own.ContentChecksum != want {
		t.Errorf("pswap's own file: %s, DuckDB's %s", own.ContentChecksum, want)
	}
	files := []string{duck}
	for _, f := range own.Files {
		p := filepath.Join(dir, "own-"+f.Path)
		if err := os.WriteFile(p, fileBytes(t, st0, f), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	files = append(files, writeVariants(t, dir, rec)...)
	fastBefore := pqscan.FastRowGroups()
	defer func() {
		// The files are flat and primitive: the fast scan's (scanfast.go),
		// whose checksum is here compared with the Arrow writer's.
		if pqscan.FastRowGroups() == fastBefore {
			t.Error("no row group took the fast scan")
		}
	}()
	for _, p := range files {
		if _, got := scanFile(t, p, ""); got != want {
			t.Errorf("pqscan.RowScan %s: %s, want %s", filepath.Base(p), got, want)
		}
		_, s := newMem(t, Options{})
		if err := s.AddParquetFile(ctx, p); err != nil {
			t.Fatal(err)
		}
		if c := finish(t, s); c.ContentChecksum != want || c.Rows != 30000 {
			t.Errorf("AddParquetFile %s: %s (%d rows), want %s", filepath.Base(p), c.ContentChecksum, c.Rows, want)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestColsumDefinition recomputes the content checksum of a few rows from
// the package documentation's definition, written out independently here.
func TestColsumDefinition(t *testing.T) {
	type r struct {
		A *int64   `parquet:"a,optional"`
		S string   `parquet:"s"`
		F float64  `parquet:"f"`
		B bool     `parquet:"b"`
		D *float32 `parquet:"d,optional"`
	}
	neg := int64(-5)
	half := float32(0.5)
	rows := []r{{&neg, "a", 1.5, true, nil}, {nil, "bc", math.Copysign(0, -1), false, &half}}
	_, s := newMem(t, Options{})
	if err := Write(s, rows...); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)

	fmix := func(x uint64) uint64 {
		x ^= x >> 33
		x *= 0xff51afd7ed558ccd
		x ^= x >> 33
		x *= 0xc4ceb9fe1a85ec53
		x ^= x >> 33
		return x
	}
	seed := func(c int) uint64 { return fmix(uint64(c + 1)) }
	const null = 0x6e756c6c5f763221
	var lo, hi uint64
	for _, x := range rows {
		hs := []uint64{null, xxh3.HashStringSeed(x.S, seed(1)), fmix(math.Float64bits(x.F) ^ seed(2)), fmix(seed(3)), null}
		if x.A != nil {
			hs[0] = fmix(uint64(*x.A) ^ seed(0))
		}
		if x.B {
			hs[3] = fmix(1 ^ seed(3))
		}
		if x.D != nil {
			hs[4] = fmix(uint64(math.Float32bits(*x.D)) ^ seed(4))
		}
		var acc uint64
		for _, h := range hs {
			acc = (acc ^ h) * 0x9e3779b97f4a7c15
		}
		var carry uint64
		lo, carry = bits.Add64(lo, fmix(acc), 0)
		hi, _ = bits.Add64(hi, fmix(acc+0xc2b2ae3d27d4eb4f), carry)
	}
	b := append([]byte("pswap/colsum128/v2\x00"+c.Schema+"\x00"), 0, 0, 0, 0, 0, 0, 0, 2)
	b = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, hi), lo)
	h := xxh3.Hash128(b)
	if want := fmt.Sprintf("colsum128:%016x%016x", h.Hi, h.Lo); c.ContentChecksum != want {
		t.Errorf("checksum %s, by the definition %s", c.ContentChecksum, want)
	}
}
