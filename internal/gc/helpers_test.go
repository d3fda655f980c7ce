package gc_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pswap/pswap/internal/layout"

	"github.com/pswap/pswap/internal/gc"
	"github.com/pswap/pswap/internal/testing/swaptest"
	"github.com/pswap/pswap/internal/testing/testenv"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/swap"
)

var ctx = context.Background()

// warp wraps a store so that its clock can be moved forward: writers and GC
// see the store's own clock plus an offset, while the store keeps stamping
// objects with its real time. Advancing the offset ages everything on any
// backend (memory, file, MinIO) without waiting.
type warp struct {
	store.Store
	off atomic.Int64
}

var (
	_ store.Clock        = (*warp)(nil)
	_ store.BatchDeleter = (*warp)(nil)
	_ store.UploadLister = (*warp)(nil)
)

func newWarp(st store.Store) *warp { return &warp{Store: st} }

func (w *warp) advance(d time.Duration) { w.off.Add(int64(d)) }

func (w *warp) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if c, ok := w.Store.(store.Clock); ok {
		t, err := c.Now(ctx)
		if err != nil {
			return t, err
		}
		now = t
	} else {
		now = time.Now()
	}
	return now.Add(time.Duration(w.off.Load())).UTC(), nil
}

func (w *warp) DeleteMany(ctx context.Context, keys []string) error {
	return store.DeleteAll(ctx, w.Store, keys)
}

func (w *warp) ListUploads(ctx context.Context, prefix string) iter.Seq2[store.Upload, error] {
	if ul, ok := w.Store.(store.UploadLister); ok {
		return ul.ListUploads(ctx, prefix)
	}
	return func(func(store.Upload, error) bool) {}
}

func (w *warp) PruneEmptyFolders(ctx context.Context, prefix string, olderThan time.Time, dryRun bool) ([]string, error) {
	if fp, ok := w.Store.(store.FolderPruner); ok {
		return fp.PruneEmptyFolders(ctx, prefix, olderThan, dryRun)
	}
	return nil, nil
}

func (w *warp) AbortUpload(ctx context.Context, u store.Upload) error {
	if ul, ok := w.Store.(store.UploadLister); ok {
		return ul.AbortUpload(ctx, u)
	}
	return nil
}

// backends runs f on every store: memory, file, and S3 on MinIO when
// available, each wrapped in a warp.
func backends(t *testing.T, f func(t *testing.T, newStore func(t *testing.T) *warp)) {
	t.Run("mem", func(t *testing.T) {
		t.Parallel()
		f(t, func(t *testing.T) *warp { return newWarp(memstore.New()) })
	})
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		f(t, func(t *testing.T) *warp {
			s, err := filestore.New(filepath.Join(t.TempDir(), "table"))
			if err != nil {
				t.Fatal(err)
			}
			return newWarp(s)
		})
	})
	t.Run("s3", func(t *testing.T) {
		if !testenv.S3Enabled() {
			t.Skip("S3 tests need MinIO: run scripts/test.sh")
		}
		t.Parallel()
		f(t, func(t *testing.T) *warp { return newWarp(testenv.S3(t)) })
	})
}

// stage writes n small files under a data prefix (see swaptest.Stage).
func stage(t testing.TB, st store.Store, prefix string, n int, seed string) manifest.Content {
	t.Helper()
	return swaptest.Stage(t, st, prefix, n, seed)
}

// commit runs a whole attempt: begin, stage two files, commit.
func commit(t testing.TB, st store.Store, part, seed string, opts swap.Options) (swap.Result, error) {
	t.Helper()
	txn, err := swap.Begin(ctx, st, part, opts)
	if err != nil {
		return swap.Result{}, err
	}
	return txn.Commit(ctx, stage(t, st, txn.DataPrefix(), 2, seed))
}

func mustCommit(t testing.TB, st store.Store, part, seed string) swap.Result {
	t.Helper()
	r, err := commit(t, st, part, seed, swap.Options{})
	if err != nil {
		t.Fatalf("commit %s %s: %v", part, seed, err)
	}
	return r
}

// commitN commits n generations and returns their ids, oldest first.
func commitN(t testing.TB, st store.Store, part string, n int) []string {
	t.Helper()
	var gens []string
	for i := range n {
		gens = append(gens, mustCommit(t, st, part, fmt.Sprintf("%s-v%d", part, i)).Generation)
	}
	return gens
}

// checkCurrent verifies I1/I2: the pointer resolves to one manifest whose
// files all exist with their size and checksum.
func checkCurrent(t testing.TB, st store.Store, part string) *swap.Snapshot {
	t.Helper()
	snap, err := swap.Resolve(ctx, st, part)
	if err != nil {
		t.Fatalf("resolve %s: %v", part, err)
	}
	checkFiles(t, st, snap.Files)
	return snap
}

func checkFiles(t testing.TB, st store.Store, files []swap.FileRef) {
	t.Helper()
	for _, f := range files {
		b, a, err := store.ReadAll(ctx, st, f.Key)
		if err != nil {
			t.Fatalf("file %s: %v", f.Key, err)
		}
		sum := sha256.Sum256(b)
		if a.Size != f.Size || manifest.SHA256Checksum(sum[:]) != f.Checksum {
			t.Fatalf("file %s: size %d, manifest says %d", f.Key, a.Size, f.Size)
		}
	}
}

// listing is a full listing of the store: key -> size and timestamp.
type listing map[string]string

func list(t testing.TB, st store.Store, prefix string) listing {
	t.Helper()
	out := listing{}
	for a, err := range st.List(ctx, prefix) {
		if err != nil {
			t.Fatal(err)
		}
		out[a.Key] = fmt.Sprintf("%d %s %s", a.Size, a.ETag, a.ModTime.Format(time.RFC3339Nano))
	}
	return out
}

func (l listing) keys() []string {
	var ks []string
	for k := range l {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// exists reports whether key is in the store.
func exists(t testing.TB, st store.Store, key string) bool {
	t.Helper()
	_, err := st.Stat(ctx, key)
	return err == nil
}

// dataKeys returns the keys under a generation's data prefix.
func dataKeys(t testing.TB, st store.Store, part, gen string) []string {
	t.Helper()
	return list(t, st, layout.DataPrefix(part, gen)).keys()
}

// genState says what of a generation is left: manifest and data.
func genState(t testing.TB, st store.Store, part, gen string) string {
	t.Helper()
	m := exists(t, st, layout.ManifestKey(part, gen))
	d := len(dataKeys(t, st, part, gen)) > 0
	switch {
	case m && d:
		return "whole"
	case !m && !d:
		return "gone"
	case m:
		return "manifest-only"
	}
	return "data-only"
}

func mustGC(t testing.TB, st store.Store, part string, opts gc.Options) gc.Report {
	t.Helper()
	r, err := gc.Partition(ctx, st, part, opts)
	if err != nil {
		t.Fatalf("gc %s: %v", part, err)
	}
	return r
}
