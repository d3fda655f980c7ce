package sim

import (
	"github.com/pswap/pswap/internal/bufwriter"

	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"iter"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pswap/pswap/internal/lakehouse"
	"github.com/pswap/pswap/store"
)

// DefaultPageSize is the number of keys per LIST page (S3's 1,000).
const DefaultPageSize = 1000

// object is one stored object.
type object struct {
	data []byte
	etag string
	mod  time.Time // the store's timestamp, 1 s resolution
}

// Store is the simulated object store: a store.Store (and store.Clock,
// store.BatchDeleter) whose every request from an actor goes through the
// world's scheduler. Requests from a context that carries no actor (setup,
// checks, the conformance suite) are applied at once.
type Store struct {
	w *World
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.Clock           = (*Store)(nil)
	_ store.BatchDeleter    = (*Store)(nil)
	_ store.RangeReader     = (*Store)(nil)
	_ store.Copier          = (*Store)(nil)
	_ store.DelimiterLister = (*Store)(nil)
)

// request is one store request, filled in with its result when applied.
type request struct {
	op    string // get, stat, put, delete, delete-many, list
	key   string // the key, or the prefix of a list
	keys  []string
	data  []byte
	opts  store.PutOptions
	after string            // list: continue after this key
	src   string            // copy: the source key
	copy  store.CopyOptions // copy
	off   int64             // get: the range's start
	n     int64             // get: the range's length (< 0: to the end)
	delim string            // list: the delimiter, if any
	until int               // pause: not before this step
	sleep time.Duration     // pause: the clock moves this much

	attrs store.Attrs
	body  []byte
	page  []store.Attrs
	pre   []bool // list: which entries of page are common prefixes
	more  bool
	err   error
}

func (r *request) String() string {
	switch r.op {
	case "put":
		c := ""
		switch {
		case r.opts.IfNoneMatch:
			c = " if-none-match"
		case r.opts.IfMatch != "":
			c = " if-match=" + shortETag(r.opts.IfMatch)
		}
		return fmt.Sprintf("put %s%s", r.key, c)
	case "delete-many":
		return fmt.Sprintf("delete-many %d keys %s", len(r.keys), summarizeKeys(r.keys))
	case "copy":
		c := ""
		if r.copy.IfNoneMatch {
			c += " if-none-match"
		}
		if r.copy.SourceIfMatch != "" {
			c += " source-if-match=" + shortETag(r.copy.SourceIfMatch)
		}
		return fmt.Sprintf("copy %s to %s%s", r.src, r.key, c)
	case "get":
		if r.off != 0 || r.n >= 0 {
			return fmt.Sprintf("get %s range %d+%d", r.key, r.off, r.n)
		}
	case "list":
		d := ""
		if r.delim != "" {
			d = " delimiter " + r.delim
		}
		if r.after != "" {
			return fmt.Sprintf("list %s%s after %s", r.key, d, r.after)
		}
		return "list " + r.key + d
	}
	return r.op + " " + r.key
}

func shortETag(e string) string {
	e = strings.Trim(e, `"`)
	if len(e) > 6 {
		e = e[:6]
	}
	return e
}

func summarizeKeys(keys []string) string {
	if len(keys) <= 3 {
		return "[" + strings.Join(keys, " ") + "]"
	}
	return "[" + strings.Join(keys[:3], " ") + " ...]"
}

// isWrite reports whether the request changes the store when applied.
func (r *request) isWrite() bool {
	return r.op == "put" || r.op == "delete" || r.op == "delete-many" || r.op == "copy"
}

// isConditional reports whether the request is a conditional PUT (the only
// kind S3 answers with 409 ConditionalRequestConflict or 412).
func (r *request) isConditional() bool {
	return (r.op == "put" && (r.opts.IfNoneMatch || r.opts.IfMatch != "")) ||
		(r.op == "copy" && (r.copy.IfNoneMatch || r.copy.SourceIfMatch != ""))
}

func etagOf(b []byte) string {
	// S3's ETag of a single-part object: the MD5 of its content. Writing the
	// same bytes again gives the same ETag, as on S3.
	sum := md5.Sum(b)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// nextGeneration returns a new GCS generation number, in decimal: larger
// than every earlier one, as GCS's (microseconds since the epoch) are.
func (w *World) nextGeneration() string {
	w.generation++
	return strconv.FormatInt(1_700_000_000_000_000+w.generation, 10)
}

// apply runs a request against the objects. The world's lock is held.
func (w *World) apply(r *request) {
	now := w.clock.Truncate(time.Second)
	switch r.op {
	case "get", "stat":
		o, ok := w.objs[r.key]
		if !ok {
			r.err = fmt.Errorf("%s %s: %w", r.op, w.st.URI(r.key), store.ErrNotFound)
			return
		}
		r.attrs = store.Attrs{Key: r.key, Size: int64(len(o.data)), ETag: o.etag, ModTime: o.mod}
		if r.op == "get" {
			b, err := store.Slice(o.data, r.off, r.n)
			if err != nil {
				r.err = fmt.Errorf("get %s: %w", w.st.URI(r.key), err)
				return
			}
			r.body = bytes.Clone(b)
		}
	case "copy":
		so, ok := w.objs[r.src]
		if !ok {
			r.err = fmt.Errorf("copy %s: %w", w.st.URI(r.src), store.ErrNotFound)
			return
		}
		if r.copy.SourceIfMatch != "" && so.etag != r.copy.SourceIfMatch {
			r.err = fmt.Errorf("copy %s: source changed: %w", w.st.URI(r.src), store.ErrPrecondition)
			return
		}
		if _, exists := w.objs[r.key]; exists && r.copy.IfNoneMatch {
			r.err = fmt.Errorf("copy to %s: object exists: %w", w.st.URI(r.key), store.ErrPrecondition)
			return
		}
		o := object{data: so.data, etag: so.etag, mod: now}
		if w.cfg.Generations {
			o.etag = w.nextGeneration() // a copy is a new generation on GCS
		}
		w.objs[r.key] = o
		r.attrs = store.Attrs{Key: r.key, Size: int64(len(o.data)), ETag: o.etag, ModTime: o.mod}
		r.data = o.data
		w.observePut(r)
	case "put":
		cur, exists := w.objs[r.key]
		if r.opts.IfNoneMatch && exists {
			r.err = fmt.Errorf("put %s: object exists: %w", w.st.URI(r.key), store.ErrPrecondition)
			return
		}
		if r.opts.IfMatch != "" {
			if !exists {
				r.err = fmt.Errorf("put %s if-match: %w: %w", w.st.URI(r.key), store.ErrPrecondition, store.ErrNotFound)
				return
			}
			if cur.etag != r.opts.IfMatch {
				r.err = fmt.Errorf("put %s: version changed: %w", w.st.URI(r.key), store.ErrPrecondition)
				return
			}
		}
		o := object{data: bytes.Clone(r.data), etag: etagOf(r.data), mod: now}
		if w.cfg.Generations {
			o.etag = w.nextGeneration()
		}
		w.objs[r.key] = o
		r.attrs = store.Attrs{Key: r.key, Size: int64(len(o.data)), ETag: o.etag, ModTime: o.mod}
		if isColdManifest(r.key) {
			w.coldWrites++
		}
		w.observePut(r)
	case "delete":
		w.observeDelete(r.key)
		delete(w.objs, r.key)
	case "delete-many":
		for _, k := range r.keys {
			w.observeDelete(k)
			delete(w.objs, k)
		}
	case "pause":
		w.clock = w.clock.Add(r.sleep)
	case "list":
		keys := make([]string, 0, 16)
		for k := range w.objs {
			if strings.HasPrefix(k, r.key) && k > r.after {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		last := ""
		for _, k := range keys {
			if r.delim != "" && strings.HasSuffix(r.after, r.delim) && strings.HasPrefix(k, r.after) {
				continue // under the common prefix the previous page ended with
			}
			cp, isPrefix := store.CommonPrefix(k, r.key, r.delim)
			if isPrefix && cp == last {
				continue
			}
			if len(r.page) == w.pageSize {
				r.more = true
				break
			}
			if isPrefix {
				last = cp
				r.page = append(r.page, store.Attrs{Key: cp})
				r.pre = append(r.pre, true)
				continue
			}
			o := w.objs[k]
			r.page = append(r.page, store.Attrs{Key: k, Size: int64(len(o.data)), ETag: o.etag, ModTime: o.mod})
			r.pre = append(r.pre, false)
		}
	default:
		panic("sim: unknown op " + r.op)
	}
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, store.Attrs{}, err
	}
	r := &request{op: "get", key: key, n: -1}
	if err := s.w.do(ctx, r); err != nil {
		return nil, store.Attrs{}, err
	}
	return io.NopCloser(bytes.NewReader(r.body)), r.attrs, nil
}

// GetRange implements store.RangeReader: one request.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, store.Attrs{}, err
	}
	r := &request{op: "get", key: key, off: off, n: n}
	if err := s.w.do(ctx, r); err != nil {
		return nil, store.Attrs{}, err
	}
	return io.NopCloser(bytes.NewReader(r.body)), r.attrs, nil
}

// Copy implements store.Copier: one request (CopyObject), atomic at the
// destination.
func (s *Store) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (store.Attrs, error) {
	if err := store.ValidateKey(dst); err != nil {
		return store.Attrs{}, err
	}
	if err := store.ValidateKey(src); err != nil {
		return store.Attrs{}, err
	}
	r := &request{op: "copy", key: dst, src: src, copy: opts}
	if err := s.w.do(ctx, r); err != nil {
		return store.Attrs{}, err
	}
	return r.attrs, nil
}

// Stat implements store.Store.
func (s *Store) Stat(ctx context.Context, key string) (store.Attrs, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Attrs{}, err
	}
	r := &request{op: "stat", key: key}
	if err := s.w.do(ctx, r); err != nil {
		return store.Attrs{}, err
	}
	return r.attrs, nil
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Attrs{}, err
	}
	if err := s.w.stallBefore(ctx, key); err != nil {
		return store.Attrs{}, err
	}
	r := &request{op: "put", key: key, data: bytes.Clone(data), opts: opts}
	if err := s.w.do(ctx, r); err != nil {
		return store.Attrs{}, err
	}
	return r.attrs, nil
}

// NewWriter implements store.Store. The object is buffered and written by
// one request on Commit (the simulation does not model multipart uploads:
// nothing is visible before Commit either way).
func (s *Store) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return bufwriter.New(ctx, key, func(data []byte) (store.Attrs, error) {
		return s.Put(ctx, key, data, opts.PutOptions)
	}), nil
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	return s.w.do(ctx, &request{op: "delete", key: key})
}

// DeleteMany implements store.BatchDeleter: one request (S3 DeleteObjects).
func (s *Store) DeleteMany(ctx context.Context, keys []string) error {
	for _, k := range keys {
		if err := store.ValidateKey(k); err != nil {
			return err
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return s.w.do(ctx, &request{op: "delete-many", keys: append([]string(nil), keys...)})
}

// ListDelimited implements store.DelimiterLister: pages of World.pageSize
// entries (objects and common prefixes), one request each, like
// ListObjectsV2 with a delimiter.
func (s *Store) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	return func(yield func(store.ListEntry, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.ListEntry{}, err)
			return
		}
		after := ""
		for {
			r := &request{op: "list", key: prefix, after: after, delim: delimiter}
			if err := s.w.do(ctx, r); err != nil {
				yield(store.ListEntry{}, err)
				return
			}
			for i, a := range r.page {
				if !yield(store.ListEntry{Attrs: a, IsPrefix: r.pre[i]}, nil) {
					return
				}
			}
			if !r.more || len(r.page) == 0 {
				return
			}
			after = r.page[len(r.page)-1].Key
		}
	}
}

// List implements store.Store: pages of World.pageSize keys in lexical
// order, one request each, every page continuing after the last key of the
// previous one (ListObjectsV2 with a continuation token): keys written or
// deleted between two pages are seen or not seen as on S3.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	return func(yield func(store.Attrs, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.Attrs{}, err)
			return
		}
		after := ""
		for {
			r := &request{op: "list", key: prefix, after: after}
			if err := s.w.do(ctx, r); err != nil {
				yield(store.Attrs{}, err)
				return
			}
			for _, a := range r.page {
				if !yield(a, nil) {
					return
				}
			}
			if !r.more || len(r.page) == 0 {
				return
			}
			after = r.page[len(r.page)-1].Key
		}
	}
}

// Now implements store.Clock: the simulated clock, truncated to the second
// like S3's Date header (never ahead). Reading it is not a request: on S3 it
// comes from the last response's Date header. It is when a writer takes its
// grace-period check, so the world remembers it per actor.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	return s.w.now(ctx), nil
}

// URI implements store.Store.
func (s *Store) URI(key string) string { return "sim://" + key }

// Close implements store.Store.
func (s *Store) Close() error { return nil }

// isColdManifest reports whether key is a cold manifest's (a segment, or
// the one cold manifest per prefix before segments): lakehouse's own rule.
func isColdManifest(key string) bool {
	name, ok := strings.CutPrefix(key, lakehouse.MetadataDir+"/")
	if !ok || strings.Contains(name, "/") {
		return false
	}
	_, cold := lakehouse.ManifestShape(name)
	return cold
}
