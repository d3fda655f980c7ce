// Command s3count is a counting reverse proxy in front of an S3-compatible
// server: every tool measured by bench/peers talks to the server through
// it, so that requests and bytes are counted on the wire the same way for
// a Go, a Rust, a Python or a JVM client.
//
//	s3count -upstream http://127.0.0.1:9000 [-listen 127.0.0.1:0]
//
// It prints its own endpoint (http://host:port) on the first line of
// standard output, then serves until interrupted. GET /-/counts returns the
// counts so far as JSON ({"requests", "ops": {operation: n}, "bytes_up",
// "bytes_down"}); the S3 operations are named as bench.Operation names
// them. The Host header is forwarded unchanged, so request signatures
// (which cover it) stay valid.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/pswap/pswap/bench/internal/link"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "s3count:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: s3count -upstream http://host:port [-listen addr]")

func run(args []string) error {
	fs := flag.NewFlagSet("s3count", flag.ContinueOnError)
	upstream := fs.String("upstream", "", "the S3 server's endpoint URL")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	u, err := parseUpstream(*upstream)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	srv := &http.Server{Handler: newProxy(u)}
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

// parseUpstream accepts an http(s)://host[:port] URL without a path.
func parseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("%w: -upstream %q is not an http(s)://host:port URL", errUsage, s)
	}
	return u, nil
}

// newProxy forwards every request to upstream and counts it; GET /-/counts
// answers with the counts.
func newProxy(upstream *url.URL) http.Handler {
	c := newCounter()
	rp := link.Forward(upstream)
	rp.ModifyResponse = func(resp *http.Response) error {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.down}
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /-/counts", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(c.snapshot())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.add(r)
		if r.Body != nil {
			r.Body = &countingBody{ReadCloser: r.Body, n: &c.up}
		}
		rp.ServeHTTP(w, r)
	})
	return mux
}
