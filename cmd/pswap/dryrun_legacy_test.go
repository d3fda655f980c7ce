package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/swap"
)

// A partition whose current generation was committed before colsum128
// (its content checksum is rowsum128): committing the same rows again is
// a no-op, and --dry-run says so too, instead of "would-commit".
func TestDryRunIdenticalOnLegacyChecksum(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// A Parquet file of a few rows, as pswap stores them.
	scratch := filepath.Join(dir, "scratch")
	csv := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csv, []byte("id,name\n1,a\n2,b\n3,c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := invoke(t, nil, "", "commit", "--table", scratch, "--partition", "dt=2026-11-29", csv); code != 0 {
		t.Fatalf("scratch commit: %d %s", code, stderr)
	}
	files, err := filepath.Glob(filepath.Join(scratch, filepath.FromSlash(layout.GenerationsPrefix("dt=2026-11-29")), "*", "*.parquet"))
	if err != nil || len(files) != 1 {
		t.Fatalf("scratch files %v %v", files, err)
	}
	// Table T: that file committed with a rowsum128 checksum.
	table := filepath.Join(dir, "t")
	st, err := filestore.New(table)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := swap.Begin(ctx, st, "dt=2026-11-29", swap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := staging.New(ctx, st, txn.DataPrefix(), staging.Options{LegacyChecksum: true})
	if err := s.AddParquetFile(ctx, files[0]); err != nil {
		t.Fatal(err)
	}
	c, err := s.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	legacy := ""
	for _, e := range c.Equivalent {
		if strings.HasPrefix(e, checksum.RowSum+":") {
			legacy = e
		}
	}
	if legacy == "" {
		t.Fatalf("no rowsum128 checksum among %v", c.Equivalent)
	}
	c.ContentChecksum, c.Equivalent = legacy, nil
	if _, err := txn.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		args := []string{"commit", "--table", table, "--partition", "dt=2026-11-29", "--json", files[0]}
		if dry {
			args = append(args, "--dry-run")
		}
		code, stdout, stderr := invoke(t, nil, "", args...)
		if code != 0 {
			t.Fatalf("dry %v: exit %d %s", dry, code, stderr)
		}
		var doc struct {
			Outcome string `json:"outcome"`
			Changed bool   `json:"changed"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("dry %v: %v\n%s", dry, err, stdout)
		}
		if doc.Outcome != string(swap.Identical) || doc.Changed {
			t.Errorf("dry-run %v onto a rowsum128 generation: %+v, want identical", dry, doc)
		}
	}
}
