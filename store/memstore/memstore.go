// Package memstore is an in-memory store.Store for fast unit tests. It has the
// same semantics as the real backends (conditional writes, lexical listing,
// invisible-until-commit streaming writes) and runs the same conformance suite.
package memstore

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
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/store"
)

// Options configure a memory store. The zero value works.
type Options struct {
	// Now is the store's clock, used for ModTime. Default time.Now.
	// Tests of age-based logic (GC) set it to a fake clock.
	Now func() time.Time
	// Name appears in URIs (mem://NAME/key). Default "mem".
	Name string
}

type object struct {
	data []byte
	etag string
	mod  time.Time
}

// Store is an in-memory store. It is safe for concurrent use.
type Store struct {
	opts Options
	mu   sync.Mutex
	objs map[string]object
	seq  uint64
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.BatchDeleter    = (*Store)(nil)
	_ store.Clock           = (*Store)(nil)
	_ store.RangeReader     = (*Store)(nil)
	_ store.Copier          = (*Store)(nil)
	_ store.DelimiterLister = (*Store)(nil)
)

// New returns an empty memory store.
func New(opts ...Options) *Store {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Name == "" {
		o.Name = "mem"
	}
	return &Store{opts: o, objs: map[string]object{}}
}

func etagOf(b []byte, seq uint64) string {
	// Content hash plus a write sequence number: like an S3 version id, the
	// token changes on every write, so a replace is never mistaken for no change.
	sum := md5.Sum(b)
	return fmt.Sprintf("\"%s-%d\"", hex.EncodeToString(sum[:]), seq)
}

func (s *Store) attrs(key string, o object) store.Attrs {
	return store.Attrs{Key: key, Size: int64(len(o.data)), ETag: o.etag, ModTime: o.mod}
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	a, data, err := s.get(ctx, key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	return io.NopCloser(bytes.NewReader(data)), a, nil
}

func (s *Store) get(ctx context.Context, key string) (store.Attrs, []byte, error) {
	if err := ctx.Err(); err != nil {
		return store.Attrs{}, nil, err
	}
	if err := store.ValidateKey(key); err != nil {
		return store.Attrs{}, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	if !ok {
		return store.Attrs{}, nil, fmt.Errorf("get %s: %w", s.URI(key), store.ErrNotFound)
	}
	return s.attrs(key, o), o.data, nil
}

// GetRange implements store.RangeReader.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	a, data, err := s.get(ctx, key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	b, err := store.Slice(data, off, n)
	if err != nil {
		return nil, store.Attrs{}, fmt.Errorf("get %s: %w", s.URI(key), err)
	}
	return io.NopCloser(bytes.NewReader(b)), a, nil
}

// Copy implements store.Copier. The copy shares the source's bytes (which
// are never modified in place) and gets a version of its own.
func (s *Store) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (store.Attrs, error) {
	if err := ctx.Err(); err != nil {
		return store.Attrs{}, err
	}
	if err := store.ValidateKey(dst); err != nil {
		return store.Attrs{}, err
	}
	a, data, err := s.get(ctx, src)
	if err != nil {
		return store.Attrs{}, fmt.Errorf("copy: %w", err)
	}
	if opts.SourceIfMatch != "" && a.ETag != opts.SourceIfMatch {
		return store.Attrs{}, fmt.Errorf("copy %s: source changed: %w", s.URI(src), store.ErrPrecondition)
	}
	return s.put(dst, data, store.PutOptions{IfNoneMatch: opts.IfNoneMatch})
}

// Stat implements store.Store.
func (s *Store) Stat(ctx context.Context, key string) (store.Attrs, error) {
	a, _, err := s.get(ctx, key)
	return a, err
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	if err := ctx.Err(); err != nil {
		return store.Attrs{}, err
	}
	if err := store.ValidateKey(key); err != nil {
		return store.Attrs{}, err
	}
	return s.put(key, bytes.Clone(data), opts)
}

func (s *Store) put(key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, exists := s.objs[key]
	if opts.IfNoneMatch && exists {
		return store.Attrs{}, fmt.Errorf("put %s: object exists: %w", s.URI(key), store.ErrPrecondition)
	}
	if opts.IfMatch != "" {
		if !exists {
			return store.Attrs{}, fmt.Errorf("put %s if-match: %w: %w", s.URI(key), store.ErrPrecondition, store.ErrNotFound)
		}
		if cur.etag != opts.IfMatch {
			return store.Attrs{}, fmt.Errorf("put %s: version changed: %w", s.URI(key), store.ErrPrecondition)
		}
	}
	s.seq++
	o := object{data: data, etag: etagOf(data, s.seq), mod: s.opts.Now().UTC()}
	s.objs[key] = o
	return s.attrs(key, o), nil
}

// NewWriter implements store.Store. The object is buffered in memory and
// becomes visible only on Commit.
func (s *Store) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	return bufwriter.New(ctx, key, func(data []byte) (store.Attrs, error) {
		return s.put(key, data, opts.PutOptions)
	}), nil
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, key)
	return nil
}

// DeleteMany implements store.BatchDeleter.
func (s *Store) DeleteMany(ctx context.Context, keys []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := store.ValidateKey(k); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.objs, k)
	}
	return nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	return func(yield func(store.Attrs, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(store.Attrs{}, err)
			return
		}
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.Attrs{}, err)
			return
		}
		s.mu.Lock()
		var out []store.Attrs
		for k, o := range s.objs {
			if strings.HasPrefix(k, prefix) {
				out = append(out, s.attrs(k, o))
			}
		}
		s.mu.Unlock()
		sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
		for _, a := range out {
			if err := ctx.Err(); err != nil {
				yield(store.Attrs{}, err)
				return
			}
			if !yield(a, nil) {
				return
			}
		}
	}
}

// ListDelimited implements store.DelimiterLister.
func (s *Store) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	return store.RollUp(s.List(ctx, prefix), prefix, delimiter)
}

// Now implements store.Clock with the store's configured clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	return s.opts.Now().UTC(), ctx.Err()
}

// URI implements store.Store.
func (s *Store) URI(key string) string { return "mem://" + s.opts.Name + "/" + key }

// Close implements store.Store.
func (s *Store) Close() error { return nil }
