package store

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/errkind"
)

// Sentinel errors. Every backend maps its own failures to these once, so
// callers branch with errors.Is and never on backend-specific codes. Each
// also matches one of pswap's error kinds (re-exported by package pswap):
// ErrNotFound and ErrBucketNotFound are not-found, ErrInvalidKey is bad input
// (and pswap.ErrInvalidKey), ErrAccessDenied is pswap.ErrAccessDenied.
var (
	// ErrNotFound: the object (or, for S3, the key under If-Match) does not exist.
	ErrNotFound = errkind.New("object not found", errkind.ErrNotFound)
	// ErrPrecondition: a conditional write lost: the object exists (create-if-absent)
	// or its version is no longer the one given (replace-if-match).
	ErrPrecondition = errkind.New("precondition failed", errkind.ErrPermanent)
	// ErrTransient: a failure worth retrying after a backoff: S3 409
	// ConditionalRequestConflict, 5xx, throttling, connection resets. For a
	// write, its outcome is unknown: the object may or may not have been written.
	ErrTransient = errkind.New("transient store failure", errkind.ErrTransient)
	// ErrAccessDenied: the credentials are wrong or lack permission. Not retried.
	ErrAccessDenied = errkind.ErrAccessDenied
	// ErrBucketNotFound: the bucket (or root directory) does not exist. Not retried.
	ErrBucketNotFound = errkind.New("bucket not found", errkind.ErrNotFound)
	// ErrInvalidKey: a key that could escape the store root or is otherwise
	// malformed (empty, absolute, "..", control characters, reserved names).
	ErrInvalidKey = errkind.New("invalid key", errkind.ErrInvalidKey)
	// ErrInvalidRange: a ranged read that starts beyond the end of the object
	// (S3 416 InvalidRange) or has a negative offset.
	ErrInvalidRange = errkind.New("invalid range", errkind.ErrPermanent)
)

// Attrs describes a stored object.
type Attrs struct {
	Key     string    // relative to the store root
	Size    int64     // bytes
	ETag    string    // opaque version token; changes whenever the content is replaced. May be empty in List results.
	ModTime time.Time // the store's own timestamp of the last write (never the caller's clock)
	// ContentMD5 is the MD5 of the object's bytes in lowercase hex, where
	// the store keeps one apart from its version token: GCS's md5Hash
	// (absent for composite objects), Azure's Content-MD5 (set by Put
	// Blob, and by a block upload only when its writer sent one). Empty
	// when the store keeps none, and on S3 and file stores, whose ETag is
	// derived from the bytes already. Two objects with equal sizes and
	// equal ContentMD5 hold the same bytes under any versions.
	ContentMD5 string
}

// PutOptions make a write conditional. The zero value is an unconditional write.
type PutOptions struct {
	// IfNoneMatch makes the write create-if-absent (S3 If-None-Match: *).
	// A write to an existing key fails with ErrPrecondition and leaves it unchanged.
	IfNoneMatch bool
	// IfMatch, when not empty, makes the write replace-if-version-matches
	// (S3 If-Match: etag). A stale version fails with ErrPrecondition; a missing
	// key fails with an error matching both ErrPrecondition and ErrNotFound.
	IfMatch string
	// ContentType is advisory metadata; backends that cannot store it ignore it.
	ContentType string
}

// WriterOptions tune a streaming write. The zero value works.
type WriterOptions struct {
	PutOptions
	// PartSize is the size of one multipart part on S3 (default 8 MiB, minimum 5 MiB).
	PartSize int64
	// Concurrency is the number of parts uploaded at once (default 4).
	// Memory in use is bounded by about (Concurrency+1) * PartSize.
	Concurrency int
}

// Writer streams a large object. Nothing is visible until Commit returns nil;
// Abort (or a failed Commit, or a cancelled context) leaves nothing behind:
// no object and no dangling multipart upload.
type Writer interface {
	io.Writer
	// Commit finishes the write and makes the object visible atomically.
	Commit() (Attrs, error)
	// Abort discards everything written. Safe to call after Commit (no-op).
	Abort() error
}

// Store is a flat key space of immutable-on-write objects with conditional
// writes. Keys are relative, slash-separated, and validated by ValidateKey.
type Store interface {
	// Get opens an object for reading. The caller closes the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, Attrs, error)
	// Stat returns an object's attributes without its content.
	Stat(ctx context.Context, key string) (Attrs, error)
	// Put writes a small object in one request, atomically.
	Put(ctx context.Context, key string, data []byte, opts PutOptions) (Attrs, error)
	// NewWriter starts a streaming write of a large object.
	NewWriter(ctx context.Context, key string, opts WriterOptions) (Writer, error)
	// Delete removes an object unconditionally. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List yields every object whose key starts with prefix, in lexical key order.
	List(ctx context.Context, prefix string) iter.Seq2[Attrs, error]
	// URI returns the absolute location of a key (s3://bucket/root/key, file:///root/key, mem://...).
	URI(key string) string
	// Close releases resources held by the store.
	Close() error
}

// BatchDeleter is implemented by stores that delete many keys per request
// (S3 DeleteObjects, up to 1,000 keys per call).
type BatchDeleter interface {
	DeleteMany(ctx context.Context, keys []string) error
}

// Upload is an unfinished multipart upload, or an unfinished write's
// temporary file (filestore).
type Upload struct {
	Key       string
	ID        string
	Initiated time.Time
	// Size is the bytes written so far when the store knows them (a
	// temporary file's size), else 0 (a multipart upload's parts are not
	// listed with it).
	Size int64
	// TempFile: a temporary file that a write left behind (its writer
	// was killed or interrupted), not a multipart upload.
	TempFile bool
}

// UploadLister is implemented by stores with multipart uploads (S3), so that
// garbage collection can find and abort abandoned ones.
type UploadLister interface {
	ListUploads(ctx context.Context, prefix string) iter.Seq2[Upload, error]
	AbortUpload(ctx context.Context, u Upload) error
}

// FolderPruner is implemented by stores whose folders exist apart from
// their objects (a file system): a write interrupted after it made its
// folder leaves it empty, and no listing shows it. Garbage collection
// removes such folders once they are old.
type FolderPruner interface {
	// PruneEmptyFolders removes the empty folders directly under the
	// folder prefix (ending in "/") last modified before olderThan, and
	// returns their prefixes ("a/b/c/"); with dryRun it removes nothing and
	// returns what it would remove. A prefix that does not exist has none.
	PruneEmptyFolders(ctx context.Context, prefix string, olderThan time.Time, dryRun bool) ([]string, error)
}

// RangeReader is implemented by stores that read part of an object in one
// request (S3 GetObject with a Range header; a file's ReadAt), in the manner
// of io/fs's optional interfaces. Callers use the package function GetRange,
// which falls back to a full Get for stores without it.
type RangeReader interface {
	// GetRange opens the n bytes of key starting at off (n < 0: to the end).
	// A range running past the end is cut at the end; off at or past the
	// end of a non-empty object, or negative, fails with ErrInvalidRange.
	// Attrs describe the whole object: Size is its full size, ETag its
	// version, so that two ranged reads can be checked for one version.
	GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, Attrs, error)
}

// CopyOptions make a server-side copy conditional. The zero value copies
// whatever version of the source is current onto whatever the destination is.
type CopyOptions struct {
	// SourceIfMatch, when not empty, copies only if the source is still at
	// this version (S3 x-amz-copy-source-if-match); otherwise the copy fails
	// with ErrPrecondition and writes nothing.
	SourceIfMatch string
	// IfNoneMatch makes the copy create-if-absent at the destination: an
	// existing destination fails with ErrPrecondition and is left unchanged.
	IfNoneMatch bool
}

// Copier is implemented by stores that copy an object without its bytes
// passing through the client (S3 CopyObject, UploadPartCopy above 5 GiB; a
// local copy for files). The copy is atomic at the destination: nothing is
// visible until it is complete, and a failed copy leaves nothing behind.
type Copier interface {
	Copy(ctx context.Context, dst, src string, opts CopyOptions) (Attrs, error)
}

// Clock reports the store's notion of the current time, e.g. by writing a probe
// object and reading its timestamp. GC uses it so that ages never depend on a
// worker's clock. Stores without it fall back to the local clock.
type Clock interface {
	Now(ctx context.Context) (time.Time, error)
}

// Now is the store's clock in UTC, or the local one for a store without a
// Clock: the one helper every layer uses to judge ages by the store's time.
func Now(ctx context.Context, s Store) (time.Time, error) {
	if c, ok := s.(Clock); ok {
		now, err := c.Now(ctx)
		if err != nil {
			return time.Time{}, fmt.Errorf("read the store's clock: %w", err)
		}
		return now.UTC(), nil
	}
	return time.Now().UTC(), ctx.Err()
}

// ValidateKey rejects keys that could escape the store root or are ambiguous:
// empty keys, absolute paths, empty, "." or ".." segments, backslashes,
// control characters, invalid UTF-8, and names reserved for the file
// backend's temporary and lock files.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > 1024 {
		return fmt.Errorf("%w: key longer than 1024 bytes", ErrInvalidKey)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidKey, key)
	}
	if strings.HasPrefix(key, "/") {
		return fmt.Errorf("%w: %q is absolute", ErrInvalidKey, key)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: %q contains a control character", ErrInvalidKey, key)
		}
		if r == '\\' {
			return fmt.Errorf("%w: %q contains a backslash", ErrInvalidKey, key)
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("%w: %q has an empty path segment", ErrInvalidKey, key)
		case seg == "." || seg == "..":
			return fmt.Errorf("%w: %q has a %q segment", ErrInvalidKey, key, seg)
		case strings.HasSuffix(seg, reservedTmpSuffix) || strings.HasSuffix(seg, reservedLockSuffix):
			return fmt.Errorf("%w: %q uses a reserved name", ErrInvalidKey, key)
		}
	}
	return nil
}

// ValidatePrefix is ValidateKey for list prefixes: the empty prefix (everything)
// is allowed, and a trailing slash is allowed.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return ValidateKey(strings.TrimSuffix(prefix, "/"))
}

const (
	reservedTmpSuffix  = ".pswap-tmp"
	reservedLockSuffix = ".pswap-lock"
)

// IsRetryable reports whether err is worth retrying after a backoff: the
// one meaning every retry loop of pswap uses. ErrTransient is, and so is an
// error no backend classified (a reset connection, a body cut short); the
// sentinels above other than ErrTransient, context cancellation, and errors
// of the kinds bad input, corrupt, not found and conflict are not.
func IsRetryable(err error) bool {
	return errkind.Retryable(err)
}

// GetRange reads part of an object through s's RangeReader, or, for stores
// without one, by discarding the bytes before off of a full Get (correct but
// not cheap). See RangeReader for the semantics.
func GetRange(ctx context.Context, s Store, key string, off, n int64) (io.ReadCloser, Attrs, error) {
	if rr, ok := s.(RangeReader); ok {
		return rr.GetRange(ctx, key, off, n)
	}
	if off < 0 {
		return nil, Attrs{}, fmt.Errorf("get %s range at %d: %w", key, off, ErrInvalidRange)
	}
	rc, a, err := s.Get(ctx, key)
	if err != nil {
		return nil, Attrs{}, err
	}
	if off >= a.Size && a.Size > 0 {
		rc.Close()
		return nil, Attrs{}, fmt.Errorf("get %s range at %d of %d bytes: %w", key, off, a.Size, ErrInvalidRange)
	}
	if _, err := io.CopyN(io.Discard, rc, off); err != nil {
		rc.Close()
		return nil, Attrs{}, fmt.Errorf("get %s range at %d: %w", key, off, err)
	}
	if n < 0 {
		return rc, a, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(rc, n), rc}, a, nil
}

// Copy copies src to dst through s's Copier, or, for stores without one, by
// streaming a Get into a NewWriter (the bytes then pass through this
// process). The fallback honours opts the same way: the source version is
// checked on the Get, the destination condition on the write.
func Copy(ctx context.Context, s Store, dst, src string, opts CopyOptions) (Attrs, error) {
	if c, ok := s.(Copier); ok {
		return c.Copy(ctx, dst, src, opts)
	}
	rc, a, err := s.Get(ctx, src)
	if err != nil {
		return Attrs{}, fmt.Errorf("copy: %w", err)
	}
	defer rc.Close()
	if opts.SourceIfMatch != "" && a.ETag != opts.SourceIfMatch {
		return Attrs{}, fmt.Errorf("copy %s: source changed: %w", src, ErrPrecondition)
	}
	w, err := s.NewWriter(ctx, dst, WriterOptions{PutOptions: PutOptions{IfNoneMatch: opts.IfNoneMatch}})
	if err != nil {
		return Attrs{}, err
	}
	if _, err := io.Copy(w, rc); err != nil {
		w.Abort()
		return Attrs{}, fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return w.Commit()
}

// Slice applies RangeReader's rules to an object held in memory: the n bytes
// of data at off (n < 0: to the end), for backends and wrappers.
func Slice(data []byte, off, n int64) ([]byte, error) {
	size := int64(len(data))
	if off < 0 || (off >= size && size > 0) {
		return nil, fmt.Errorf("range at %d of %d bytes: %w", off, size, ErrInvalidRange)
	}
	end := size
	if n >= 0 && off+n < size {
		end = off + n
	}
	return data[off:end], nil
}

// ReadRange reads the n bytes of key at off (n < 0: to the end) into memory.
func ReadRange(ctx context.Context, s Store, key string, off, n int64) ([]byte, Attrs, error) {
	rc, a, err := GetRange(ctx, s, key, off, n)
	if err != nil {
		return nil, Attrs{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, Attrs{}, fmt.Errorf("read %s: %w", key, err)
	}
	return b, a, nil
}

// ReadAll reads a whole (small) object.
func ReadAll(ctx context.Context, s Store, key string) ([]byte, Attrs, error) {
	rc, a, err := s.Get(ctx, key)
	if err != nil {
		return nil, Attrs{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, Attrs{}, fmt.Errorf("read %s: %w", key, err)
	}
	return b, a, nil
}

// DeleteAll deletes keys, in batches where the store supports it.
func DeleteAll(ctx context.Context, s Store, keys []string) error {
	if bd, ok := s.(BatchDeleter); ok {
		for len(keys) > 0 {
			n := min(len(keys), 1000)
			if err := bd.DeleteMany(ctx, keys[:n]); err != nil {
				return err
			}
			keys = keys[n:]
		}
		return nil
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// ListEntry is one result of a delimited listing: an object, or a common
// prefix that stands for every object whose key starts with it.
type ListEntry struct {
	// Attrs of the object. For a common prefix only Key is set: the prefix,
	// ending with the delimiter.
	Attrs
	// IsPrefix reports a common prefix rather than an object.
	IsPrefix bool
}

// DelimiterLister is implemented by stores that can list with a delimiter,
// the way S3's ListObjectsV2 does with Delimiter (or io/fs's ReadDirFS lists
// one directory): every object whose key starts with prefix and contains
// delimiter after it is rolled up into one common prefix, the key up to and
// including the first delimiter after prefix. Objects and common prefixes
// come in one lexical order. The cost then grows with the number of
// entries, not with the number of objects under them. Use ListDelimited,
// which falls back to a full List for stores without it.
type DelimiterLister interface {
	ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[ListEntry, error]
}

// ListDelimited lists with a delimiter: through the store's DelimiterLister
// when it has one, else by rolling up a full List (same results, full
// cost). An empty delimiter lists every object.
func ListDelimited(ctx context.Context, s Store, prefix, delimiter string) iter.Seq2[ListEntry, error] {
	if dl, ok := s.(DelimiterLister); ok && delimiter != "" {
		return dl.ListDelimited(ctx, prefix, delimiter)
	}
	return RollUp(s.List(ctx, prefix), prefix, delimiter)
}

// RollUp turns a lexically ordered listing of the objects under prefix into
// a delimited one: for backends that implement DelimiterLister on top of a
// full walk. Keys that do not start with prefix are passed through.
func RollUp(objects iter.Seq2[Attrs, error], prefix, delimiter string) iter.Seq2[ListEntry, error] {
	return func(yield func(ListEntry, error) bool) {
		last := ""
		for a, err := range objects {
			if err != nil {
				yield(ListEntry{}, err)
				return
			}
			if cp, ok := CommonPrefix(a.Key, prefix, delimiter); ok {
				if cp == last {
					continue
				}
				last = cp
				if !yield(ListEntry{Attrs: Attrs{Key: cp}, IsPrefix: true}, nil) {
					return
				}
				continue
			}
			if !yield(ListEntry{Attrs: a}, nil) {
				return
			}
		}
	}
}

// CommonPrefix returns the common prefix that a delimited listing of prefix
// rolls key into: key up to and including the first delimiter after prefix.
// It reports false for a key listed as itself.
func CommonPrefix(key, prefix, delimiter string) (string, bool) {
	if delimiter == "" || !strings.HasPrefix(key, prefix) {
		return "", false
	}
	i := strings.Index(key[len(prefix):], delimiter)
	if i < 0 {
		return "", false
	}
	return key[:len(prefix)+i+len(delimiter)], true
}
