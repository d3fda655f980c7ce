package store

import (
	"context"
	"io"
	"time"

	"github.com/pswap/pswap/internal/errkind"
)

// ErrChanged: an object changed between two ranged reads of one
// [TailReader] (its size or ETag is not the one it started with).
var ErrChanged = errkind.New("object changed between two reads", errkind.ErrPermanent)

// DefaultTail is the first read of a [TailReader] when none is given: as
// much as Arrow's Parquet reader asks for at once (64 KiB), so that a
// footer usually costs one GET.
const DefaultTail = 64 << 10

// TailReader is an io.ReaderAt over ranged GETs of one object, for readers
// of an object's end such as a Parquet footer reader, which then fetch the
// footer instead of the whole file. It keeps one window of the object, the
// bytes from Start to the end: the first read takes the last Tail bytes
// (more if asked for earlier ones), and a read of earlier bytes widens the
// window backwards, one GET each time. Every GET must see the object's
// version: the size (and the ETag, when known) that Attrs gave, and the
// ETag of the first GET; anything else fails with ErrChanged. It is not
// safe for concurrent use.
type TailReader struct {
	ctx   context.Context
	st    Store
	key   string
	attrs Attrs
	tail  int64

	buf   []byte // bytes start..attrs.Size
	start int64
	etag  string
	mod   time.Time
	err   error // the first store failure
}

// NewTailReader returns a reader of key, whose attributes a listing or a
// Stat gave (Size must be the object's; ETag may be empty), reading first
// the last tail bytes (tail <= 0: DefaultTail).
func NewTailReader(ctx context.Context, st Store, key string, a Attrs, tail int64) *TailReader {
	if tail <= 0 {
		tail = DefaultTail
	}
	return &TailReader{ctx: ctx, st: st, key: key, attrs: a, tail: tail}
}

// ReadAt implements io.ReaderAt over the object's bytes.
func (r *TailReader) ReadAt(p []byte, off int64) (int, error) {
	size := r.attrs.Size
	if off < 0 || off >= size {
		return 0, io.EOF
	}
	if r.buf == nil || off < r.start {
		from := off
		if r.buf == nil {
			from = min(off, max(0, size-r.tail))
		}
		end := size
		if r.buf != nil {
			end = r.start
		}
		b, a, err := ReadRange(r.ctx, r.st, r.key, from, end-from)
		if err == nil && (a.Size != size || (r.attrs.ETag != "" && a.ETag != r.attrs.ETag) ||
			(r.etag != "" && a.ETag != r.etag) || int64(len(b)) != end-from) {
			err = ErrChanged
		}
		if err != nil {
			if r.err == nil {
				r.err = err
			}
			return 0, err
		}
		r.etag, r.mod = a.ETag, a.ModTime
		r.buf = append(b, r.buf...)
		r.start = from
	}
	n := copy(p, r.buf[off-r.start:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Err is the first store failure of a read (nil: none), so that a caller
// whose parser turned it into a parse error can tell a store failure from
// bad content.
func (r *TailReader) Err() error { return r.err }

// Window returns the bytes read so far and the offset of the first of
// them.
func (r *TailReader) Window() (start int64, data []byte) { return r.start, r.buf }

// ETag is the object's ETag as the ranged GETs saw it (empty before the
// first read).
func (r *TailReader) ETag() string { return r.etag }

// ModTime is the object's modification time as the GETs saw it.
func (r *TailReader) ModTime() time.Time { return r.mod }
