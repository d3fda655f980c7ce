package main

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/pswap/pswap/bench"
)

// counter counts requests by S3 operation and the bytes of their bodies.
type counter struct {
	up, down atomic.Int64

	mu  sync.Mutex
	ops map[string]int
}

func newCounter() *counter { return &counter{ops: map[string]int{}} }

func (c *counter) add(r *http.Request) {
	op := bench.Operation(r.Method, r.URL.Path, r.URL.Query())
	c.mu.Lock()
	c.ops[op]++
	c.mu.Unlock()
}

// counts is the JSON document of GET /-/counts.
type counts struct {
	Requests  int            `json:"requests"`
	Ops       map[string]int `json:"ops"`
	BytesUp   int64          `json:"bytes_up"`
	BytesDown int64          `json:"bytes_down"`
}

func (c *counter) snapshot() counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := counts{Ops: make(map[string]int, len(c.ops)), BytesUp: c.up.Load(), BytesDown: c.down.Load()}
	for k, v := range c.ops {
		out.Ops[k] = v
		out.Requests += v
	}
	return out
}

// countingBody adds the bytes read through it to n.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	b.n.Add(int64(k))
	return k, err
}
