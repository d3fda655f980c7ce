package pswap_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pswap/pswap"
)

// TestVerifyAcceptsWhatCommitAccepts: every file of staging's corpus of
// engine-written Parquet (nested columns, every codec, legacy encodings)
// that a commit accepts must also pass verify. Verify reads footers with
// the same reader as the commit, so a valid file is never reported as a
// mismatch (exit 4) after it was committed.
func TestVerifyAcceptsWhatCommitAccepts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("staging", "testdata", "corpus", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join("staging", "testdata", "parquet-testing", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	if len(files) < 20 {
		t.Fatalf("corpus has %d files; want the staging corpus", len(files))
	}
	checked := 0
	for i, f := range files {
		// One table per file: the files of the corpus have different schemas.
		name := strings.TrimSuffix(filepath.Base(f), ".parquet")
		tbl, err := pswap.Open(ctx, fmt.Sprintf("mem://verify-corpus-%d", i), pswap.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := tbl.Partition("dt=2026-11-29")
		if err != nil {
			t.Fatal(err)
		}
		w, err := p.Begin(ctx, pswap.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddPath(ctx, f, pswap.FormatParquet); err != nil {
			w.Abort(ctx)
			t.Logf("%s: not committed (%v)", name, err)
			continue
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Logf("%s: not committed (%v)", name, err)
			continue
		}
		rep, err := p.Verify(ctx)
		if err != nil {
			t.Errorf("file %d %s: committed, then verify: %v (%+v)", i, name, err, rep)
			continue
		}
		if !rep.OK || rep.Files != 1 {
			t.Errorf("%s: verify report %+v", name, rep)
		}
		checked++
	}
	if checked < len(files)*3/4 {
		t.Errorf("only %d of %d corpus files committed and verified", checked, len(files))
	}
	t.Logf("%d of %d corpus files committed and verified", checked, len(files))
}
