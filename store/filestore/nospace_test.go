package filestore

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/swap"
)

// injectNoSpace makes the writes (op "write" or "sync") of the objects
// whose path ends in suffix fail with ENOSPC, and counts them.
func injectNoSpace(t *testing.T, op, suffix string) *int {
	n := new(int)
	testHookIO = func(o, path string) error {
		if o == op && strings.HasSuffix(path, suffix) {
			*n++
			return syscall.ENOSPC
		}
		return nil
	}
	t.Cleanup(func() { testHookIO = nil })
	return n
}

// tempFiles lists the temporary files left under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, tmpSuffix) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestNoSpaceIsPermanent: a full disk is ErrNoSpace, which no retry loop
// retries, and the object is left as it was, with no temporary file.
func TestNoSpaceIsPermanent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "p/obj", []byte("old"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"write", "sync"} {
		injectNoSpace(t, op, "/obj")
		_, err := s.Put(ctx, "p/obj", []byte("new"), store.PutOptions{})
		if !errors.Is(err, ErrNoSpace) || !errors.Is(err, errkind.ErrPermanent) || store.IsRetryable(err) || errors.Is(err, store.ErrTransient) {
			t.Fatalf("%s: %v (retryable %v), want ErrNoSpace, permanent", op, err, store.IsRetryable(err))
		}
		if !strings.Contains(err.Error(), "no space left on the local disk") {
			t.Errorf("%s: %q does not say the disk is full", op, err)
		}
		testHookIO = nil
		if got, _, _ := store.ReadAll(ctx, s, "p/obj"); string(got) != "old" {
			t.Errorf("%s: the object holds %q", op, got)
		}
		if left := tempFiles(t, dir); len(left) > 0 {
			t.Errorf("%s: temporary files left: %v", op, left)
		}
	}
}

// TestNoSpaceOnThePointerIsNotUnknown: a commit whose pointer write finds
// the disk full fails at once with ErrNoSpace: it is not retried, not an
// unknown outcome, and the partition still shows its previous generation
// (issue 40 item 5: it was retried 5 times, then "outcome unknown").
func TestNoSpaceOnThePointerIsNotUnknown(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	part := "dt=2026-11-29"
	commit := func(body string) (swap.Result, error) {
		txn, err := swap.Begin(ctx, s, part, swap.Options{MaxAttempts: 5})
		if err != nil {
			return swap.Result{}, err
		}
		if _, err := s.Put(ctx, txn.DataPrefix()+"part-0.parquet", []byte(body), store.PutOptions{IfNoneMatch: true}); err != nil {
			return swap.Result{}, err
		}
		sum := sha256.Sum256([]byte(body))
		var c manifest.Content
		c.Add(manifest.File{Path: "part-0.parquet", Size: int64(len(body)), Rows: 1, Checksum: manifest.SHA256Checksum(sum[:])})
		c.ContentChecksum = manifest.SHA256Checksum(sum[:])
		return txn.Commit(ctx, c)
	}
	first, err := commit("one")
	if err != nil {
		t.Fatal(err)
	}
	writes := injectNoSpace(t, "write", "/pointer.json")
	_, err = commit("two")
	if !errors.Is(err, ErrNoSpace) || errors.Is(err, swap.ErrOutcomeUnknown) {
		t.Fatalf("commit on a full disk: %v, want ErrNoSpace and no unknown outcome", err)
	}
	if *writes != 1 {
		t.Errorf("the pointer's write was tried %d times, want 1 (a full disk is not retried)", *writes)
	}
	testHookIO = nil
	b, err := swap.ReadPointer(ctx, s, part)
	if err != nil || b.Pointer.Generation != first.Generation {
		t.Fatalf("after the failed commit the pointer is %+v (%v), want generation %s", b.Pointer, err, first.Generation)
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestNoSpaceOnATinyDisk: the same with a real ENOSPC, on a 64 KiB tmpfs
// (needs the right to mount one: root, or skipped).
func TestNoSpaceOnATinyDisk(t *testing.T) {
	dir := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).Run(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	ctx := context.Background()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "p/small", []byte("fits"), store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(ctx, "p/big", make([]byte, 1<<20), store.PutOptions{IfNoneMatch: true})
	if !errors.Is(err, ErrNoSpace) || store.IsRetryable(err) {
		t.Fatalf("1 MiB on a 64 KiB disk: %v, want ErrNoSpace, not retryable", err)
	}
	if _, err := s.Stat(ctx, "p/big"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the object that did not fit: %v, want not found", err)
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "p", "small")); err != nil {
		t.Error(err)
	}
}
