package staging

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

// Every file staging writes records its column statistics in the content
// (manifest.File.Columns), equal to those of its footer read back from the
// store: from Go structs (parquet-go, whose footer staging reads from the
// bytes it wrote), Arrow records, and existing Parquet files copied as
// they are. A publisher then need not read any footer.
func TestStagedFilesRecordColumnStats(t *testing.T) {
	rows := makeRows(3000, 1)
	for name, write := range map[string]func(testing.TB, Options, []row) (store.Store, manifest.Content){
		"structs": stageStructs, "arrow": stageArrow,
		"file": func(t testing.TB, opts Options, rows []row) (store.Store, manifest.Content) {
			src, c := stageArrow(t, opts, rows)
			st, s := newMem(t, opts)
			for i, f := range c.Files {
				path := filepath.Join(t.TempDir(), "in.parquet")
				if err := os.WriteFile(path, fileBytes(t, src, f), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := s.AddParquetFile(context.Background(), path); err != nil {
					t.Fatalf("file %d: %v", i, err)
				}
			}
			return st, finish(t, s)
		},
	} {
		t.Run(name, func(t *testing.T) {
			st, c := write(t, Options{TargetFileSize: 8 << 10}, rows)
			if len(c.Files) == 0 {
				t.Fatal("no files")
			}
			for _, f := range c.Files {
				if len(f.Columns) == 0 {
					t.Fatalf("%s: no column statistics recorded", f.Path)
				}
				r, err := file.NewParquetReader(bytes.NewReader(fileBytes(t, st, f)))
				if err != nil {
					t.Fatal(err)
				}
				if want := pqscan.ColumnStats(r.MetaData()); !reflect.DeepEqual(f.Columns, want) {
					t.Errorf("%s: recorded\n%+v\nthe footer's\n%+v", f.Path, f.Columns, want)
				}
				bounded := 0
				for _, col := range f.Columns {
					if col.Type != "" {
						bounded++
					}
				}
				if bounded == 0 {
					t.Errorf("%s: no column has bounds: %+v", f.Path, f.Columns)
				}
			}
			m := &manifest.Manifest{Partition: "dt=2026-11-29", Generation: "0193a1b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b", Content: c,
				CreatedAt: time.Unix(1, 0), CommittedAt: time.Unix(2, 0)}
			if _, err := manifest.Encode(m); err != nil {
				t.Fatalf("the content does not encode as a manifest: %v", err)
			}
		})
	}
}
