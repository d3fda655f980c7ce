package storetest

import (
	"context"
	"io"
	"iter"
	"sync"

	"github.com/pswap/pswap/store"
)

// Call describes one request seen by a Faulty store.
type Call struct {
	Op   string // "get", "get-range", "stat", "put", "writer", "copy", "delete", "list"
	Key  string
	Opts store.PutOptions // for "put"
	N    int              // 1-based index of this call among calls with the same Op and Key
}

// Fault decides what happens to a call. Before, when not nil, fails the call
// without running it. After, when not nil, runs the call and then replaces
// its result with this error: the request was applied but its response was
// lost (a timeout, a reset, an SDK retry that turned success into 412). Hook
// runs between the real call and the response (to interleave other writers).
type Fault struct {
	Before error
	After  error
	Hook   func()
}

// Faulty wraps a store and injects faults chosen by Inject, for tests of the
// layers above (lost responses, 412 after our own success, 5xx, 403).
type Faulty struct {
	store.Store
	// Inject returns the fault for a call, or the zero Fault for none.
	Inject func(c Call) Fault
	mu     sync.Mutex
	seen   map[[2]string]int
}

// NewFaulty wraps s.
func NewFaulty(s store.Store, inject func(Call) Fault) *Faulty {
	return &Faulty{Store: s, Inject: inject, seen: map[[2]string]int{}}
}

func (f *Faulty) fault(op, key string, opts store.PutOptions) Fault {
	f.mu.Lock()
	f.seen[[2]string{op, key}]++
	n := f.seen[[2]string{op, key}]
	f.mu.Unlock()
	if f.Inject == nil {
		return Fault{}
	}
	return f.Inject(Call{Op: op, Key: key, Opts: opts, N: n})
}

func (f *Faulty) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	ft := f.fault("get", key, store.PutOptions{})
	if ft.Before != nil {
		return nil, store.Attrs{}, ft.Before
	}
	rc, a, err := f.Store.Get(ctx, key)
	if ft.Hook != nil {
		ft.Hook()
	}
	if ft.After != nil {
		if rc != nil {
			rc.Close()
		}
		return nil, store.Attrs{}, ft.After
	}
	return rc, a, err
}

func (f *Faulty) Stat(ctx context.Context, key string) (store.Attrs, error) {
	ft := f.fault("stat", key, store.PutOptions{})
	if ft.Before != nil {
		return store.Attrs{}, ft.Before
	}
	a, err := f.Store.Stat(ctx, key)
	if ft.After != nil {
		return store.Attrs{}, ft.After
	}
	return a, err
}

func (f *Faulty) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	ft := f.fault("put", key, opts)
	if ft.Before != nil {
		return store.Attrs{}, ft.Before
	}
	a, err := f.Store.Put(ctx, key, data, opts)
	if ft.Hook != nil {
		ft.Hook()
	}
	if ft.After != nil {
		return store.Attrs{}, ft.After
	}
	return a, err
}

func (f *Faulty) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	ft := f.fault("writer", key, opts.PutOptions)
	if ft.Before != nil {
		return nil, ft.Before
	}
	return f.Store.NewWriter(ctx, key, opts)
}

func (f *Faulty) Delete(ctx context.Context, key string) error {
	ft := f.fault("delete", key, store.PutOptions{})
	if ft.Before != nil {
		return ft.Before
	}
	return f.Store.Delete(ctx, key)
}

func (f *Faulty) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	ft := f.fault("list", prefix, store.PutOptions{})
	if ft.Before != nil {
		return func(yield func(store.Attrs, error) bool) { yield(store.Attrs{}, ft.Before) }
	}
	return f.Store.List(ctx, prefix)
}

// GetRange injects faults as op "get-range" and forwards to store.GetRange.
func (f *Faulty) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	ft := f.fault("get-range", key, store.PutOptions{})
	if ft.Before != nil {
		return nil, store.Attrs{}, ft.Before
	}
	rc, a, err := store.GetRange(ctx, f.Store, key, off, n)
	if ft.Hook != nil {
		ft.Hook()
	}
	if ft.After != nil {
		if rc != nil {
			rc.Close()
		}
		return nil, store.Attrs{}, ft.After
	}
	return rc, a, err
}

// Copy injects faults as op "copy" (Key is the destination) and forwards to store.Copy.
func (f *Faulty) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (store.Attrs, error) {
	ft := f.fault("copy", dst, store.PutOptions{IfNoneMatch: opts.IfNoneMatch})
	if ft.Before != nil {
		return store.Attrs{}, ft.Before
	}
	a, err := store.Copy(ctx, f.Store, dst, src, opts)
	if ft.Hook != nil {
		ft.Hook()
	}
	if ft.After != nil {
		return store.Attrs{}, ft.After
	}
	return a, err
}

// ListDelimited implements store.DelimiterLister with the wrapped store's
// (a "list" call for faults), or a full List.
func (f *Faulty) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	if _, ok := f.Store.(store.DelimiterLister); !ok {
		return store.RollUp(f.List(ctx, prefix), prefix, delimiter)
	}
	ft := f.fault("list", prefix, store.PutOptions{})
	if ft.Before != nil {
		return func(yield func(store.ListEntry, error) bool) { yield(store.ListEntry{}, ft.Before) }
	}
	return store.ListDelimited(ctx, f.Store, prefix, delimiter)
}

// Now forwards the wrapped store's clock, if it has one.
func (f *Faulty) Now(ctx context.Context) (Time, error) { return now(ctx, f.Store) }
