package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/pswap/pswap/internal/serverclock"
)

// transport is the HTTP round tripper under the SDK (and under the
// credentials' Authorization header): it logs every request at debug level
// and records the server's clock.
type transport struct {
	base  http.RoundTripper
	log   *slog.Logger
	clock *serverClock
}

// RoundTrip logs method, host, path, status and duration: no header, no
// query string (the upload session id of a resumable upload is one), so
// no credential reaches the log.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	if resp != nil {
		t.clock.Observe(resp.Header.Get("Date"), time.Now())
		if resp.StatusCode/100 == 2 {
			for _, b := range requestBuckets(req.URL) {
				t.clock.sawBucket(b)
			}
		}
	}
	if t.log != nil {
		attrs := []slog.Attr{
			slog.String("method", req.Method),
			slog.String("host", req.URL.Host),
			slog.String("path", req.URL.EscapedPath()),
			slog.Duration("took", time.Since(start).Round(time.Millisecond)),
		}
		if resp != nil {
			attrs = append(attrs, slog.Int("status", resp.StatusCode))
		} else {
			attrs = append(attrs, slog.String("status", "no response"))
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		t.log.LogAttrs(req.Context(), slog.LevelDebug, "gcs request", attrs...)
	}
	return resp, err
}

// serverClock remembers the Date header of the most recent response and the
// local monotonic time it arrived at.
type serverClock struct {
	serverclock.Clock
	// seen holds the name of every bucket a request succeeded on, which
	// therefore exists (bucket name → struct{}): the stores on one client
	// (New's, Outer's, each Sibling's) share it, each asking for its own
	// bucket.
	seen sync.Map
	// probe serializes missingBucket's listings: misses at once (a
	// commit reads its pointer and table.json together) share one.
	probe sync.Mutex
}

// bucketSeen reports whether a request on bucket succeeded.
func (c *serverClock) bucketSeen(bucket string) bool {
	_, ok := c.seen.Load(bucket)
	return ok
}

// sawBucket records that a request on bucket succeeded (a read first:
// every successful request comes here, nearly always for a known bucket).
func (c *serverClock) sawBucket(bucket string) {
	if !c.bucketSeen(bucket) {
		c.seen.Store(bucket, struct{}{})
	}
}

// requestBuckets returns the buckets a GCS request names: each one after
// "/b/" in a JSON API path (a rewrite names its source's and its
// destination's), else the first segment of an XML API path
// (/bucket/object). Object names are escaped in both (a slash is %2F),
// so "/b/" is never part of one.
func requestBuckets(u *url.URL) []string {
	p := u.EscapedPath()
	if !strings.Contains(p, "/b/") {
		b, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if b == "" {
			return nil
		}
		return []string{b}
	}
	var out []string
	for {
		_, rest, ok := strings.Cut(p, "/b/")
		if !ok {
			return out
		}
		b, _, _ := strings.Cut(rest, "/")
		if b != "" {
			out = append(out, b)
		}
		p = rest
	}
}

// Now returns the GCS server's current time: the Date header of the most
// recent response plus the local monotonic time elapsed since. When no
// response arrived for over a minute, it lists one object under the root
// to get one (objects.list: the permission the store needs anyway). The
// Date header has one-second resolution and is truncated, so Now may be
// behind the server by up to a second, never ahead.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if t, ok := s.clock.Now(time.Now(), serverclock.MaxAge); ok {
		return t, nil
	}
	it := s.bkt.Objects(ctx, &storage.Query{Prefix: s.root})
	it.PageInfo().MaxSize = 1
	if _, err := it.Next(); err != nil && !errors.Is(err, iterator.Done) {
		return time.Time{}, s.mapError(ctx, opClock, "", err)
	}
	if t, ok := s.clock.Now(time.Now(), serverclock.MaxAge); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("gcsstore: read the clock of %s: no Date header in the response", s.URI(""))
}
