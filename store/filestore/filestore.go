package filestore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/store"
)

const (
	tmpSuffix  = ".pswap-tmp"
	lockSuffix = ".pswap-lock"
)

// Store is a store.Store on a local directory. It is safe for concurrent use
// by many goroutines and many processes.
type Store struct {
	root string // absolute, cleaned
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.Clock           = (*Store)(nil)
	_ store.BatchDeleter    = (*Store)(nil)
	_ store.UploadLister    = (*Store)(nil)
	_ store.FolderPruner    = (*Store)(nil)
	_ store.RangeReader     = (*Store)(nil)
	_ store.Copier          = (*Store)(nil)
	_ store.DelimiterLister = (*Store)(nil)
)

// New returns a store rooted at dir. The directory is created on the first
// write if it does not exist; reads of a missing root find nothing.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("filestore: empty root directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: root %q: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("filestore: root %s is not a directory", abs)
	}
	return &Store{root: realPath(filepath.Clean(abs))}, nil
}

// realPath resolves the symbolic links of an absolute path, of its longest
// existing leading part if the rest is still to be created: one table
// reached by two spellings (a symlink, a bind of its parent) has one root,
// and the locations its Iceberg metadata records stay inside it.
func realPath(abs string) string {
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		if filepath.Dir(p) == p {
			return abs
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// Root returns the absolute root directory.
func (s *Store) Root() string { return s.root }

func (s *Store) path(key string) (string, error) {
	if err := store.ValidateKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// URI implements store.Store.
func (s *Store) URI(key string) string {
	return URLOfPath(filepath.Join(s.root, filepath.FromSlash(key)))
}

// Close implements store.Store.
func (s *Store) Close() error { return nil }

// Now implements store.Clock: a local directory's timestamps come from this
// machine's clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) { return time.Now().UTC(), ctx.Err() }

// ErrNoSpace: the local disk (or the user's quota on it) is full: ENOSPC or
// EDQUOT from a write, an fsync, a link or a rename. It is neither
// transient nor an unknown outcome: the write did not happen (every object
// is written to a temporary file first, which is removed), retrying it
// before space is freed fails the same way, and the caller stops at once.
var ErrNoSpace = errkind.New("no space left on the local disk", errkind.ErrPermanent)

// testHookIO, when set (only by tests), runs before each write(2) and
// fsync(2) of an object's temporary file, with the object's final path:
// an error it returns stands for the system call's (an injected ENOSPC).
var testHookIO func(op, path string) error

func mapErr(op, uri string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: %w", op, uri, store.ErrNotFound)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s %s: %w: %v", op, uri, store.ErrAccessDenied, err)
	case isNotDir(err):
		return fmt.Errorf("%s %s: %w", op, uri, store.ErrNotFound)
	case isNoSpace(err):
		return fmt.Errorf("%s %s: %w (%v)", op, uri, ErrNoSpace, err)
	}
	return fmt.Errorf("%s %s: %w", op, uri, err)
}

// etag is a content hash: the file's version token never depends on mtime.
func etagOf(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)[:16]) }

func hashFile(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return "", err
	}
	return etagOf(h), nil
}

func attrsOf(key string, fi os.FileInfo, etag string) store.Attrs {
	return store.Attrs{Key: key, Size: fi.Size(), ETag: etag, ModTime: fi.ModTime().UTC()}
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	if err := ctx.Err(); err != nil {
		return nil, store.Attrs{}, err
	}
	p, err := s.path(key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, store.Attrs{}, mapErr("get", s.URI(key), err)
	}
	a, err := statFile(key, f)
	if err != nil {
		f.Close()
		return nil, store.Attrs{}, mapErr("get", s.URI(key), err)
	}
	return f, a, nil
}

// GetRange implements store.RangeReader by reading the file in place. The
// ETag costs a read of the whole file (it is a content hash), from the same
// open file as the range, so both describe one version.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	rc, a, err := s.Get(ctx, key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	if off < 0 || (off >= a.Size && a.Size > 0) {
		rc.Close()
		return nil, store.Attrs{}, fmt.Errorf("get %s range at %d of %d bytes: %w", s.URI(key), off, a.Size, store.ErrInvalidRange)
	}
	if n < 0 || off+n > a.Size {
		n = a.Size - off
	}
	f := rc.(*os.File)
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, off, n), f}, a, nil
}

// Copy implements store.Copier: the source is read from one open file (so
// a replace during the copy cannot mix versions) into a temporary file that
// becomes dst as NewWriter's would.
func (s *Store) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (store.Attrs, error) {
	if _, err := s.path(dst); err != nil {
		return store.Attrs{}, err
	}
	rc, a, err := s.Get(ctx, src)
	if err != nil {
		return store.Attrs{}, fmt.Errorf("copy: %w", err)
	}
	defer rc.Close()
	if opts.SourceIfMatch != "" && a.ETag != opts.SourceIfMatch {
		return store.Attrs{}, fmt.Errorf("copy %s: source changed: %w", s.URI(src), store.ErrPrecondition)
	}
	w, err := s.NewWriter(ctx, dst, store.WriterOptions{PutOptions: store.PutOptions{IfNoneMatch: opts.IfNoneMatch}})
	if err != nil {
		return store.Attrs{}, err
	}
	if _, err := io.Copy(w, io.NewSectionReader(rc.(*os.File), 0, a.Size)); err != nil {
		w.Abort()
		return store.Attrs{}, fmt.Errorf("copy %s: %w", s.URI(src), err)
	}
	return w.Commit()
}

func statFile(key string, f *os.File) (store.Attrs, error) {
	fi, err := f.Stat()
	if err != nil {
		return store.Attrs{}, err
	}
	if fi.IsDir() {
		return store.Attrs{}, fs.ErrNotExist
	}
	etag, err := hashFile(f)
	if err != nil {
		return store.Attrs{}, err
	}
	return attrsOf(key, fi, etag), nil
}

// Stat implements store.Store. The ETag costs a read of the file.
func (s *Store) Stat(ctx context.Context, key string) (store.Attrs, error) {
	if err := ctx.Err(); err != nil {
		return store.Attrs{}, err
	}
	p, err := s.path(key)
	if err != nil {
		return store.Attrs{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		return store.Attrs{}, mapErr("stat", s.URI(key), err)
	}
	defer f.Close()
	a, err := statFile(key, f)
	return a, mapErr("stat", s.URI(key), err)
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	w, err := s.NewWriter(ctx, key, store.WriterOptions{PutOptions: opts})
	if err != nil {
		return store.Attrs{}, err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return store.Attrs{}, err
	}
	return w.Commit()
}

// NewWriter implements store.Store: the object is written to a temporary file
// beside its final name and becomes visible on Commit by link(2) (create if
// absent) or rename(2) (replace), after an fsync.
func (s *Store) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := createTemp(p)
	if err != nil {
		return nil, mapErr("write", s.URI(key), err)
	}
	return &writer{ctx: ctx, s: s, key: key, path: p, f: f, h: sha256.New(), opts: opts.PutOptions}, nil
}

func createTemp(p string) (*os.File, error) {
	dir, base := filepath.Split(p)
	var lastErr error
	// A concurrent Delete may remove an empty parent directory between
	// MkdirAll and the create: retry.
	for range 5 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		var rnd [8]byte
		rand.Read(rnd[:])
		name := filepath.Join(dir, "."+base+"."+hex.EncodeToString(rnd[:])+tmpSuffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, nil
		}
		lastErr = err
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	return nil, lastErr
}

type writer struct {
	ctx  context.Context
	s    *Store
	key  string
	path string
	f    *os.File
	h    hash.Hash
	n    int64
	opts store.PutOptions
	done bool
	err  error
}

func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("write %s: writer already finished", w.s.URI(w.key))
	}
	if w.err != nil {
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		w.err = err
		return 0, err
	}
	var n int
	var err error
	if h := testHookIO; h != nil {
		if herr := h("write", w.path); herr != nil {
			err = &fs.PathError{Op: "write", Path: w.f.Name(), Err: herr}
		}
	}
	if err == nil {
		n, err = w.f.Write(p)
	}
	w.h.Write(p[:n])
	w.n += int64(n)
	if err != nil {
		w.err = mapErr("write", w.s.URI(w.key), err)
		return n, w.err
	}
	return n, nil
}

func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	name := w.f.Name()
	w.f.Close()
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// An interrupted write leaves no empty folder behind (createTemp
	// retries when this races a write into the same folder).
	w.s.pruneDirs(filepath.Dir(name))
	return nil
}

func (w *writer) Commit() (store.Attrs, error) {
	if w.done {
		return store.Attrs{}, fmt.Errorf("commit %s: writer already finished", w.s.URI(w.key))
	}
	if w.err != nil {
		w.Abort()
		return store.Attrs{}, w.err
	}
	if err := w.ctx.Err(); err != nil {
		w.Abort()
		return store.Attrs{}, err
	}
	tmp := w.f.Name()
	if err := syncFile(w.f, w.path); err != nil {
		w.Abort()
		return store.Attrs{}, mapErr("sync", w.s.URI(w.key), err)
	}
	fi, err := w.f.Stat()
	if err != nil {
		w.Abort()
		return store.Attrs{}, mapErr("stat", w.s.URI(w.key), err)
	}
	if err := w.f.Close(); err != nil {
		w.Abort()
		return store.Attrs{}, mapErr("close", w.s.URI(w.key), err)
	}
	w.done = true
	defer os.Remove(tmp) // after link the temp name is redundant; after rename it is gone
	etag := etagOf(w.h)
	uri := w.s.URI(w.key)
	switch {
	case w.opts.IfNoneMatch:
		// link(2) fails if the name exists: an atomic create-if-absent.
		if err := os.Link(tmp, w.path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return store.Attrs{}, fmt.Errorf("put %s: object exists: %w", uri, store.ErrPrecondition)
			}
			return store.Attrs{}, mapErr("link", uri, err)
		}
	default:
		unlock, err := lock(w.path, true)
		if err != nil {
			return store.Attrs{}, mapErr("lock", uri, err)
		}
		defer unlock(false)
		if w.opts.IfMatch != "" {
			cur, err := os.Open(w.path)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return store.Attrs{}, fmt.Errorf("put %s if-match: %w: %w", uri, store.ErrPrecondition, store.ErrNotFound)
				}
				return store.Attrs{}, mapErr("open", uri, err)
			}
			curTag, err := hashFile(cur)
			cur.Close()
			if err != nil {
				return store.Attrs{}, mapErr("read", uri, err)
			}
			if curTag != w.opts.IfMatch {
				return store.Attrs{}, fmt.Errorf("put %s: version changed: %w", uri, store.ErrPrecondition)
			}
		}
		if err := replaceFile(tmp, w.path); err != nil {
			return store.Attrs{}, mapErr("rename", uri, err)
		}
	}
	syncDir(filepath.Dir(w.path))
	return store.Attrs{Key: w.key, Size: w.n, ETag: etag, ModTime: fi.ModTime().UTC()}, nil
}

// lock takes an exclusive lock (flock(2); LockFileEx on Windows) on the
// key's lock file, which lives beside it. With create=false and no lock
// file, nobody has ever replaced the key, and no lock is needed. The
// returned release func removes the lock file when remove is true (Delete):
// on Unix first, and lockers that raced on the unlinked file notice that the
// name now points elsewhere and retry, so two holders can never run at once;
// on Windows last (see removeLockedFirst).
func lock(p string, create bool) (release func(remove bool), err error) {
	dir, base := filepath.Split(p)
	name := filepath.Join(dir, "."+base+lockSuffix)
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	for {
		f, err := os.OpenFile(name, flag, 0o644)
		if err != nil {
			if !create && errors.Is(err, fs.ErrNotExist) {
				return func(bool) {}, nil
			}
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, err
		}
		// Is the name still this file? A Delete may have removed it while we waited.
		held, err := f.Stat()
		var now os.FileInfo
		if err == nil {
			now, err = os.Stat(name)
		}
		if err != nil || !os.SameFile(held, now) {
			unlockFile(f)
			f.Close()
			if !create {
				return func(bool) {}, nil
			}
			continue
		}
		return func(remove bool) {
			if remove && removeLockedFirst {
				os.Remove(name)
			}
			unlockFile(f)
			f.Close()
			if remove && !removeLockedFirst {
				os.Remove(name) // fails while another locker has it open: it stays theirs
			}
		}, nil
	}
}

// syncFile is fsync(2) of an object's temporary file (path: the object's).
func syncFile(f *os.File, path string) error {
	if h := testHookIO; h != nil {
		if err := h("sync", path); err != nil {
			return &fs.PathError{Op: "sync", Path: f.Name(), Err: err}
		}
	}
	return f.Sync()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Delete implements store.Store. Empty parent directories are removed up to
// the root, so collected generations leave no empty folders behind.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := s.path(key)
	if err != nil {
		return err
	}
	unlock, err := lock(p, false)
	if err != nil {
		return mapErr("lock", s.URI(key), err)
	}
	err = removeFile(p)
	unlock(true)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if isNotDir(err) {
			return nil
		}
		return mapErr("delete", s.URI(key), err)
	}
	s.pruneDirs(filepath.Dir(p))
	return nil
}

func (s *Store) pruneDirs(dir string) {
	for dir != s.root && strings.HasPrefix(dir, s.root+string(filepath.Separator)) {
		if err := os.Remove(dir); err != nil { // fails while not empty
			return
		}
		dir = filepath.Dir(dir)
	}
}

// DeleteMany implements store.BatchDeleter.
func (s *Store) DeleteMany(ctx context.Context, keys []string) error {
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// List implements store.Store. ETags are left empty (they would cost a read
// of every file); use Stat for one.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	return func(yield func(store.Attrs, error) bool) {
		listSorted(ctx, s, prefix, yield, func(a store.Attrs) string { return a.Key }, func() (out []store.Attrs, err error) {
			err = s.walkFiles(ctx, prefix, func(key string, d fs.DirEntry) error {
				if hidden(key, d.Name(), prefix) {
					return nil
				}
				fi, err := fileInfo(d)
				if fi != nil {
					out = append(out, attrsOf(key, fi, ""))
				}
				return err
			})
			return out, err
		})
	}
}

// ListDelimited implements store.DelimiterLister. A directory whose path
// already contains the delimiter after prefix is one common prefix: it is
// not walked beyond its first visible file.
func (s *Store) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	return func(yield func(store.ListEntry, error) bool) {
		if delimiter == "" {
			for a, err := range s.List(ctx, prefix) {
				if !yield(store.ListEntry{Attrs: a}, err) || err != nil {
					return
				}
			}
			return
		}
		listSorted(ctx, s, prefix, yield, func(e store.ListEntry) string { return e.Key }, func() (out []store.ListEntry, err error) {
			seen := map[string]bool{}
			addPrefix := func(cp string) {
				if !seen[cp] {
					seen[cp] = true
					out = append(out, store.ListEntry{Attrs: store.Attrs{Key: cp}, IsPrefix: true})
				}
			}
			err = s.walk(ctx, prefix, func(key string, p string, d fs.DirEntry) error {
				if d.IsDir() {
					cp, ok := store.CommonPrefix(key+"/", prefix, delimiter)
					if !ok {
						return nil
					}
					if !seen[cp] {
						visible, err := hasVisibleFile(ctx, p)
						if err != nil {
							return err
						}
						if visible {
							addPrefix(cp)
						}
					}
					return filepath.SkipDir
				}
				if hidden(key, d.Name(), prefix) {
					return nil
				}
				if cp, ok := store.CommonPrefix(key, prefix, delimiter); ok {
					addPrefix(cp)
					return nil
				}
				fi, err := fileInfo(d)
				if fi != nil {
					out = append(out, store.ListEntry{Attrs: attrsOf(key, fi, "")})
				}
				return err
			})
			return out, err
		})
	}
}

// hidden reports whether a walked file is one that listings do not show: a
// temporary or lock file, or a key outside prefix.
func hidden(key, name, prefix string) bool {
	return strings.HasSuffix(name, tmpSuffix) || strings.HasSuffix(name, lockSuffix) || !strings.HasPrefix(key, prefix)
}

// listSorted is the frame of both listings: it checks ctx and prefix, runs
// walk, and yields what it found sorted by key, or the walk's error.
func listSorted[T any](ctx context.Context, s *Store, prefix string, yield func(T, error) bool, key func(T) string, walk func() ([]T, error)) {
	var zero T
	if err := ctx.Err(); err != nil {
		yield(zero, err)
		return
	}
	if err := store.ValidatePrefix(prefix); err != nil {
		yield(zero, err)
		return
	}
	out, err := walk()
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		yield(zero, mapErr("list", s.URI(prefix), err))
		return
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	for _, e := range out {
		if !yield(e, nil) {
			return
		}
	}
}

// errFound stops a walk at the first visible file.
var errFound = errors.New("found")

// hasVisibleFile reports whether the directory dir holds, at any depth, a
// regular file that List would show (not a temporary or lock file).
func hasVisibleFile(ctx context.Context, dir string) (bool, error) {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if d.Type().IsRegular() && !strings.HasSuffix(name, tmpSuffix) && !strings.HasSuffix(name, lockSuffix) {
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// walkFiles calls fn with the slash-separated path (relative to the root) of
// every regular file in the directories that can hold keys starting with
// prefix: it walks only the deepest directory the prefix names and skips
// subdirectories that cannot match. A root or folder that vanishes during
// the walk is not an error; a cancelled ctx stops it.
func (s *Store) walkFiles(ctx context.Context, prefix string, fn func(rel string, d fs.DirEntry) error) error {
	return s.walk(ctx, prefix, func(rel, _ string, d fs.DirEntry) error {
		if d.IsDir() {
			return nil
		}
		return fn(rel, d)
	})
}

// walk is walkFiles that also calls fn, with its key path and its file
// path, for every directory that can hold keys starting with prefix (fn may
// return filepath.SkipDir for it), and that passes regular files only.
func (s *Store) walk(ctx context.Context, prefix string, fn func(rel, path string, d fs.DirEntry) error) error {
	start := s.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		start = filepath.Join(s.root, filepath.FromSlash(prefix[:i]))
	}
	return filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil || rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if !strings.HasPrefix(rel+"/", prefix) && !strings.HasPrefix(prefix, rel+"/") {
				return filepath.SkipDir
			}
			if strings.HasPrefix(prefix, rel+"/") {
				return nil // above the prefix: nothing of it is listed
			}
			return fn(rel, p, d)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return fn(rel, p, d)
	})
}

// fileInfo is d.Info, with nil info and no error for a file removed since
// it was listed.
func fileInfo(d fs.DirEntry) (fs.FileInfo, error) {
	fi, err := d.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return fi, err
}

// tmpTarget returns the key a temporary file of dir (relative to the root,
// slash-separated, "" for the root) was going to become: the temporary file
// of NAME is ".NAME.<16 hex digits>.pswap-tmp".
func tmpTarget(dir, name string) (string, bool) {
	rest, ok := strings.CutSuffix(name, tmpSuffix)
	if !ok || !strings.HasPrefix(rest, ".") {
		return "", false
	}
	i := strings.LastIndex(rest, ".")
	if i <= 0 || len(rest)-i-1 != 16 {
		return "", false
	}
	if _, err := hex.DecodeString(rest[i+1:]); err != nil {
		return "", false
	}
	key := rest[1:i]
	if dir != "" {
		key = dir + "/" + key
	}
	return key, store.ValidateKey(key) == nil
}

// ListUploads implements store.UploadLister: the temporary files of writes
// that never finished, because their writer died before Commit or Abort.
// List hides them; garbage collection finds them here and aborts those
// older than its orphan age, as it does S3's abandoned multipart uploads.
// Key is the key the write was going to create, ID the temporary file
// (relative to the root), Initiated its modification time.
func (s *Store) ListUploads(ctx context.Context, prefix string) iter.Seq2[store.Upload, error] {
	return func(yield func(store.Upload, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.Upload{}, err)
			return
		}
		var out []store.Upload
		err := s.walkFiles(ctx, prefix, func(rel string, d fs.DirEntry) error {
			dir := ""
			if i := strings.LastIndex(rel, "/"); i >= 0 {
				dir = rel[:i]
			}
			key, ok := tmpTarget(dir, d.Name())
			if !ok || !strings.HasPrefix(key, prefix) {
				return nil
			}
			fi, err := fileInfo(d) // nil: finished meanwhile
			if fi != nil {
				out = append(out, store.Upload{Key: key, ID: rel, Initiated: fi.ModTime().UTC(), Size: fi.Size(), TempFile: true})
			}
			return err
		})
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				err = ctxErr
			}
			yield(store.Upload{}, mapErr("list uploads", s.URI(prefix), err))
			return
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		for _, u := range out {
			if !yield(u, nil) {
				return
			}
		}
	}
}

// PruneEmptyFolders implements store.FolderPruner: the empty folders
// directly under prefix whose modification time is before olderThan (a
// write that made its folder since cannot be about to create its file in
// it: createTemp retries after a concurrent removal anyway).
func (s *Store) PruneEmptyFolders(ctx context.Context, prefix string, olderThan time.Time, dryRun bool) ([]string, error) {
	if err := store.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("filestore: prune %q: %w: not a folder prefix", prefix, store.ErrInvalidKey)
	}
	dir := filepath.Join(s.root, filepath.FromSlash(prefix))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr("list folders", s.URI(prefix), err)
	}
	var out []string
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p)
		if err != nil || !fi.ModTime().Before(olderThan) {
			continue
		}
		if inside, err := os.ReadDir(p); err != nil || len(inside) > 0 {
			continue
		}
		if !dryRun {
			if err := os.Remove(p); err != nil { // not empty any more, or gone
				continue
			}
		}
		out = append(out, prefix+e.Name()+"/")
	}
	return out, nil
}

// AbortUpload implements store.UploadLister: it removes the temporary file
// of an unfinished write (and the folders it leaves empty). It removes
// nothing but a temporary file of u.Key; one already gone is not an error.
func (s *Store) AbortUpload(ctx context.Context, u store.Upload) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, name := "", u.ID
	if i := strings.LastIndex(u.ID, "/"); i >= 0 {
		dir, name = u.ID[:i], u.ID[i+1:]
	}
	if key, ok := tmpTarget(dir, name); !ok || key != u.Key {
		return fmt.Errorf("filestore: abort %q: not a temporary file of %q: %w", u.ID, u.Key, store.ErrInvalidKey)
	}
	p := filepath.Join(s.root, filepath.FromSlash(u.ID))
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return mapErr("abort upload", s.URI(u.Key), err)
	}
	s.pruneDirs(filepath.Dir(p))
	return nil
}

// Outer returns a store rooted at the file system's root and s's root in
// it (without leading slash): pswap looks there for a table that would
// enclose a new one (pswap.OuterStore).
func (s *Store) Outer() (store.Store, string) {
	vol := filepath.VolumeName(s.root)
	top := vol + string(filepath.Separator)
	return &Store{root: top}, strings.Trim(filepath.ToSlash(strings.TrimPrefix(s.root, vol)), "/")
}
