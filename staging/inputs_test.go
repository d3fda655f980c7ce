package staging

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/parquet-go/parquet-go"
)

// textRow matches the schema inferred from textCSV and textJSONL.
type textRow struct {
	ID    *int64     `parquet:"id,optional"`
	Name  *string    `parquet:"name,optional"`
	Score *float64   `parquet:"score,optional"`
	Flag  *bool      `parquet:"flag,optional"`
	At    *time.Time `parquet:"at,optional,timestamp(microsecond)"`
	Day   *int32     `parquet:"day,optional,date"`
}

const textCSV = `id,name,score,flag,at,day
1,ant,1.5,true,2026-11-29T10:00:00Z,2026-11-29
2,,2.25,false,2026-11-29T11:00:00.5+01:00,
,"b,e""e",,true,2026-11-29T12:00:00Z,2026-11-30
`

const textJSONL = `{"id":1,"name":"ant","score":1.5,"flag":true,"at":"2026-11-29T10:00:00Z","day":"2026-11-29"}

{"id":2,"score":2.25,"flag":false,"at":"2026-11-29T11:00:00.5+01:00","day":null,"name":null}
{"name":"b,e\"e","flag":true,"at":"2026-11-29T12:00:00Z","day":"2026-11-30"}
`

func ptr[T any](v T) *T { return &v }

func textRows() []textRow {
	day := func(s string) *int32 { t, _ := time.Parse("2006-01-02", s); d := int32(t.Unix() / 86400); return &d }
	at := func(s string) *time.Time { t, _ := time.Parse(time.RFC3339Nano, s); t = t.UTC(); return &t }
	return []textRow{
		{ID: ptr[int64](1), Name: ptr("ant"), Score: ptr(1.5), Flag: ptr(true), At: at("2026-11-29T10:00:00Z"), Day: day("2026-11-29")},
		{ID: ptr[int64](2), Score: ptr(2.25), Flag: ptr(false), At: at("2026-11-29T10:00:00.5Z")},
		{Name: ptr(`b,e"e`), Flag: ptr(true), At: at("2026-11-29T12:00:00Z"), Day: day("2026-11-30")},
	}
}

// TestTextInputsMatchStructs: CSV, JSON Lines, structs and an ingested
// Parquet file with the same values give the same schema and checksum.
func TestTextInputsMatchStructs(t *testing.T) {
	ctx := context.Background()
	_, want := stageTextStructs(t)

	st, s := newMem(t, Options{})
	if err := s.AddCSV(ctx, strings.NewReader(textCSV), "in.csv", CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	got := finish(t, s)
	checkContent(t, st, got, 3)
	if got.Schema != want.Schema || got.ContentChecksum != want.ContentChecksum {
		t.Errorf("CSV: schema\n%s\nchecksum %s\nwant\n%s\n%s", got.Schema, got.ContentChecksum, want.Schema, want.ContentChecksum)
	}
	back := readParquetGo[textRow](t, fileBytes(t, st, got.Files[0]))
	if len(back) != 3 || *back[2].Name != `b,e"e` || back[1].Name != nil || back[2].ID != nil || !back[1].At.Equal(*textRows()[1].At) {
		t.Errorf("CSV read back %+v", back)
	}

	st, s = newMem(t, Options{})
	if err := s.AddJSONL(ctx, strings.NewReader(textJSONL), "in.jsonl"); err != nil {
		t.Fatal(err)
	}
	got = finish(t, s)
	checkContent(t, st, got, 3)
	if got.Schema != want.Schema || got.ContentChecksum != want.ContentChecksum {
		t.Errorf("JSONL: schema\n%s\nchecksum %s\nwant\n%s\n%s", got.Schema, got.ContentChecksum, want.Schema, want.ContentChecksum)
	}

	// Ingest a file that parquet-go wrote directly.
	path := filepath.Join(t.TempDir(), "x.parquet")
	if err := pq.WriteFile(path, textRows()); err != nil {
		t.Fatal(err)
	}
	st, s = newMem(t, Options{})
	if err := s.AddParquetFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	got = finish(t, s)
	checkContentBy(t, st, got, 3, "")
	if got.Schema != want.Schema || got.ContentChecksum != want.ContentChecksum {
		t.Errorf("ingested: schema\n%s\nchecksum %s\nwant\n%s\n%s", got.Schema, got.ContentChecksum, want.Schema, want.ContentChecksum)
	}
	orig, _ := os.ReadFile(path)
	if !bytes.Equal(fileBytes(t, st, got.Files[0]), orig) {
		t.Error("ingested file was not copied byte for byte")
	}
}

func stageTextStructs(t *testing.T) (*Stager, contentT) {
	st, s := newMem(t, Options{})
	if err := Write(s, textRows()...); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)
	checkContent(t, st, c, 3)
	return s, c
}

// TestAddParquetFileRoundTrip re-ingests files the stager wrote.
func TestAddParquetFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	rows := makeRows(5000, 11)
	for name, write := range map[string]func(testing.TB, Options, []row) (storeT, contentT){
		"structs": stageStructs, "arrow": stageArrow,
	} {
		t.Run(name, func(t *testing.T) {
			st0, c0 := write(t, Options{TargetFileSize: 64 << 10, RowGroupRows: 700}, rows) // several row groups a file: scanned in parallel
			dir := t.TempDir()
			st, s := newMem(t, Options{})
			for _, f := range c0.Files {
				p := filepath.Join(dir, f.Path)
				if err := os.WriteFile(p, fileBytes(t, st0, f), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := s.AddParquetFile(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			c := finish(t, s)
			checkContent(t, st, c, int64(len(rows)))
			if c.ContentChecksum != c0.ContentChecksum || c.Schema != c0.Schema {
				t.Errorf("re-ingested checksum %s, written %s", c.ContentChecksum, c0.ContentChecksum)
			}
			for i := range c.Files {
				if !reflect.DeepEqual(c.Files[i], c0.Files[i]) {
					t.Errorf("file %d: %+v, want %+v", i, c.Files[i], c0.Files[i])
				}
			}
		})
	}
}

func TestAddParquetFileRefusesCorrupt(t *testing.T) {
	ctx := context.Background()
	st0, c0 := stageStructs(t, Options{Compression: Snappy}, makeRows(3000, 12))
	good := fileBytes(t, st0, c0.Files[0])
	damaged := func(off int) []byte {
		b := bytes.Clone(good)
		for i := off; i < off+64; i++ {
			b[i] ^= 0x5a
		}
		return b
	}
	for name, data := range map[string][]byte{
		"empty":          {},
		"not parquet":    []byte("id,name\n1,x\n"),
		"truncated tail": good[:len(good)-100],
		"truncated half": good[:len(good)/2],
		"no magic":       append(bytes.Clone(good[:len(good)-4]), "XXXX"...),
		"damaged footer": damaged(len(good) - 300),
		"damaged start":  damaged(4),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.parquet")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			st, s := newMem(t, Options{})
			if err := Write(s, makeRows(10, 1)...); err != nil { // something already staged
				t.Fatal(err)
			}
			err := s.AddParquetFile(ctx, path)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			if keys := keysUnder(t, st, testPrefix); len(keys) != 0 {
				t.Errorf("left %v", keys)
			}
			if _, err := s.Finish(ctx); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Finish: %v", err)
			}
		})
	}
}

func TestWriteRefusesTimeDate(t *testing.T) {
	type bad struct {
		D time.Time `parquet:"d,date"`
	}
	st, s := newMem(t, Options{})
	err := Write(s, bad{time.Now()})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
	if keys := keysUnder(t, st, testPrefix); len(keys) != 0 {
		t.Errorf("left %v", keys)
	}
}

func TestAddParquetFileMissing(t *testing.T) {
	_, s := newMem(t, Options{})
	err := s.AddParquetFile(context.Background(), filepath.Join(t.TempDir(), "nope.parquet"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func TestCSVErrors(t *testing.T) {
	intSchema := rowSchemaOf(t, "id:int64", "name:utf8")
	for _, tc := range []struct {
		name, in string
		opts     CSVOptions
		line     string // expected in the message
		is       error
	}{
		{"inferred int then text", "id,name\n1,a\n2,b\nthree,c\n", CSVOptions{InferRows: 2}, "line 4", ErrBadInput},
		{"given schema bad int", "id,name\n1,a\nx,b\n", CSVOptions{Schema: intSchema}, "line 3", ErrBadInput},
		{"too many fields", "id,name\n1,a\n2,b,c\n", CSVOptions{}, "line 3", ErrBadInput},
		{"too few fields", "id,name\n1,a\n2\n", CSVOptions{}, "line 3", ErrBadInput},
		{"bare quote", "id,name\n1,a\"b\n", CSVOptions{}, "line 2", ErrBadInput},
		{"multi-line field before bad row", "id,name\n1,\"a\nb\"\nx,c\n", CSVOptions{Schema: intSchema}, "line 4", ErrBadInput},
		{"duplicate header", "id,id\n1,2\n", CSVOptions{}, "line 1", ErrBadInput},
		{"header not schema", "id,nom\n1,a\n", CSVOptions{Schema: intSchema}, "nom", ErrBadInput},
		{"null in required", "id,name\n,a\n", CSVOptions{Schema: rowSchemaOf(t, "id:int64!", "name:utf8")}, "line 2", ErrBadInput},
		{"empty input", "", CSVOptions{}, "empty", ErrBadInput},
		{"no header no schema", "1,2\n", CSVOptions{NoHeader: true}, "schema", ErrBadInput},
		{"unsupported type", "a\n1\n", CSVOptions{Schema: rowSchemaOf(t, "a:float16")}, "float16", ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, s := newMem(t, Options{})
			err := s.AddCSV(context.Background(), strings.NewReader(tc.in), "in.csv", tc.opts)
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.line) || (tc.is == ErrBadInput && !strings.Contains(err.Error(), "in.csv")) {
				t.Errorf("error %q should name in.csv and %q", err, tc.line)
			}
			if keys := keysUnder(t, st, testPrefix); len(keys) != 0 {
				t.Errorf("left %v", keys)
			}
		})
	}
}

func TestCSVOptions(t *testing.T) {
	ctx := context.Background()
	sc := rowSchemaOf(t, "id:int64!", "name:utf8")
	// Same rows three ways: header in another order, no header, semicolons.
	inputs := []struct {
		in   string
		opts CSVOptions
	}{
		{"name,id\na,1\nNA,2\n", CSVOptions{Schema: sc, NullValues: []string{"NA"}}},
		{"1,a\n2,NA\n", CSVOptions{Schema: sc, NoHeader: true, NullValues: []string{"NA"}}},
		{"id;name\n1;a\n2;\n", CSVOptions{Schema: sc, Comma: ';'}},
	}
	var first contentT
	for i, in := range inputs {
		st, s := newMem(t, Options{})
		if err := s.AddCSV(ctx, strings.NewReader(in.in), "in.csv", in.opts); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		c := finish(t, s)
		checkContent(t, st, c, 2)
		if i == 0 {
			first = c
		} else if c.ContentChecksum != first.ContentChecksum {
			t.Errorf("input %d: checksum %s, want %s", i, c.ContentChecksum, first.ContentChecksum)
		}
	}
	// Several CSV inputs share the schema of the first.
	_, s := newMem(t, Options{})
	if err := s.AddCSV(ctx, strings.NewReader("a,b\n1,x\n"), "1.csv", CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCSV(ctx, strings.NewReader("b,a\ny,2\n"), "2.csv", CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	err := s.AddCSV(ctx, strings.NewReader("a,b\n1.5,z\n"), "3.csv", CSVOptions{})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "3.csv: line 2") {
		t.Errorf("float into the generation's int64 column: %v", err)
	}
}

func TestJSONLErrors(t *testing.T) {
	intA := rowSchemaOf(t, "a:int64")
	for _, tc := range []struct {
		name, in, want string
		schema         *arrow.Schema
	}{
		{"not json", "{\"a\":1}\n{oops}\n", "line 2", nil},
		{"not an object", "{\"a\":1}\n[1]\n", "line 2", nil},
		{"two values", "{\"a\":1} {\"a\":2}\n", "line 1", nil},
		{"unknown key", "{\"a\":1}\n\n{\"b\":2}\n", "line 3", intA},
		{"type change", "{\"a\":1}\n{\"a\":\"x\"}\n", "line 2", nil},
		{"bool after number", "{\"a\":1}\n{\"a\":true}\n", "line 2", nil},
		{"float into int", "{\"a\":1}\n{\"a\":1.5}\n", "line 2", intA},
		{"object then array", "{\"a\":{\"b\":1}}\n{\"a\":[1]}\n", "line 2", nil},
		{"array for int", "{\"a\":[1]}\n", "line 1", intA},
		{"object for list", "{\"a\":{\"b\":1}}\n", "line 1", rowSchemaOfFields(arrow.Field{Name: "a", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true})},
		{"not a struct field", "{\"a\":{\"c\":1}}\n", "line 1", rowSchemaOfFields(arrow.Field{Name: "a", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true})},
		{"bad list element", "{\"a\":[1,\"x\"]}\n", "line 1: key \"a\": element 1", rowSchemaOfFields(arrow.Field{Name: "a", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true})},
		{"duplicate key", "{\"a\":1,\"a\":2}\n", "line 1", nil},
		{"truncated", "{\"a\":1}\n{\"a\":", "line 2", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, s := newMem(t, Options{Schema: tc.schema})
			err := s.AddJSONL(context.Background(), strings.NewReader(tc.in), "in.jsonl")
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("err = %v, want ErrBadInput", err)
			}
			if !strings.Contains(err.Error(), "in.jsonl: "+tc.want) {
				t.Errorf("error %q should name in.jsonl and %s", err, tc.want)
			}
			if keys := keysUnder(t, st, testPrefix); len(keys) != 0 {
				t.Errorf("left %v", keys)
			}
		})
	}
	// A later line past the inference window that does not fit.
	in := strings.Repeat("{\"a\":1}\n", DefaultInferRows+10) + "{\"a\":true}\n"
	_, s := newMem(t, Options{})
	err := s.AddJSONL(context.Background(), strings.NewReader(in), "big.jsonl")
	if want := "line 1011"; !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestJSONLWithSchema(t *testing.T) {
	sc := rowSchemaOf(t, "id:int64!", "price:decimal(10,2)", "at:timestamp[ms]", "blob:binary")
	in := `{"id":1,"price":"12.34","at":"2026-11-29 10:00:00.123","blob":"aGk="}
{"id":2,"price":5}
`
	st, s := newMem(t, Options{Schema: sc})
	if err := s.AddJSONL(context.Background(), strings.NewReader(in), "in.jsonl"); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)
	checkContent(t, st, c, 2)
	tbl := readArrow(t, fileBytes(t, st, c.Files[0]))
	if got := tbl.Schema().Field(1).Type.String(); got != "decimal(10, 2)" {
		t.Errorf("price type %s", got)
	}
	_, s = newMem(t, Options{Schema: sc})
	err := s.AddJSONL(context.Background(), strings.NewReader(`{"price":"1"}`), "in.jsonl")
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), `"id" missing`) {
		t.Errorf("missing required key: %v", err)
	}
}
