package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/pswap/pswap/store"
)

// op names an operation in error messages and tells the mapping what a
// 404 means for it.
type op struct {
	name string
	// ifMatch: a replace-if-match write, where a missing key is both a
	// lost precondition and a missing object.
	ifMatch bool
	// write: a 404 on a write or a listing names a missing bucket (the
	// object it targets need not exist).
	write bool
}

var (
	opGet    = op{name: "get"}
	opRead   = op{name: "read"}
	opStat   = op{name: "stat"}
	opPut    = op{name: "put", write: true}
	opWrite  = op{name: "write", write: true}
	opDelete = op{name: "delete"}
	opList   = op{name: "list", write: true}
	opCopy   = op{name: "copy"}
	opClock  = op{name: "read the clock of", write: true}
)

// putOp marks o as conditional on opts.IfMatch.
func putOp(o op, opts store.PutOptions) op {
	o.ifMatch = opts.IfMatch != ""
	return o
}

// mapError is the one place where GCS and transport failures become the
// sentinels of package store. The result names the operation and the
// object's URI and wraps both the sentinel and the original error. When ctx
// is done, the result wraps ctx.Err() instead.
func (s *Store) mapError(ctx context.Context, o op, key string, err error) error {
	if err == nil {
		return nil
	}
	where := s.URI(key)
	if ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("gcsstore: %s %s: %w", o.name, where, ctx.Err())
	}
	sentinel := classify(o, err)
	switch {
	case sentinel == nil:
		return fmt.Errorf("gcsstore: %s %s: %w", o.name, where, err)
	case errors.Is(sentinel, store.ErrNotFound) && o.ifMatch:
		return fmt.Errorf("gcsstore: %s %s: %w: %w: %w", o.name, where, store.ErrPrecondition, sentinel, err)
	default:
		return fmt.Errorf("gcsstore: %s %s: %w: %w", o.name, where, sentinel, err)
	}
}

// classify returns the store sentinel for a GCS error (the SDK's own
// sentinels, then the HTTP status of a googleapi.Error), or a transport
// failure; nil when none applies (a bad request, say).
func classify(o op, err error) error {
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		return store.ErrBucketNotFound
	case errors.Is(err, storage.ErrObjectNotExist):
		if o.write {
			return store.ErrBucketNotFound
		}
		return store.ErrNotFound
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return classifyStatus(o, gerr.Code, gerr.Message)
	}
	if isTransportError(err) {
		return store.ErrTransient
	}
	return nil
}

// classifyStatus maps an HTTP status of the JSON or XML API
// (https://cloud.google.com/storage/docs/json_api/v1/status-codes).
func classifyStatus(o op, code int, msg string) error {
	switch {
	case code == 412:
		return store.ErrPrecondition
	case code == 404 && (o.write || strings.Contains(strings.ToLower(msg), "bucket")):
		return store.ErrBucketNotFound
	case code == 404:
		return store.ErrNotFound
	case code == 416:
		return store.ErrInvalidRange
	case code == 401 || code == 403:
		return store.ErrAccessDenied
	case code == 408 || code == 429 || code >= 500:
		// 429: the rate of writes to one object (about one a second) or of
		// the project; GCS documents retries with backoff for all of them.
		return store.ErrTransient
	case code == 409:
		// A concurrent mutation of the same object (no rewrite or
		// conditional request loses data over it): retried.
		return store.ErrTransient
	}
	return nil
}

// isTransportError reports failures to send a request or receive a whole
// response: resets, refused connections, timeouts, truncated bodies.
func isTransportError(err error) bool {
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed),
		errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &urlErr):
		return true
	case errors.As(err, &netErr) && netErr.Timeout():
		return true
	}
	return false
}
