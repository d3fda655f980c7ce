package storetest

import (
	"context"
	"io"
	"iter"
	"sync"

	"github.com/pswap/pswap/store"
)

// Counting wraps a store and counts requests by operation, so that tests and
// benchmarks can check what a commit or a read costs.
type Counting struct {
	store.Store
	mu     sync.Mutex
	counts map[string]int
}

// NewCounting wraps s.
func NewCounting(s store.Store) *Counting { return &Counting{Store: s, counts: map[string]int{}} }

func (c *Counting) add(op string) {
	c.mu.Lock()
	c.counts[op]++
	c.mu.Unlock()
}

// Counts returns a copy of the counts by operation ("get", "stat", "put",
// "put-if-none-match", "put-if-match", "writer", "delete", "list",
// "delete-many"). A listing counts one "list" per page of up to 1,000
// entries that it yields (at least one), as S3's ListObjectsV2 pages them.
func (c *Counting) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Total returns the number of requests counted.
func (c *Counting) Total() int {
	n := 0
	for _, v := range c.Counts() {
		n += v
	}
	return n
}

// Reset zeroes the counts.
func (c *Counting) Reset() {
	c.mu.Lock()
	c.counts = map[string]int{}
	c.mu.Unlock()
}

func (c *Counting) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	c.add("get")
	return c.Store.Get(ctx, key)
}

func (c *Counting) Stat(ctx context.Context, key string) (store.Attrs, error) {
	c.add("stat")
	return c.Store.Stat(ctx, key)
}

func (c *Counting) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	c.add(putOp(opts))
	return c.Store.Put(ctx, key, data, opts)
}

// putOp names a Put by its condition: "put", "put-if-none-match" or
// "put-if-match" (Counting's keys, Latency's span operations).
func putOp(opts store.PutOptions) string {
	switch {
	case opts.IfNoneMatch:
		return "put-if-none-match"
	case opts.IfMatch != "":
		return "put-if-match"
	}
	return "put"
}

func (c *Counting) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	c.add("writer")
	return c.Store.NewWriter(ctx, key, opts)
}

func (c *Counting) Delete(ctx context.Context, key string) error {
	c.add("delete")
	return c.Store.Delete(ctx, key)
}

func (c *Counting) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	return countPages(c, c.Store.List(ctx, prefix))
}

// ListDelimited implements store.DelimiterLister: through the wrapped
// store's when it has one (its pages counted), else as a full List.
func (c *Counting) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	if _, ok := c.Store.(store.DelimiterLister); ok {
		return countPages(c, store.ListDelimited(ctx, c.Store, prefix, delimiter))
	}
	return store.RollUp(c.List(ctx, prefix), prefix, delimiter)
}

// ListPageSize is the number of entries per listing page that Counting
// assumes (S3's ListObjectsV2 maximum).
const ListPageSize = 1000

func countPages[T any](c *Counting, seq iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		c.add("list")
		n := 0
		for v, err := range seq {
			if n++; n > ListPageSize && n%ListPageSize == 1 {
				c.add("list")
			}
			if !yield(v, err) {
				return
			}
		}
	}
}

// DeleteMany counts one "delete-many" request per call (S3 DeleteObjects)
// when the wrapped store batches deletes, else one "delete" per key.
func (c *Counting) DeleteMany(ctx context.Context, keys []string) error {
	if bd, ok := c.Store.(store.BatchDeleter); ok {
		c.add("delete-many")
		return bd.DeleteMany(ctx, keys)
	}
	for _, k := range keys {
		if err := c.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// GetRange counts one "get-range" request when the wrapped store reads
// ranges, else one "get" (store.GetRange then reads the whole object).
func (c *Counting) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	if _, ok := c.Store.(store.RangeReader); ok {
		c.add("get-range")
	} else {
		c.add("get")
	}
	return store.GetRange(ctx, c.Store, key, off, n)
}

// Copy counts one "copy" request when the wrapped store copies server-side,
// else a "get" and a "writer" (store.Copy then streams the bytes through).
func (c *Counting) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (store.Attrs, error) {
	if _, ok := c.Store.(store.Copier); ok {
		c.add("copy")
	} else {
		c.add("get")
		c.add("writer")
	}
	return store.Copy(ctx, c.Store, dst, src, opts)
}
