package staging

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/pqscan"
)

// TestPrescan: a full check started before the file is added
// (StartPrescan, as `pswap commit` does for its first Parquet input)
// stands for the stager's scan only when the stager opens the very file
// scanned, unchanged, and computes the same checksum: the content is then
// what a scan of its own gives. A file rewritten in place (another
// modification time) or replaced by another file of the same size and
// time (rename), a legacy checksum and the footer-only check all decline
// it, and their content is the file's as it is when added. A prescan's
// failure is the add's.
func TestPrescan(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	stA, ca := stageArrow(t, Options{}, makeRows(4000, 21))
	bytesA := fileBytes(t, stA, ca.Files[0])
	write := func(name string, b []byte, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flip := func(off int) []byte {
		d := append([]byte(nil), bytesA...)
		for i := off; i < off+16; i++ {
			d[i] ^= 0x5a
		}
		return d
	}
	// B: A with a literal changed inside a page: the same size, other rows.
	var bytesB []byte
	var cb contentT
	for off := 100; off < len(bytesA)/2 && bytesB == nil; off += 97 {
		d := flip(off)
		if c, err := addFile(t, Options{}, write("b.parquet", d, time.Now())); err == nil && c.ContentChecksum != ca.ContentChecksum {
			bytesB, cb = d, c
		}
	}
	if bytesB == nil {
		t.Fatal("no change inside a page that still decodes")
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	wait := func(p *pqscan.Prescan) {
		t.Helper()
		if p == nil {
			t.Fatal("no prescan started")
		}
		if _, _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Used: the same content as without it.
	a := write("a.parquet", bytesA, t0)
	taken := pqscan.PrescansTaken()
	sp := StartPrescan(ctx, a)
	got := mustAdd(t, Options{}, a)
	sp.Stop()
	if n := pqscan.PrescansTaken() - taken; n != 1 {
		t.Errorf("prescans taken: %d, want 1", n)
	}
	if got.ContentChecksum != ca.ContentChecksum || got.Rows != ca.Rows {
		t.Errorf("with a prescan: %s, %d rows; want %s, %d", got.ContentChecksum, got.Rows, ca.ContentChecksum, ca.Rows)
	}
	if c := mustAdd(t, Options{}, a); c.ContentChecksum != ca.ContentChecksum {
		t.Errorf("without one: %s, want %s", c.ContentChecksum, ca.ContentChecksum)
	}

	// Declined: each case adds B's bytes, or A's with another check, after
	// a prescan of A at the path.
	cases := []struct {
		name    string
		opts    Options
		replace func(path string)
		want    string
	}{
		{"rewritten in place, another time", Options{}, func(path string) {
			write(filepath.Base(path), bytesB, t0.Add(time.Second))
		}, cb.ContentChecksum},
		{"another file, same size and time", Options{}, func(path string) {
			other := write("other.parquet", bytesB, t0)
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}, cb.ContentChecksum},
		{"legacy checksum", Options{LegacyChecksum: true}, func(string) {}, ""},
		{"footer check", Options{Check: CheckFooter}, func(string) {}, ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write("case.parquet", bytesA, t0)
			p := pqscan.StartPrescan(ctx, path)
			defer p.Stop()
			wait(p)
			c.replace(path)
			want := c.want
			if want == "" {
				want = mustAdd(t, c.opts, a).ContentChecksum // A's, with these options
			}
			taken := pqscan.PrescansTaken()
			got := mustAdd(t, c.opts, path)
			if n := pqscan.PrescansTaken() - taken; n != 0 {
				t.Errorf("case %d: prescans taken: %d, want 0", i, n)
			}
			if got.ContentChecksum != want {
				t.Errorf("content %s, want %s", got.ContentChecksum, want)
			}
		})
	}

	// A prescan's failure is the add's: damage inside a page that the
	// full check refuses.
	found := false
	for off := 100; off < len(bytesA)/2 && !found; off += 97 {
		bad := write("bad.parquet", flip(off), t0)
		if _, err := addFile(t, Options{}, bad); !errors.Is(err, ErrCorrupt) {
			continue
		}
		found = true
		taken := pqscan.PrescansTaken()
		p := pqscan.StartPrescan(ctx, bad)
		_, err := addFile(t, Options{}, bad)
		p.Stop()
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("damaged file with a prescan: %v, want ErrCorrupt", err)
		}
		if n := pqscan.PrescansTaken() - taken; n != 1 {
			t.Errorf("damaged file: prescans taken %d, want 1", n)
		}
	}
	if !found {
		t.Error("no damage that the full check refuses")
	}
}

// TestPrescanNil: StartPrescan of a file that cannot be opened starts
// nothing, and Stop of nil does nothing.
func TestPrescanNil(t *testing.T) {
	p := StartPrescan(context.Background(), filepath.Join(t.TempDir(), "missing.parquet"))
	if p != nil {
		t.Errorf("StartPrescan of a missing file: %v, want nil", p)
	}
	p.Stop()
}
