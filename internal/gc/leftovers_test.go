package gc_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
)

// What interrupted local writes leave (issue 40, item 7): the temporary
// file of a write that never finished is named as such, with its real
// size, not as a multipart upload of 0 bytes; and an empty generation
// folder, which no listing shows, is removed once old (not in a dry run).
// A young empty folder and the folders of committed generations stay.
func TestLocalLeftovers(t *testing.T) {
	dir := t.TempDir()
	fs, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := newWarp(fs)
	mustCommit(t, st, part, "v0")

	// A write killed after 1,000 bytes: its temporary file stays.
	tmpKey := layout.DataPrefix(part, manifest.NewGenerationID()) + "part-00000.parquet"
	w, err := fs.NewWriter(ctx, tmpKey, store.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	// (w is never committed nor aborted: the process died.)

	// An interrupted write whose file went, and its folder stayed.
	emptyGen := manifest.NewGenerationID()
	emptyDir := filepath.Join(dir, filepath.FromSlash(layout.DataPrefix(part, emptyGen)))
	if err := os.MkdirAll(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	st.advance(gc.DefaultOrphanAge + gc.DefaultCommitWindow + time.Minute)
	// One made just now: a writer may be about to create its file there.
	youngDir := filepath.Join(dir, filepath.FromSlash(layout.DataPrefix(part, manifest.NewGenerationID())))
	if err := os.MkdirAll(youngDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(youngDir, time.Now().Add(gc.DefaultOrphanAge+gc.DefaultCommitWindow+time.Minute), time.Now().Add(gc.DefaultOrphanAge+gc.DefaultCommitWindow+time.Minute)); err != nil {
		t.Fatal(err)
	}

	r := mustGC(t, st, part, gc.Options{DryRun: true})
	if r.Uploads != 1 || r.UploadBytes != 1000 || r.UploadKind != gc.UploadTempFile || !slices.Equal(r.UploadKeys, []string{tmpKey}) {
		t.Fatalf("dry run: %d uploads of %d bytes, kind %q, keys %v: want the temporary file of 1000 bytes", r.Uploads, r.UploadBytes, r.UploadKind, r.UploadKeys)
	}
	if want := []string{layout.DataPrefix(part, emptyGen)}; !slices.Equal(r.EmptyFolders, want) {
		t.Fatalf("dry run: empty folders %v, want %v", r.EmptyFolders, want)
	}
	if _, err := os.Stat(emptyDir); err != nil {
		t.Fatalf("a dry run removed the empty folder: %v", err)
	}
	r = mustGC(t, st, part, gc.Options{})
	if r.Uploads != 1 || len(r.EmptyFolders) != 1 {
		t.Fatalf("report %+v", r)
	}
	if _, err := os.Stat(emptyDir); !os.IsNotExist(err) {
		t.Fatalf("the old empty folder is still there: %v", err)
	}
	if _, err := os.Stat(youngDir); err != nil {
		t.Fatalf("the young empty folder was removed: %v", err)
	}
	if cur := checkCurrent(t, st, part); cur == nil {
		t.Fatal("no current generation")
	}
}

// An aborted local write (Ctrl-C) leaves no empty folder behind.
func TestAbortedLocalWriteLeavesNoFolder(t *testing.T) {
	dir := t.TempDir()
	fs, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := layout.DataPrefix(part, manifest.NewGenerationID()) + "part-00000.parquet"
	w, err := fs.NewWriter(ctx, key, store.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, part)); !os.IsNotExist(err) {
		t.Fatalf("the aborted write left %s: %v", part, err)
	}
}
