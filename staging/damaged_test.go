package staging

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/pswap/pswap/internal/pqscan"
	"github.com/pswap/pswap/internal/testing/pqfiles"
)

// TestFastScanRefusesDamagedPages: a file the fast scan takes whose pages
// carry no CRC (Arrow's writer does not write them) and whose compressed
// bytes are damaged is refused with ErrCorrupt naming the file, and
// nothing of it stays on the store.
func TestFastScanRefusesDamagedPages(t *testing.T) {
	ctx := context.Background()
	rec := pqfiles.PrimitiveRecord(t, 20000, 3)
	defer rec.Release()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	pqfiles.WriteArrowFile(t, good, rec, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if n, err := pqscan.VerifyPageChecksums(bytes.NewReader(data), int64(len(data))); err != nil || n != 0 {
		t.Fatalf("%d pages with a CRC (%v): the test needs pages without", n, err)
	}
	before := pqscan.FastRowGroups()
	if _, s := newMem(t, Options{}); s.AddParquetFile(ctx, good) != nil {
		t.Fatal("the undamaged file is refused")
	}
	if pqscan.FastRowGroups() == before {
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
