package staging

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

func finish(t testing.TB, s *Stager) manifest.Content {
	t.Helper()
	c, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func stageStructs(t testing.TB, opts Options, rows []row) (store.Store, manifest.Content) {
	t.Helper()
	st, s := newMem(t, opts)
	if err := Write(s, rows...); err != nil {
		t.Fatal(err)
	}
	return st, finish(t, s)
}

func stageArrow(t testing.TB, opts Options, rows []row) (store.Store, manifest.Content) {
	t.Helper()
	st, s := newMem(t, opts)
	rec := toRecord(rows)
	defer rec.Release()
	if err := s.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	return st, finish(t, s)
}

// checkContent verifies the manifest-level facts of c against the store.
func checkContent(t testing.TB, st store.Store, c manifest.Content, wantRows int64) {
	t.Helper()
	checkContentBy(t, st, c, wantRows, "pswap")
}

// checkContentBy is checkContent for files whose created_by is createdBy
// ("" for any).
func checkContentBy(t testing.TB, st store.Store, c manifest.Content, wantRows int64, createdBy string) {
	t.Helper()
	if c.Rows != wantRows {
		t.Errorf("Content.Rows = %d, want %d", c.Rows, wantRows)
	}
	var rows, size int64
	for i, f := range c.Files {
		if want := fmt.Sprintf("part-%05d.parquet", i); f.Path != want {
			t.Errorf("file %d is %q, want %q", i, f.Path, want)
		}
		b := fileBytes(t, st, f)
		if got := manifest.SHA256Checksum(sha256Sum(b)); got != f.Checksum {
			t.Errorf("%s: checksum %s, bytes hash to %s", f.Path, f.Checksum, got)
		}
		r, err := file.NewParquetReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if r.NumRows() != f.Rows {
			t.Errorf("%s: footer has %d rows, Content says %d", f.Path, r.NumRows(), f.Rows)
		}
		if cb := r.MetaData().GetCreatedBy(); createdBy != "" && cb != createdBy {
			t.Errorf("%s: created_by %q", f.Path, cb)
		}
		r.Close()
		rows += f.Rows
		size += f.Size
	}
	if rows != c.Rows || size != c.Bytes {
		t.Errorf("totals rows=%d bytes=%d, files add up to %d, %d", c.Rows, c.Bytes, rows, size)
	}
	if err := manifest.ValidateContentChecksum(c.ContentChecksum); err != nil {
		t.Error(err)
	}
	if !strings.HasPrefix(c.ContentChecksum, "colsum128:") {
		t.Errorf("content checksum %q", c.ContentChecksum)
	}
	keys := keysUnder(t, st, testPrefix)
	if len(keys) != len(c.Files) {
		t.Errorf("store has %v under the prefix, Content names %d files", keys, len(c.Files))
	}
}

func sha256Sum(b []byte) []byte { h := sha256.Sum256(b); return h[:] }

// readAllArrow concatenates the files of c as Arrow tables' totals.
func readTotalsArrow(t testing.TB, st store.Store, c manifest.Content) totals {
	t.Helper()
	sum := totals{minAt: 1 << 62, maxAt: -1 << 62}
	for _, f := range c.Files {
		x := totalsOfTable(readArrow(t, fileBytes(t, st, f)))
		sum.rows += x.rows
		sum.sumID += x.sumID
		sum.sumSmall += x.sumSmall
		sum.sumU += x.sumU
		sum.sumPrice += x.sumPrice
		sum.sumScore += x.sumScore
		sum.nullScores += x.nullScores
		sum.nullNames += x.nullNames
		sum.minAt = min(sum.minAt, x.minAt)
		sum.maxAt = max(sum.maxAt, x.maxAt)
	}
	return sum
}

func sameTotals(t testing.TB, got, want totals) {
	t.Helper()
	if math.Abs(got.sumScore-want.sumScore) > 1e-6*math.Abs(want.sumScore)+1e-9 {
		t.Errorf("sum(score) = %v, want %v", got.sumScore, want.sumScore)
	}
	got.sumScore, want.sumScore = 0, 0
	if got != want {
		t.Errorf("read back %+v\nwant        %+v", got, want)
	}
}

// TestCrossReaders writes rows through both writers and reads each file
// back with both readers.
func TestCrossReaders(t *testing.T) {
	rows := makeRows(3000, 1)
	want := totalsOf(rows)
	for name, write := range map[string]func(testing.TB, Options, []row) (store.Store, manifest.Content){
		"structs": stageStructs, "arrow": stageArrow,
	} {
		t.Run(name, func(t *testing.T) {
			st, c := write(t, Options{}, rows)
			checkContent(t, st, c, int64(len(rows)))
			sameTotals(t, readTotalsArrow(t, st, c), want)
			var back []row
			for _, f := range c.Files {
				back = append(back, readParquetGo[row](t, fileBytes(t, st, f))...)
			}
			if len(back) != len(rows) {
				t.Fatalf("parquet-go read %d rows, want %d", len(back), len(rows))
			}
			for i := range rows {
				if !reflect.DeepEqual(back[i], rows[i]) {
					t.Fatalf("row %d: parquet-go read\n%+v\nwant\n%+v", i, back[i], rows[i])
				}
			}
		})
	}
}

// TestSameRowsSameChecksum: structs and Arrow records with the same values
// have the same schema and content checksum; other orders and file
// boundaries too; any changed value changes it.
func TestSameRowsSameChecksum(t *testing.T) {
	rows := makeRows(2000, 2)
	_, base := stageStructs(t, Options{}, rows)
	_, viaArrow := stageArrow(t, Options{}, rows)
	if viaArrow.Schema != base.Schema {
		t.Fatalf("schemas differ:\nstructs: %s\narrow: %s", base.Schema, viaArrow.Schema)
	}
	if viaArrow.ContentChecksum != base.ContentChecksum {
		t.Errorf("arrow checksum %s, structs %s", viaArrow.ContentChecksum, base.ContentChecksum)
	}

	shuffled := append([]row(nil), rows...)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	_, c := stageStructs(t, Options{TargetFileSize: 8 << 10}, shuffled)
	if len(c.Files) < 2 {
		t.Fatalf("want several files, got %d", len(c.Files))
	}
	if c.ContentChecksum != base.ContentChecksum {
		t.Errorf("shuffled and split: checksum %s, want %s", c.ContentChecksum, base.ContentChecksum)
	}

	// Mixed inputs into one generation: half structs, half Arrow.
	st, s := newMem(t, Options{})
	if err := Write(s, shuffled[:1000]...); err != nil {
		t.Fatal(err)
	}
	rec := toRecord(shuffled[1000:])
	defer rec.Release()
	if err := s.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	mixed := finish(t, s)
	checkContent(t, st, mixed, 2000)
	if mixed.ContentChecksum != base.ContentChecksum || len(mixed.Files) != 2 {
		t.Errorf("mixed: %d files, checksum %s, want %s", len(mixed.Files), mixed.ContentChecksum, base.ContentChecksum)
	}

	seen := map[string]string{base.ContentChecksum: "base"}
	for name, change := range map[string]func(*row){
		"id":           func(r *row) { r.ID++ },
		"null score":   func(r *row) { r.Score = nil },
		"zero score":   func(r *row) { z := 0.0; r.Score = &z },
		"other name":   func(r *row) { e := "changed"; r.Name = &e },
		"null name":    func(r *row) { r.Name = nil },
		"time":         func(r *row) { r.At = r.At.Add(1000) },
		"price":        func(r *row) { r.Price = -r.Price - 1 },
		"blob":         func(r *row) { r.Blob = append(r.Blob, 0) },
		"flag":         func(r *row) { r.Flag = !r.Flag },
		"small":        func(r *row) { r.Small ^= 1 },
		"day":          func(r *row) { r.Day++ },
		"f32 negative": func(r *row) { r.F32 = -r.F32 },
	} {
		changed := append([]row(nil), rows...)
		x := changed[3] // has non-null score and name
		x.Blob = append([]byte(nil), x.Blob...)
		change(&x)
		changed[3] = x
		_, c := stageStructs(t, Options{}, changed)
		if prev, dup := seen[c.ContentChecksum]; dup {
			t.Errorf("change %q gives the same checksum as %q", name, prev)
		}
		seen[c.ContentChecksum] = name
	}

	// A duplicated row is a different multiset.
	_, dup := stageStructs(t, Options{}, append(rows[:len(rows):len(rows)], rows[0]))
	if dup.ContentChecksum == base.ContentChecksum {
		t.Error("a duplicated row does not change the checksum")
	}
}

// TestDeterministic: the same rows in the same order give the same bytes.
func TestDeterministic(t *testing.T) {
	rows := makeRows(5000, 3)
	for name, write := range map[string]func(testing.TB, Options, []row) (store.Store, manifest.Content){
		"structs": stageStructs, "arrow": stageArrow,
	} {
		for _, comp := range []Compression{Snappy, Zstd, Gzip, Uncompressed} {
			t.Run(name+"/"+comp.String(), func(t *testing.T) {
				opts := Options{Compression: comp, TargetFileSize: 64 << 10}
				st1, c1 := write(t, opts, rows)
				st2, c2 := write(t, opts, rows)
				if !reflect.DeepEqual(c1, c2) {
					t.Fatalf("contents differ:\n%+v\n%+v", c1, c2)
				}
				for i := range c1.Files {
					if !bytes.Equal(fileBytes(t, st1, c1.Files[i]), fileBytes(t, st2, c2.Files[i])) {
						t.Errorf("%s differs", c1.Files[i].Path)
					}
				}
			})
		}
	}
}

// TestCompressionMatters: the codec option reaches both writers.
func TestCompressionMatters(t *testing.T) {
	rows := makeRows(5000, 4)
	for name, write := range map[string]func(testing.TB, Options, []row) (store.Store, manifest.Content){
		"structs": stageStructs, "arrow": stageArrow,
	} {
		_, plain := write(t, Options{Compression: Uncompressed}, rows)
		_, zstd := write(t, Options{Compression: Zstd}, rows)
		if zstd.Bytes >= plain.Bytes {
			t.Errorf("%s: zstd %d bytes >= uncompressed %d", name, zstd.Bytes, plain.Bytes)
		}
		if zstd.ContentChecksum != plain.ContentChecksum {
			t.Errorf("%s: the codec changed the content checksum", name)
		}
	}
}

// TestRollover: a small target size yields several files whose rows add up.
func TestRollover(t *testing.T) {
	rows := makeRows(20000, 5)
	for name, write := range map[string]func(testing.TB, Options, []row) (store.Store, manifest.Content){
		"structs": stageStructs, "arrow": stageArrow,
	} {
		t.Run(name, func(t *testing.T) {
			st, c := write(t, Options{TargetFileSize: 100 << 10, RowGroupRows: 2000}, rows)
			if len(c.Files) < 3 {
				t.Fatalf("%d files, want several", len(c.Files))
			}
			checkContent(t, st, c, int64(len(rows)))
			sameTotals(t, readTotalsArrow(t, st, c), totalsOf(rows))
			for _, f := range c.Files[:len(c.Files)-1] {
				if f.Size < 100<<10/2 {
					t.Errorf("%s is only %d bytes", f.Path, f.Size)
				}
			}
			r, err := file.NewParquetReader(bytes.NewReader(fileBytes(t, st, c.Files[0])))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i := 0; i < r.NumRowGroups(); i++ {
				if n := r.MetaData().RowGroup(i).NumRows(); n > 2000 {
					t.Errorf("row group %d has %d rows, want <= 2000", i, n)
				}
			}
		})
	}
}

// TestRowGroupBytes: row groups are cut by buffered size as well.
func TestRowGroupBytes(t *testing.T) {
	rows := makeRows(40000, 6)
	for name, write := range map[string]func(testing.TB, Options, []row) (store.Store, manifest.Content){
		"structs": stageStructs, "arrow": stageArrow,
	} {
		t.Run(name, func(t *testing.T) {
			st, c := write(t, Options{RowGroupBytes: 64 << 10, Compression: Uncompressed}, rows)
			if len(c.Files) != 1 {
				t.Fatalf("%d files", len(c.Files))
			}
			r, err := file.NewParquetReader(bytes.NewReader(fileBytes(t, st, c.Files[0])))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.NumRowGroups() < 4 {
				t.Errorf("%d row groups, want several", r.NumRowGroups())
			}
		})
	}
}

type otherRow struct {
	ID   int64  `parquet:"id"`
	Note string `parquet:"note"`
}

func TestSchemaMismatch(t *testing.T) {
	rows := makeRows(10, 7)
	rec := toRecord(rows)
	defer rec.Release()
	otherRec := func() arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil))
		defer b.Release()
		b.Field(0).(*array.Int32Builder).Append(1)
		return b.NewRecordBatch()
	}()
	defer otherRec.Release()
	for name, second := range map[string]func(*Stager) error{
		"struct then struct": func(s *Stager) error { return Write(s, otherRow{1, "x"}) },
		"struct then arrow":  func(s *Stager) error { return s.WriteRecord(otherRec) },
		"struct then csv": func(s *Stager) error {
			return s.AddCSV(context.Background(), strings.NewReader("id,note\n1,x\n"), "in.csv", CSVOptions{})
		},
		"given schema": func(s *Stager) error { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			opts := Options{}
			if name == "given schema" {
				opts.Schema = otherRec.Schema()
			}
			st, s := newMem(t, opts)
			err := Write(s, rows...)
			if err == nil {
				err = second(s)
			}
			if !errors.Is(err, ErrSchemaMismatch) {
				t.Fatalf("err = %v, want ErrSchemaMismatch", err)
			}
			msg := err.Error()
			if strings.Count(msg, "schema:") != 2 && !strings.Contains(msg, "id, note") {
				t.Errorf("message should show both schemas: %s", msg)
			}
			if keys := keysUnder(t, st, testPrefix); len(keys) != 0 {
				t.Errorf("left %v", keys)
			}
			if _, err2 := s.Finish(context.Background()); !errors.Is(err2, ErrSchemaMismatch) {
				t.Errorf("Finish after failure: %v", err2)
			}
		})
	}
}
