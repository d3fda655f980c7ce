// Package storeerr is the one frame in which the cloud store drivers
// (s3store, gcsstore, azstore) map their failures to the sentinels of
// package store. Each driver keeps only what is its cloud's own: how it
// reads an error code and an HTTP status off its SDK's errors, its table
// of error codes, the statuses it maps its own way, and the transport
// failures its SDK reports in its own types. The frame does the rest, the
// same way for all three:
//
//   - a done context wins: the error wraps ctx.Err(), never a store
//     sentinel, since cancellation is the caller's doing;
//   - then the cloud's code table, then the statuses every cloud shares
//     (412, 404, 401/403, 408/429/5xx), then the cloud's own statuses of a
//     response without a code; a response nothing maps is no sentinel (a
//     bad request: retrying will not fix it); without a response, a
//     transport failure is store.ErrTransient;
//   - the message names the driver, the operation and the object's URI,
//     and wraps the sentinel and the original error; a replace-if-match
//     write to a missing object matches store.ErrPrecondition as well.
package storeerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/pswap/pswap/store"
)

// Op is a failed operation as its error names it.
type Op struct {
	Driver string // the driver's package name: "s3store", "gcsstore", "azstore"
	Name   string // the operation: "get", "put", "commit block list"
	URI    string // the object's (or the prefix's) URI
	// IfMatch: a replace-if-match write, where a missing object is a lost
	// precondition as well.
	IfMatch bool
}

// Failure is a failed request as a driver reads it off its SDK's error.
type Failure struct {
	Code   string // the cloud's error code; "" for a response without one (a HEAD) or no response
	Status int    // the HTTP status; 0 when no response came
	// Err is the error the result wraps: the SDK's, or a copy of it
	// without what must not be shown (Azure's request URL with a SAS).
	Err error
}

// Rules are one cloud's mapping of failures to the sentinels of package
// store, beside the statuses every cloud shares. The zero value maps by
// the shared statuses and transport failures alone.
type Rules struct {
	// Codes maps the cloud's error codes to sentinels. A code not in it
	// falls through to the status.
	Codes map[string]error
	// NoCode maps the statuses of responses without an error code that
	// the cloud gives its own meaning (S3's 409, GCS's 416), before the
	// shared ones.
	NoCode map[int]error
	// Transport reports the transport failures the SDK reports in its own
	// types, beside the ones IsTransport knows; nil for none.
	Transport func(error) bool
}

// Classify returns the sentinel for f: the code's (Rules.Codes), else the
// status's (Rules.NoCode for a response without a code, then the shared
// statuses: 412 ErrPrecondition, 404 ErrNotFound or with bucket
// ErrBucketNotFound, 401/403 ErrAccessDenied, 408/429/5xx ErrTransient),
// else nil for any other response, else ErrTransient for a transport
// failure; nil when none applies.
func (r Rules) Classify(f Failure, bucket bool) error {
	if s, ok := r.Codes[f.Code]; ok && f.Code != "" {
		return s
	}
	if s, ok := r.NoCode[f.Status]; ok && f.Code == "" {
		return s
	}
	switch st := f.Status; {
	case st == 412:
		return store.ErrPrecondition
	case st == 404 && bucket:
		return store.ErrBucketNotFound
	case st == 404:
		return store.ErrNotFound
	case st == 401 || st == 403:
		return store.ErrAccessDenied
	case st == 408 || st == 429 || st >= 500:
		return store.ErrTransient
	case st != 0 || f.Code != "":
		return nil // a response that retrying will not change
	}
	if IsTransport(f.Err) || (r.Transport != nil && f.Err != nil && r.Transport(f.Err)) {
		return store.ErrTransient
	}
	return nil
}

// Map is the frame: nil for nil; when ctx is done, err named with
// ctx.Err() wrapped instead; else the failure decode reads off err, named
// with the sentinel classify gives it (Wrap).
func Map(ctx context.Context, o Op, err error, decode func(error) Failure, classify func(Failure) error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("%s: %s %s: %w", o.Driver, o.Name, o.URI, ctx.Err())
	}
	f := decode(err)
	return Wrap(o, classify(f), f.Err)
}

// Wrap names err ("<driver>: <op> <uri>: ...") and wraps sentinel (when
// not nil) before it, and for a replace-if-match write of a missing object
// store.ErrPrecondition before that. It is Map without the context and
// the decoding, for failures a driver has read apart (the per-key errors
// of a batch delete).
func Wrap(o Op, sentinel, err error) error {
	switch {
	case sentinel == nil:
		return fmt.Errorf("%s: %s %s: %w", o.Driver, o.Name, o.URI, err)
	case o.IfMatch && errors.Is(sentinel, store.ErrNotFound) && sentinel != store.ErrBucketNotFound:
		return fmt.Errorf("%s: %s %s: %w: %w: %w", o.Driver, o.Name, o.URI, store.ErrPrecondition, sentinel, err)
	default:
		return fmt.Errorf("%s: %s %s: %w: %w", o.Driver, o.Name, o.URI, sentinel, err)
	}
}

// IsTransport reports the failures to send a request or receive a whole
// response that every SDK reports in the standard library's types:
// resets, refused or aborted connections, broken pipes, closed
// connections, timeouts, bodies cut short.
func IsTransport(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed),
		errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &netErr) && netErr.Timeout():
		return true
	}
	return false
}
