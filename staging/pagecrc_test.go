package staging

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/pqscan"
)

func pageCRCs(t *testing.T, b []byte) int {
	t.Helper()
	n, err := pqscan.VerifyPageChecksums(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPageChecksums: pages that carry a CRC (parquet-go writes them, and
// so do the files pswap writes through it) are checked; one flipped bit
// inside a page of a valid file is refused with ErrPageChecksum naming the
// file and the column, before anything is uploaded.
func TestPageChecksums(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"corpus/flat.parquet-go.zstd.parquet", "parquet-testing/datapage_v1-snappy-compressed-checksum.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if n := pageCRCs(t, b); n == 0 {
			t.Fatalf("%s: no page CRC checked", name)
		}
		// Flip a bit in the middle of the first page's data: the page
		// header of a small file is in its first few dozen bytes.
		bad := bytes.Clone(b)
		bad[len(b)/4] ^= 0x10
		path := filepath.Join(t.TempDir(), "bad.parquet")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		st, s := newMem(t, Options{})
		err = s.AddParquetFile(ctx, path)
		if !errors.Is(err, ErrPageChecksum) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s with a flipped bit: %v, want ErrPageChecksum", name, err)
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "in column ") {
			t.Errorf("error names neither file nor column: %v", err)
		}
		if keys := keysUnder(t, st, testPrefix); len(keys) != 0 {
			t.Errorf("uploaded %v", keys)
		}
	}
	// The files pswap writes itself carry page CRCs.
	st, s := newMem(t, Options{})
	if err := Write(s, makeRows(100, 3)...); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)
	if n := pageCRCs(t, fileBytes(t, st, c.Files[0])); n == 0 {
		t.Error("a file written by Write has no page CRC")
	}
}
