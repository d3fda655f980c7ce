// Command s3link is a reverse proxy in front of an S3-compatible server
// that sends every request body through one shared bandwidth limit: a
// modelled uplink (about one S3 PUT stream at 100 MB/s), so that a process
// such as `pswap commit` can be compared with a plain PutObject behind a
// link slower than loopback, as BenchmarkExistingFile's -100MBps cases do
// for the library in process.
//
//	s3link -upstream http://127.0.0.1:9000 [-listen 127.0.0.1:0] [-mbps 100]
//
// It prints its own endpoint (http://host:port) on the first line of
// standard output, then serves until interrupted. The Host header is
// forwarded unchanged, so request signatures (which cover it) stay valid.
// Responses are not limited.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "s3link:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: s3link -upstream http://host:port [-listen addr] [-mbps 100]")

func run(args []string) error {
	fs := flag.NewFlagSet("s3link", flag.ContinueOnError)
	upstream := fs.String("upstream", "", "the S3 server's endpoint URL")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	mbps := fs.Float64("mbps", 100, "the link's rate for request bodies, all connections together, in MB/s (10^6 bytes)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	u, err := url.Parse(*upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("%w: -upstream %q is not an http(s)://host:port URL", errUsage, *upstream)
	}
	if *mbps <= 0 {
		return fmt.Errorf("%w: -mbps must be positive", errUsage)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	srv := &http.Server{Handler: newProxy(u, *mbps*1e6)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newProxy forwards every request to upstream, its body through one
// limit of bytesPerSec shared by all requests.
func newProxy(upstream *url.URL, bytesPerSec float64) http.Handler {
	lim := &limiter{rate: bytesPerSec}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(upstream)
		r.Out.Host = r.In.Host // signed by the client
	}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &pacedBody{ReadCloser: r.Body, lim: lim}
		}
		rp.ServeHTTP(w, r)
	})
}

// limiter paces bytes to a rate, across all the readers that share it.
type limiter struct {
	rate float64 // bytes per second
	mu   sync.Mutex
	next time.Time // when the link is free again
}

// wait blocks until n more bytes fit the rate.
func (l *limiter) wait(n int) {
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

// pacedBody reads a request body through the limiter in small steps.
type pacedBody struct {
	io.ReadCloser
	lim *limiter
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.lim.wait(n)
	}
	return n, err
}
