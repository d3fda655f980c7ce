package gcsstore

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/pswap/pswap/internal/storeerr"
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
// sentinels of package store, in the frame the drivers share
// (internal/storeerr): the result names the operation and the object's
// URI and wraps both the sentinel and the original error. When ctx is
// done, the result wraps ctx.Err() instead.
func (s *Store) mapError(ctx context.Context, o op, key string, err error) error {
	op := storeerr.Op{Driver: "gcsstore", Name: o.name, URI: s.URI(key), IfMatch: o.ifMatch}
	return storeerr.Map(ctx, op, err, func(err error) storeerr.Failure { return storeerr.Failure{Err: err} },
		func(f storeerr.Failure) error { return classify(o, f.Err) })
}

// rules are GCS's beside the shared statuses (it has no error codes the
// SDK exposes: the JSON API's statuses decide,
// https://cloud.google.com/storage/docs/json_api/v1/status-codes).
var rules = storeerr.Rules{
	NoCode: map[int]error{
		416: store.ErrInvalidRange,
		// A concurrent mutation of the same object (no rewrite or
		// conditional request loses data over it): retried.
		409: store.ErrTransient,
		// 408, 429 (the rate of writes to one object, about one a
		// second, or of the project) and 5xx are the shared statuses'
		// transient ones: GCS documents retries with backoff for all.
	},
	Transport: func(err error) bool {
		var urlErr *url.Error
		return errors.As(err, &urlErr)
	},
}

// classify returns the store sentinel for a GCS error (the SDK's own
// sentinels, then the HTTP status of a googleapi.Error), or a transport
// failure; nil when none applies (a bad request, say). A 404 names the
// bucket on a write or a listing (the object it targets need not exist),
// or when its message says so.
func classify(o op, err error) error {
	f := storeerr.Failure{Err: err}
	bucket := o.write
	var gerr *googleapi.Error
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		f.Status, bucket = 404, true
	case errors.Is(err, storage.ErrObjectNotExist):
		f.Status = 404
	case errors.As(err, &gerr):
		f.Status = gerr.Code
		bucket = bucket || (gerr.Code == 404 && strings.Contains(strings.ToLower(gerr.Message), "bucket"))
	}
	return rules.Classify(f, bucket)
}
