package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/bench/internal/link"
)

// A request trace (-trace FILE): a logging reverse proxy in front of the
// store, so that every request of a measurement can be accounted for by
// what it touches (the lease, a fold marker, a metadata version, a
// pointer, ...) and by its answer (200, 404, 412). Each line of the file is
//
//	measurement  ms-since-start  method  class  status  ms-taken  path?query
//
// and the summary printed after each measurement counts the requests by
// class, method and status.

// tracer is the logging proxy.
type tracer struct {
	mu    sync.Mutex
	w     *bufio.Writer
	f     *os.File
	tag   string    // the current measurement
	start time.Time // its start
	// counts by "class method status", for the current measurement.
	counts map[string]int
}

// startTracer starts the proxy in front of upstream (an http URL) and
// returns its endpoint.
func startTracer(path, upstream string) (*tracer, string, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		return nil, "", fmt.Errorf("-trace: endpoint %q", upstream)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, "", err
	}
	t := &tracer{f: f, w: bufio.NewWriter(f), counts: map[string]int{}, start: time.Now()}
	rp := link.Forward(u)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Close()
		return nil, "", err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: 200}
		rp.ServeHTTP(sw, r)
		t.log(at, r, sw.status, time.Since(at))
	})}
	go func() { _ = srv.Serve(ln) }()
	return t, "http://" + ln.Addr().String(), nil
}

// begin starts a measurement's part of the trace.
func (t *tracer) begin(tag string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tag, t.start, t.counts = tag, time.Now(), map[string]int{}
}

// current is the current measurement's tag.
func (t *tracer) current() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tag
}

// summary returns the current measurement's counts, most first.
func (t *tracer) summary() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = t.w.Flush()
	keys := make([]string, 0, len(t.counts))
	for k := range t.counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := t.counts[b] - t.counts[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "      %5d  %s\n", t.counts[k], k)
	}
	return b.String()
}

func (t *tracer) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = t.w.Flush()
	_ = t.f.Close()
}

func (t *tracer) log(at time.Time, r *http.Request, status int, took time.Duration) {
	class := classify(r.Method, r.URL.Path, r.URL.Query())
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[fmt.Sprintf("%-14s %-6s %d", class, r.Method, status)]++
	fmt.Fprintf(t.w, "%s\t%d\t%s\t%s\t%d\t%d\t%s\n", t.tag, at.Sub(t.start).Milliseconds(), r.Method, class, status, took.Milliseconds(), r.URL.RequestURI())
}

// classify names what a request touches, by its key (path style: the
// first segment is the bucket).
func classify(method, path string, q url.Values) string {
	key := path
	if i := strings.IndexByte(strings.TrimPrefix(path, "/"), '/'); i >= 0 {
		key = path[i+2:]
	} else {
		key = ""
	}
	if key == "" {
		key = q.Get("prefix")
		if method == http.MethodPost && q.Has("delete") {
			return "delete-batch"
		}
		if key == "" {
			return "bucket"
		}
		return "list:" + classify(method, "/b/"+key, nil)
	}
	switch {
	case strings.HasSuffix(key, "_pswap/publish.lease"):
		return "lease"
	case strings.Contains(key, "_pswap/fold/"):
		return "fold-marker"
	case strings.Contains(key, "version-hint"):
		return "hint"
	case strings.HasSuffix(key, ".metadata.json"):
		return "metadata"
	case strings.Contains(key, "/metadata/snap-"):
		return "manifest-list"
	case strings.Contains(key, "/metadata/") && strings.HasSuffix(key, ".avro"):
		return "manifest-avro"
	case strings.HasSuffix(key, "/metadata/") || strings.HasSuffix(key, "/metadata"):
		return "metadata-dir"
	case strings.HasSuffix(key, "pointer.json"):
		return "pointer"
	case strings.Contains(key, "/manifests/"):
		return "gen-manifest"
	case strings.Contains(key, "/staged/"):
		return "staged"
	case strings.Contains(key, "/attempts/"):
		return "attempt"
	case strings.Contains(key, "/runs/"):
		return "run"
	case strings.Contains(key, "/gen/"):
		return "data"
	case strings.HasSuffix(key, "table.json"):
		return "table.json"
	}
	return "other:" + key[strings.LastIndexByte(key, '/')+1:]
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
