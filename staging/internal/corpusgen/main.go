// Command corpusgen writes staging's Parquet corpus (testdata/corpus): the
// same rows written by DuckDB, Arrow (pqarrow) and parquet-go in several
// codecs, encodings and page versions, so that the corpus test can check
// that they all ingest with one content checksum, and Polars too
// (polars.mjs) when bench/polars has nodejs-polars installed. Run it from
// the staging folder with `go generate` (see corpus_test.go); it needs node
// and internal/testing/duckcheck's npm packages. The files are committed: regenerate
// only to add a case.
//
// File names are <dataset>.<writer>.<feature>.parquet.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/staging"
)

// nestedJSON: a list, a struct, a map and a list of structs with nulls at
// every level (maps as Arrow's JSON form of entries).
const nestedJSON = `[
{"id": 1, "tags": ["a", null, "c"], "pt": {"x": 1.5, "y": 2}, "attrs": [{"key": "k1", "value": 1}, {"key": "k2", "value": null}], "evs": [{"n": "e1", "v": [1, 2]}]},
{"id": 2, "tags": [], "pt": {"x": null, "y": null}, "attrs": [], "evs": []},
{"id": 3, "tags": null, "pt": null, "attrs": null, "evs": [null, {"n": null, "v": null}, {"n": "e3", "v": [null]}]},
{"id": 4, "tags": [null], "pt": {"x": -0.25, "y": null}, "attrs": [{"key": "z", "value": 26}, {"key": "a", "value": 1}], "evs": null}
]`

// nestedSQL is the same rows for DuckDB (row 4's map entries in another
// order: entry order is not content).
const nestedSQL = `SELECT * FROM (VALUES
	(4::BIGINT, [NULL]::VARCHAR[], {'x': -0.25::DOUBLE, 'y': NULL::BIGINT}, MAP {'a': 1::BIGINT, 'z': 26}, NULL::STRUCT(n VARCHAR, v BIGINT[])[]),
	(3, NULL, NULL, NULL, [NULL, {'n': NULL, 'v': NULL}, {'n': 'e3', 'v': [NULL]}]),
	(2, [], {'x': NULL, 'y': NULL}, MAP {}, []),
	(1, ['a', NULL, 'c'], {'x': 1.5, 'y': 2}, MAP {'k1': 1, 'k2': NULL}, [{'n': 'e1', 'v': [1, 2]}])
) AS t(id, tags, pt, attrs, evs)`

// nestedNoMapSQL is nestedSQL without its map column, for Polars, which
// has no map type.
const nestedNoMapSQL = "SELECT * EXCLUDE (attrs) FROM (" + nestedSQL + ")"

var nestedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "pt", Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
	{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "evs", Type: arrow.ListOf(arrow.StructOf(
		arrow.Field{Name: "n", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "v", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true})), Nullable: true},
}, nil)

// flat: 300 rows of nullable scalars, for parquet-go too.
type flat struct {
	ID    *int64   `parquet:"id,optional"`
	Name  *string  `parquet:"name,optional"`
	Score *float64 `parquet:"score,optional"`
	Flag  *bool    `parquet:"flag,optional"`
}

const flatRows = 300

func flatRow(i int) flat {
	id, name, score, flag := int64(i*7-100), fmt.Sprintf("n%d", i%13), float64(i)/8, i%3 == 0
	r := flat{ID: &id, Name: &name, Score: &score, Flag: &flag}
	if i%5 == 0 {
		r.Name = nil
	}
	if i%7 == 0 {
		r.Score = nil
	}
	return r
}

const flatSQL = `SELECT (range * 7 - 100)::BIGINT AS id,
	CASE WHEN range % 5 = 0 THEN NULL ELSE 'n' || (range % 13) END AS name,
	CASE WHEN range % 7 = 0 THEN NULL ELSE range / 8 END::DOUBLE AS score,
	range % 3 = 0 AS flag FROM range(300) ORDER BY range DESC`

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: corpusgen DIR")
	}
	staging.RegisterCodecs() // the LZ4 codec for Arrow's writer
	dir, err := filepath.Abs(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// DuckDB: every codec it writes, and DataPage v2 with its v2 encodings.
	var sql []string
	for _, c := range []struct{ feature, opts string }{
		{"uncompressed", "COMPRESSION uncompressed"},
		{"snappy", "COMPRESSION snappy"},
		{"gzip", "COMPRESSION gzip"},
		{"zstd", "COMPRESSION zstd"},
		{"brotli", "COMPRESSION brotli"},
		{"lz4_raw", "COMPRESSION lz4_raw"},
		{"v2-pages-delta", "COMPRESSION zstd, PARQUET_VERSION v2"},
	} {
		for _, d := range []struct{ name, sql string }{{"nested", nestedSQL}, {"flat", flatSQL}, {"nestednomap", nestedNoMapSQL}} {
			if d.name == "nestednomap" && c.feature != "snappy" && c.feature != "v2-pages-delta" {
				continue
			}
			path := filepath.Join(dir, d.name+".duckdb."+c.feature+".parquet")
			sql = append(sql, "COPY ("+d.sql+") TO "+duckcheck.Quote(path)+" (FORMAT parquet, "+c.opts+")")
		}
	}
	if _, err := duckcheck.Run(ctx, sql...); err != nil {
		log.Fatal(err)
	}

	// Arrow: codecs (LZ4 in Hadoop's framing), dictionary off with
	// BYTE_STREAM_SPLIT and DELTA_BINARY_PACKED, DataPage v2.
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, nestedSchema, strings.NewReader(nestedJSON))
	if err != nil {
		log.Fatal(err)
	}
	defer rec.Release()
	flatRec := flatRecord()
	defer flatRec.Release()
	for _, c := range []struct {
		feature string
		props   []parquet.WriterProperty
	}{
		{"snappy", []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy)}},
		{"lz4-hadoop", []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Lz4)}},
		{"lz4_raw", []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Lz4Raw)}},
		{"byte_stream_split-zstd", []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithDictionaryDefault(false), parquet.WithEncodingFor("score", parquet.Encodings.ByteStreamSplit),
			parquet.WithEncodingFor("pt.x", parquet.Encodings.ByteStreamSplit),
			parquet.WithEncodingFor("id", parquet.Encodings.DeltaBinaryPacked)}},
		{"v2-pages-gzip", []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Gzip),
			parquet.WithDataPageVersion(parquet.DataPageV2)}},
	} {
		for name, r := range map[string]arrow.RecordBatch{"nested": rec, "flat": flatRec} {
			writeArrow(filepath.Join(dir, name+".arrow."+c.feature+".parquet"), r, c.props)
		}
	}

	// Polars, when bench/polars has it installed.
	polarsDir, err := filepath.Abs(filepath.Join("..", "bench", "polars"))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(polarsDir, "node_modules", "nodejs-polars")); err != nil {
		log.Printf("skipping Polars: %v (run npm ci in bench/polars)", err)
	} else {
		cmd := exec.Command("node", filepath.Join("internal", "corpusgen", "polars.mjs"), dir, polarsDir)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("polars: %v", err)
		}
	}

	// parquet-go (the flat rows; it writes page CRCs).
	for feature, opt := range map[string]pq.WriterOption{
		"zstd":   pq.Compression(&zstd.Codec{}),
		"snappy": pq.Compression(&pq.Snappy),
	} {
		rows := make([]flat, flatRows)
		for i := range rows {
			rows[i] = flatRow(i)
		}
		f, err := os.Create(filepath.Join(dir, "flat.parquet-go."+feature+".parquet"))
		if err != nil {
			log.Fatal(err)
		}
		w := pq.NewGenericWriter[flat](f, opt, pq.CreatedBy("pswap corpusgen", "", ""))
		if _, err := w.Write(rows); err != nil {
			log.Fatal(err)
		}
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

func flatRecord() arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil))
	defer b.Release()
	for i := 0; i < flatRows; i++ {
		r := flatRow(i)
		b.Field(0).(*array.Int64Builder).Append(*r.ID)
		if r.Name == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*r.Name)
		}
		if r.Score == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(*r.Score)
		}
		b.Field(3).(*array.BooleanBuilder).Append(*r.Flag)
	}
	return b.NewRecordBatch()
}

func writeArrow(path string, rec arrow.RecordBatch, props []parquet.WriterProperty) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	props = append(props, parquet.WithCreatedBy("pswap corpusgen"))
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
}
