package staging

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/pswap/pswap/internal/testing/pqfiles"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/s3store"
)

// TestExistingFileS3Parts: an existing file of several parts goes to S3
// through the writer's own reads (hashSink.ReadFrom into the multipart
// upload's part buffers): the object holds the file's bytes and the
// manifest their SHA-256. The same file damaged in its last row group
// (pages without CRC, Snappy bytes scrambled: only the full check's
// decoding finds it, after most parts went out) is refused with
// ErrCorrupt, and neither an object nor a multipart upload is left.
func TestExistingFileS3Parts(t *testing.T) {
	st := testenv.S3Store(t)
	ctx := context.Background()
	rec := pqfiles.PrimitiveRecord(t, 100_000, 7)
	defer rec.Release()
	good := filepath.Join(t.TempDir(), "good.parquet")
	pqfiles.WriteArrowFile(t, good, rec, parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(20_000)))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Writer: store.WriterOptions{PartSize: s3store.MinPartSize}}
	if len(data) < 2*int(s3store.MinPartSize)+1 {
		t.Fatalf("file of %d bytes: the test needs at least three parts", len(data))
	}

	s := New(ctx, st, testPrefix, opts)
	if err := s.AddParquetFile(ctx, good); err != nil {
		t.Fatal(err)
	}
	c, err := s.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 1 || c.Rows != 100_000 {
		t.Fatalf("content %+v, want one file of 100000 rows", c.Files)
	}
	sum := sha256.Sum256(data)
	if got := fileBytes(t, st, c.Files[0]); !bytes.Equal(got, data) || c.Files[0].Checksum != manifest.SHA256Checksum(sum[:]) {
		t.Errorf("object of %d bytes (checksum %s), want the file's %d bytes (%x)", len(got), c.Files[0].Checksum, len(data), sum)
	}

	pr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	md := pr.MetaData()
	cc, err := md.RowGroup(md.NumRowGroups() - 1).ColumnChunk(md.Schema.ColumnIndexByName("i64"))
	if err != nil {
		t.Fatal(err)
	}
	// The middle of the chunk's last (data) page: past its header.
	off := cc.DataPageOffset() + cc.TotalCompressedSize()*3/4
	if cc.HasDictionaryPage() {
		off = cc.DataPageOffset() + (cc.DictionaryPageOffset()+cc.TotalCompressedSize()-cc.DataPageOffset())/2
	}
	bad := bytes.Clone(data)
	for i := off; i < off+48; i++ {
		bad[i] ^= 0xa5
	}
	path := filepath.Join(t.TempDir(), "bad.parquet")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := "dt=2026-11-30/_pswap/gen/0002/"
	s = New(ctx, st, prefix, opts)
	err = s.AddParquetFile(ctx, path)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged file: %v, want ErrCorrupt", err)
	}
	_ = s.Abort(ctx)
	if keys := keysUnder(t, st, prefix); len(keys) != 0 {
		t.Errorf("left objects %v", keys)
	}
	for u, err := range st.ListUploads(ctx, prefix) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("left the multipart upload %s of %s", u.ID, u.Key)
	}
}
