package staging

import (
	"github.com/pswap/pswap/internal/checksum"

	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/manifest"
)

// addFile stages the files at paths with opts and returns the content.
func addFile(t *testing.T, opts Options, paths ...string) (manifest.Content, error) {
	t.Helper()
	_, s := newMem(t, opts)
	for _, p := range paths {
		if err := s.AddParquetFile(context.Background(), p); err != nil {
			return manifest.Content{}, err
		}
	}
	return s.Finish(context.Background())
}

// TestCheckFooter: with CheckFooter a file is copied after its footer and
// page CRCs are checked, without decoding: the content checksum is over
// the files' bytes (the same bytes under another name are identical
// content, the same rows in other bytes are not), a page CRC mismatch and
// a damaged footer are still refused, and damage inside a page without a
// CRC is accepted (CheckFull refuses it).
func TestCheckFooter(t *testing.T) {
	dir := t.TempDir()
	rows := makeRows(4000, 21)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stS, cS := stageStructs(t, Options{}, rows) // parquet-go: a CRC on every page
	withCRC := fileBytes(t, stS, cS.Files[0])
	stA, cA := stageArrow(t, Options{}, rows) // Arrow: no page CRCs
	noCRC := fileBytes(t, stA, cA.Files[0])
	if pageCRCs(t, withCRC) == 0 || pageCRCs(t, noCRC) != 0 {
		t.Fatalf("page CRCs: %d and %d, want some and none", pageCRCs(t, withCRC), pageCRCs(t, noCRC))
	}
	a, a2, b := write("a.parquet", withCRC), write("renamed.parquet", withCRC), write("b.parquet", noCRC)
	footer := Options{Check: CheckFooter}

	ca, err := addFile(t, footer, a)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(withCRC)
	if ca.Rows != int64(len(rows)) || len(ca.Files) != 1 || ca.Files[0].Checksum != manifest.SHA256Checksum(sum[:]) ||
		ca.Files[0].Size != int64(len(withCRC)) {
		t.Fatalf("footer-checked content %+v", ca)
	}
	if !strings.HasPrefix(ca.ContentChecksum, checksum.Files+":") || ca.ContentChecksum != checksum.OfFiles(ca.Files) {
		t.Errorf("content checksum %s, want %s", ca.ContentChecksum, checksum.OfFiles(ca.Files))
	}
	if ca.Schema != cS.Schema {
		t.Errorf("schema %s, want %s", ca.Schema, cS.Schema)
	}
	if c, err := addFile(t, footer, a2); err != nil || c.ContentChecksum != ca.ContentChecksum {
		t.Errorf("same bytes, other name: %s %v, want %s", c.ContentChecksum, err, ca.ContentChecksum)
	}
	cb, err := addFile(t, footer, b)
	if err != nil || cb.ContentChecksum == ca.ContentChecksum || cb.Rows != ca.Rows {
		t.Errorf("same rows, other bytes: %s %v (rows %d), want another checksum than %s", cb.ContentChecksum, err, cb.Rows, ca.ContentChecksum)
	}
	if c1, c2 := mustAdd(t, Options{}, a), mustAdd(t, Options{}, b); c1.ContentChecksum != c2.ContentChecksum || c1.ContentChecksum != cS.ContentChecksum {
		t.Errorf("CheckFull: %s and %s, want both %s", c1.ContentChecksum, c2.ContentChecksum, cS.ContentChecksum)
	}
	// Two files, in either order: one checksum.
	if c1, c2 := mustAdd(t, footer, a, b), mustAdd(t, footer, b, a); c1.ContentChecksum != c2.ContentChecksum {
		t.Errorf("file order changed the checksum: %s, %s", c1.ContentChecksum, c2.ContentChecksum)
	}

	damage := func(b []byte, off int) []byte {
		d := bytes.Clone(b)
		for i := off; i < off+16; i++ {
			d[i] ^= 0x5a
		}
		return d
	}
	// Inside the first page's values (past its header), and in the footer.
	crcBad := write("crc-bad.parquet", damage(withCRC, 200))
	if _, err := addFile(t, footer, crcBad); !errors.Is(err, ErrPageChecksum) {
		t.Errorf("page CRC mismatch with CheckFooter: %v, want ErrPageChecksum", err)
	}
	footBad := write("footer-bad.parquet", damage(noCRC, len(noCRC)-200))
	if _, err := addFile(t, footer, footBad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged footer with CheckFooter: %v, want ErrCorrupt", err)
	}
	// Damage inside a page without a CRC that CheckFull's decoding catches
	// (not every damage does: a changed literal still decodes) is stored
	// by CheckFooter, which decodes nothing.
	found := false
	for off := 100; off < len(noCRC)/2 && !found; off += 97 {
		pageBad := write("page-bad.parquet", damage(noCRC, off))
		if _, err := addFile(t, Options{}, pageBad); !errors.Is(err, ErrCorrupt) {
			continue
		}
		c, err := addFile(t, footer, pageBad)
		if err != nil {
			continue // the damage hit a page header, which both modes read
		}
		if c.Rows != int64(len(rows)) {
			t.Errorf("damaged page stored by CheckFooter: %d rows, want %d", c.Rows, len(rows))
		}
		found = true
	}
	if !found {
		t.Error("no damage that CheckFull refuses and CheckFooter stores")
	}
}

func mustAdd(t *testing.T, opts Options, paths ...string) manifest.Content {
	t.Helper()
	c, err := addFile(t, opts, paths...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseCheck(t *testing.T) {
	for _, c := range []Check{CheckFull, CheckFooter} {
		if got, err := ParseCheck(c.String()); err != nil || got != c {
			t.Errorf("ParseCheck(%q) = %v, %v", c.String(), got, err)
		}
	}
	if _, err := ParseCheck("rows"); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), `"rows"`) {
		t.Errorf("ParseCheck(rows): %v", err)
	}
}
