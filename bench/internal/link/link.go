// Package link models a slower link than loopback for the benchmarks: a
// limiter that paces bytes to a rate across every reader sharing it, a
// request body read through one, and a reverse proxy to an S3 endpoint
// that sends every request body through one (bench/cmd/s3link, and the
// in-process forms of section 4's behind-a-link rows).
package link

import (
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// Limiter paces bytes to a rate, across all the readers that share it.
type Limiter struct {
	rate float64 // bytes per second
	mu   sync.Mutex
	next time.Time // when the link is free again
}

// NewLimiter returns a limiter of bytesPerSec.
func NewLimiter(bytesPerSec float64) *Limiter { return &Limiter{rate: bytesPerSec} }

// Wait blocks until n more bytes fit the rate.
func (l *Limiter) Wait(n int) {
	l.mu.Lock()
	now := time.Now()
	// Credit for up to 20 ms of idle link, so that a reader woken late
	// (timer slack) catches up instead of losing the time.
	if idle := now.Add(-20 * time.Millisecond); l.next.Before(idle) {
		l.next = idle
	}
	l.next = l.next.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
	until := l.next
	l.mu.Unlock()
	time.Sleep(time.Until(until))
}

// Body returns rc read through l in steps of at most 64 KiB.
func Body(rc io.ReadCloser, l *Limiter) io.ReadCloser { return &pacedBody{ReadCloser: rc, lim: l} }

type pacedBody struct {
	io.ReadCloser
	lim *Limiter
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.lim.Wait(n)
	}
	return n, err
}

// Forward returns a reverse proxy to upstream (an http(s)://host:port URL)
// that forwards the Host header unchanged: S3 clients sign it. The
// benchmarks' proxies in front of a store (the modelled link, s3count's
// counter, the writers' trace) are all this one.
func Forward(upstream *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(upstream)
		r.Out.Host = r.In.Host // signed by the client
	}}
}

// Proxy forwards every request to upstream, its body through one limit of
// bytesPerSec shared by all requests. The Host header is forwarded
// unchanged (S3 clients sign it); responses are not limited.
func Proxy(upstream *url.URL, bytesPerSec float64) http.Handler {
	lim := NewLimiter(bytesPerSec)
	rp := Forward(upstream)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = Body(r.Body, lim)
		}
		rp.ServeHTTP(w, r)
	})
}
