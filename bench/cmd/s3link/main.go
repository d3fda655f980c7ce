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
	srv := &http.Server{Handler: link.Proxy(u, *mbps*1e6)}
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
