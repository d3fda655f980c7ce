package staging

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/store/filestore"
)

// The default encodings and row groups (see the package documentation),
// for both writers: 64-bit integers and timestamps DELTA_BINARY_PACKED,
// strings dictionary encoded, floating point PLAIN; row groups of at most
// DefaultRowGroupRows rows, each with min/max statistics of every column
// (what lets a reader skip it). The bytes stay deterministic.
func TestDefaultEncodings(t *testing.T) {
	ctx := context.Background()
	n := DefaultRowGroupRows + 5000
	rows := makeRows(n, 7)
	for name, write := range map[string]func(*Stager) error{
		"structs": func(s *Stager) error { return Write(s, rows...) },
		"arrow": func(s *Stager) error {
			rec := toRecord(rows)
			defer rec.Release()
			return s.WriteRecord(rec)
		},
	} {
		t.Run(name, func(t *testing.T) {
			var first []byte
			for attempt := range 2 {
				st, s := newMem(t, Options{})
				if err := write(s); err != nil {
					t.Fatal(err)
				}
				c, err := s.Finish(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Files) != 1 {
					t.Fatalf("%d files, want 1", len(c.Files))
				}
				b := fileBytes(t, st, c.Files[0])
				if attempt == 1 {
					if !bytes.Equal(b, first) {
						t.Fatal("the same rows gave different bytes")
					}
					continue
				}
				first = b
				f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
				if err != nil {
					t.Fatal(err)
				}
				md := f.Metadata()
				if len(md.RowGroups) != 2 || md.RowGroups[0].NumRows != DefaultRowGroupRows {
					t.Fatalf("%d row groups, the first of %d rows; want 2, of %d", len(md.RowGroups), md.RowGroups[0].NumRows, DefaultRowGroupRows)
				}
				want := map[string]format.Encoding{
					"id": format.DeltaBinaryPacked, "at": format.DeltaBinaryPacked,
					"name": format.RLEDictionary, "f32": format.Plain, "score": format.Plain,
				}
				// The page index (min/max per page, what lets a reader skip
				// pages) is written for every column chunk; page headers
				// carry no statistics of their own on the struct path.
				cis := f.ColumnIndexes()
				if want := len(md.RowGroups) * len(md.RowGroups[0].Columns); len(cis) != want {
					t.Fatalf("%d column indexes, want %d", len(cis), want)
				}
				for i, ci := range cis {
					if len(ci.MaxValues) == 0 || len(ci.MaxValues) != len(ci.NullPages) {
						t.Errorf("column index %d: %d maxima for %d pages", i, len(ci.MaxValues), len(ci.NullPages))
					}
				}
				for _, rg := range md.RowGroups {
					for _, cc := range rg.Columns {
						col := cc.MetaData.PathInSchema[0]
						st := cc.MetaData.Statistics
						if len(st.MaxValue) == 0 { // (a minimum can be "")
							t.Errorf("column %s: no min/max statistics in a row group", col)
						}
						if e, ok := want[col]; ok && !slices.Contains(cc.MetaData.Encoding, e) {
							t.Errorf("column %s: encodings %v, want %v", col, cc.MetaData.Encoding, e)
						}
						if col == "id" && slices.Contains(cc.MetaData.Encoding, format.Plain) {
							t.Errorf("column id: encodings %v include PLAIN", cc.MetaData.Encoding)
						}
					}
				}
			}
		})
	}
}

// Every file of a generation of several has the bytes that a Stager with
// the same options writing its rows alone gives: nothing carries over from
// one file to the next (the reused write buffer, and no reused encoder:
// parquet-go's Reset does not pass this test, see TestResetWriterBytes).
func TestEachFileAsIfWrittenAlone(t *testing.T) {
	ctx := context.Background()
	rows := makeRows(60000, 11)
	opts := Options{TargetFileSize: 300 << 10}
	st, s := newMem(t, opts)
	if err := Write(s, rows...); err != nil {
		t.Fatal(err)
	}
	c, err := s.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) < 3 {
		t.Fatalf("%d files, want at least 3", len(c.Files))
	}
	off := int64(0)
	for i, f := range c.Files {
		st2, s2 := newMem(t, opts)
		if err := Write(s2, rows[off:off+f.Rows]...); err != nil {
			t.Fatal(err)
		}
		c2, err := s2.Finish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(c2.Files) != 1 || !bytes.Equal(fileBytes(t, st, f), fileBytes(t, st2, c2.Files[0])) {
			t.Fatalf("file %d (rows %d-%d): bytes differ from a new writer's", i, off, off+f.Rows)
		}
		off += f.Rows
	}
}

// hyparquet, a second independent reader, reads the default encodings
// (DELTA_BINARY_PACKED, dictionaries, several row
// groups) of both writers, and finds the same rows in both files.
func TestHyparquetReadsDefaultEncodings(t *testing.T) {
	duckcheck.SkipIfHyparquetUnavailable(t)
	ctx := context.Background()
	n := 12000
	rows := makeRows(n, 5)
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"structs", "arrow"} {
		fs, err := filestore.New(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		s := New(ctx, fs, testPrefix, Options{RowGroupRows: 5000}) // 3 row groups
		if name == "structs" {
			err = Write(s, rows...)
		} else {
			rec := toRecord(rows)
			err = s.WriteRecord(rec)
			rec.Release()
		}
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Finish(ctx)
		if err != nil || len(c.Files) != 1 {
			t.Fatalf("%s: %d files, %v", name, len(c.Files), err)
		}
		paths = append(paths, filepath.Join(dir, name, filepath.FromSlash(testPrefix+c.Files[0].Path)))
	}
	files, errs, err := duckcheck.ReadParquetFiles(ctx, paths...)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if errs[i] != nil {
			t.Fatalf("%s: %v", paths[i], errs[i])
		}
		if f.NumRows != int64(n) || len(f.Rows) != n {
			t.Fatalf("%s: %d rows (footer %d), want %d", paths[i], len(f.Rows), f.NumRows, n)
		}
		for _, k := range []int{0, 1, n / 2, n - 1} {
			if got := fmt.Sprint(f.Rows[k]["id"]); got != fmt.Sprint(rows[k].ID) {
				t.Fatalf("%s: row %d has id %s, want %d", paths[i], k, got, rows[k].ID)
			}
		}
	}
	if a, b := files[0].Checksum(), files[1].Checksum(); a != b {
		t.Fatalf("hyparquet reads different rows from the two writers' files: %s vs %s", a, b)
	}
}
