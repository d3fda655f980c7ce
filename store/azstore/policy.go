package azstore

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/pswap/pswap/internal/serverclock"
)

// serverClock is a per-attempt pipeline policy that remembers the Date
// header of the most recent response and the local monotonic time it
// arrived at.
type serverClock struct{ serverclock.Clock }

// Do implements policy.Policy.
func (c *serverClock) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if resp != nil {
		c.Observe(resp.Header.Get("Date"), time.Now())
	}
	return resp, err
}

var errNoDate = errors.New("server response has no valid Date header")

// Now returns the storage service's current time: the Date header of the
// most recent response plus the local monotonic time elapsed since. When
// no response arrived for over a minute, it asks for the container's
// properties to get one. The Date header has one-second resolution and is
// truncated, so Now may be behind the server by up to a second, never
// ahead: ages computed from it err on the young (safe) side.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if t, ok := s.clock.Now(time.Now(), serverclock.MaxAge); ok {
		return t, nil
	}
	if _, err := s.cc.GetProperties(ctx, nil); err != nil {
		return time.Time{}, s.mapError(ctx, opContainer, "", err)
	}
	if t, ok := s.clock.Now(time.Now(), serverclock.MaxAge); ok {
		return t, nil
	}
	return time.Time{}, s.mapError(ctx, opContainer, "", errNoDate)
}

type attemptKey struct{}

// attemptCounter is a per-call policy that gives the request log its
// attempt numbers.
type attemptCounter struct{}

// Do implements policy.Policy.
func (attemptCounter) Do(req *policy.Request) (*http.Response, error) {
	return req.WithContext(context.WithValue(req.Raw().Context(), attemptKey{}, new(int))).Next()
}

// requestLogger logs every attempt of every request at debug level: the
// operation, method, container-relative path, status, attempt number and
// duration. It logs no header and no query string, so neither signatures
// nor SAS tokens reach the log.
type requestLogger struct{ log *slog.Logger }

// Do implements policy.Policy.
func (l requestLogger) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	attempt := 1
	if n, ok := raw.Context().Value(attemptKey{}).(*int); ok {
		*n++
		attempt = *n
	}
	start := time.Now()
	resp, err := req.Next()
	attrs := []slog.Attr{
		slog.String("op", operation(raw)),
		slog.Int("attempt", attempt),
		slog.Duration("took", time.Since(start).Round(time.Millisecond)),
		slog.String("method", raw.Method),
		slog.String("host", raw.URL.Host),
		slog.String("path", raw.URL.EscapedPath()),
	}
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
		if code := resp.Header.Get("x-ms-error-code"); code != "" {
			attrs = append(attrs, slog.String("code", code))
		}
	} else {
		attrs = append(attrs, slog.String("status", "no response"))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", scrubURL(err).Error()))
	}
	l.log.LogAttrs(raw.Context(), slog.LevelDebug, "azure request", attrs...)
	return resp, err
}

// operation names a Blob service request from its method and its comp and
// restype parameters (the query's values are never logged).
func operation(r *http.Request) string {
	q := r.URL.Query()
	comp, restype := q.Get("comp"), q.Get("restype")
	switch {
	case r.Method == http.MethodPut && comp == "block":
		return "PutBlock"
	case r.Method == http.MethodPut && comp == "blocklist":
		return "PutBlockList"
	case r.Method == http.MethodPut && hasHeader(r.Header, "x-ms-copy-source"):
		return "CopyBlob"
	case r.Method == http.MethodPut && comp == "":
		return "PutBlob"
	case r.Method == http.MethodGet && comp == "list":
		return "ListBlobs"
	case r.Method == http.MethodPost && comp == "batch":
		return "BlobBatch"
	case r.Method == http.MethodGet && restype == "container", r.Method == http.MethodHead && restype == "container":
		return "GetContainerProperties"
	case r.Method == http.MethodGet:
		return "GetBlob"
	case r.Method == http.MethodHead:
		return "GetBlobProperties"
	case r.Method == http.MethodDelete:
		return "DeleteBlob"
	}
	return r.Method + " " + strings.TrimSpace(comp)
}

// hasHeader reports whether h has the header name: the SDK sets its x-ms-*
// headers in lower case, which http.Header.Get (canonical keys) misses.
func hasHeader(h http.Header, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}
