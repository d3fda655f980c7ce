package bufwriter

import (
	"bytes"
	"context"
	"fmt"

	"github.com/pswap/pswap/store"
)

// New returns a writer of key that buffers its bytes until Commit, which
// calls put with them (once). ctx governs Write and Commit.
func New(ctx context.Context, key string, put func(data []byte) (store.Attrs, error)) store.Writer {
	return &writer{ctx: ctx, key: key, put: put}
}

type writer struct {
	ctx  context.Context
	key  string
	put  func([]byte) (store.Attrs, error)
	buf  bytes.Buffer
	done bool
}

func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("write %s: writer already finished", w.key)
	}
	if err := w.ctx.Err(); err != nil {
		w.done = true
		return 0, err
	}
	return w.buf.Write(p)
}

func (w *writer) Commit() (store.Attrs, error) {
	if w.done {
		return store.Attrs{}, fmt.Errorf("commit %s: writer already finished", w.key)
	}
	w.done = true
	if err := w.ctx.Err(); err != nil {
		return store.Attrs{}, err
	}
	return w.put(w.buf.Bytes())
}

func (w *writer) Abort() error {
	w.done = true
	w.buf = bytes.Buffer{}
	return nil
}
