package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap"
	"github.com/pswap/pswap/staging"
)

// A generation committed with --check footer from a file without page CRCs
// whose page is damaged: verify says it checked the bytes and CRCs only
// (exit 0, as the bytes are the ones committed), and verify --deep decodes
// every page, finds the damage and exits 4.
func TestVerifyDeepFindsDamagedPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	table := filepath.Join(dir, "sales")
	tb, err := pswap.Open(ctx, table, pswap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	// A converted CSV is written by Arrow, without page CRCs.
	var csv strings.Builder
	csv.WriteString("id,amount,region\n")
	for i := range 300 {
		fmt.Fprintf(&csv, "%d,%d.%02d,r%d\n", i, i*7, i%100, i%13)
	}
	src, err := tb.Partition("dt=2026-11-01")
	if err != nil {
		t.Fatal(err)
	}
	w, err := src.Begin(ctx, pswap.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddReader(ctx, strings.NewReader(csv.String()), "rows.csv", pswap.FormatCSV); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := src.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(table, filepath.FromSlash(snap.Files[0].Key)))
	if err != nil {
		t.Fatal(err)
	}
	part, err := tb.Partition("dt=2026-11-02")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"verify", "--table", table, "--partition", "dt=2026-11-02"}
	for off := 64; off < len(good)-512; off += 53 {
		bad := append([]byte(nil), good...)
		bad[off] ^= 0x5a
		path := filepath.Join(dir, "bad.parquet")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := part.Begin(ctx, pswap.WriteOptions{Staging: staging.Options{Check: staging.CheckFooter}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddPath(ctx, path, pswap.FormatParquet); err != nil {
			_ = w.Abort(ctx)
			continue // the damage hit a page header or the footer, which --check footer reads
		}
		if _, err := w.Commit(ctx); err != nil {
			continue
		}
		code, stdout, stderr := invoke(t, nil, "", args...)
		if code != exitOK {
			t.Fatalf("verify of the bytes committed: exit %d: %s%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "checked size, sha256, footer-rows, page-crcs (rows not decoded: committed with --check footer; --deep decodes every page)") {
			t.Fatalf("verify does not say what it checked: %s", stdout)
		}
		code, stdout, stderr = invoke(t, nil, "", append(args, "--deep", "--json")...)
		if code == exitOK {
			continue // this damage still decodes (a changed value): try another
		}
		if code != exitMismatch {
			t.Fatalf("verify --deep: exit %d, want 4: %s%s", code, stdout, stderr)
		}
		for _, want := range []string{`"what": "pages"`, `"pages-decoded"`, `"ok": false`} {
			if !strings.Contains(stdout, want) {
				t.Errorf("verify --deep --json: no %s in %s", want, stdout)
			}
		}
		return
	}
	t.Fatal("no damaged page that verify --deep finds")
}
