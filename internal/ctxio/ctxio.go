// Package ctxio binds readers to a context.
package ctxio

import (
	"context"
	"io"
)

// Reader returns r as a reader that stops once ctx is done: each Read
// first fails with ctx's error if there is one.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	return reader{ctx: ctx, r: r}
}

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
