package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/pswap/pswap/store"
)

// op names an operation in error messages and tells the mapping what a
// 404 means for it.
type op struct {
	name string
	// ifMatch: a replace-if-match write, where a missing key is both a
	// lost precondition and a missing object.
	ifMatch bool
	// bucket: an operation on the bucket itself, where 404 means the
	// bucket is missing.
	bucket bool
}

var (
	opGet         = op{name: "get"}
	opRead        = op{name: "read"}
	opStat        = op{name: "stat"}
	opPut         = op{name: "put"}
	opDelete      = op{name: "delete"}
	opDeleteMany  = op{name: "delete objects"}
	opList        = op{name: "list"}
	opListUploads = op{name: "list uploads"}
	opAbortUpload = op{name: "abort upload"}
	opCreateMPU   = op{name: "create multipart upload"}
	opUploadPart  = op{name: "upload part"}
	opCompleteMPU = op{name: "complete multipart upload"}
	opHeadBucket  = op{name: "head bucket", bucket: true}
)

// putOp marks o as conditional on opts.IfMatch.
func putOp(o op, opts store.PutOptions) op {
	o.ifMatch = opts.IfMatch != ""
	return o
}

// mapError is the one place where S3 and transport failures become the
// sentinels of package store. The result names the operation and the
// object's URI and wraps both the sentinel and the original error. When ctx
// is done, the result wraps ctx.Err() instead: cancellation is the caller's
// doing, not a store failure.
func (s *Store) mapError(ctx context.Context, o op, key string, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("s3store: %s %s: %w", o.name, s.URI(key), ctx.Err())
	}
	code, status := "", 0
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) {
		status = respErr.HTTPStatusCode()
	}
	return s.mapCode(o, key, code, status, err)
}

// mapCode wraps err with the sentinel that classify picks for it.
func (s *Store) mapCode(o op, key, code string, status int, err error) error {
	where := s.URI(key)
	sentinel := classify(o, code, status, err)
	switch {
	case sentinel == nil:
		return fmt.Errorf("s3store: %s %s: %w", o.name, where, err)
	case errors.Is(sentinel, store.ErrNotFound) && o.ifMatch:
		return fmt.Errorf("s3store: %s %s: %w: %w: %w", o.name, where, store.ErrPrecondition, sentinel, err)
	default:
		return fmt.Errorf("s3store: %s %s: %w: %w", o.name, where, sentinel, err)
	}
}

// classify returns the store sentinel for an S3 error code (preferred), an
// HTTP status (for responses without an error body, such as HEAD), or a
// transport failure; nil when none applies (a bad request, say).
func classify(o op, code string, status int, err error) error {
	switch code {
	case "":
	case "PreconditionFailed":
		return store.ErrPrecondition
	case "NotFound":
		if o.bucket {
			return store.ErrBucketNotFound
		}
		return store.ErrNotFound
	case "NoSuchKey", "NoSuchUpload":
		return store.ErrNotFound
	case "NoSuchBucket":
		return store.ErrBucketNotFound
	case "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch",
		"AllAccessDisabled", "AccountProblem", "InvalidToken", "ExpiredToken",
		"InvalidSecurity", "Unauthorized":
		return store.ErrAccessDenied
	case "ConditionalRequestConflict", "OperationAborted", "SlowDown", "Throttling",
		"ThrottlingException", "RequestThrottled", "TooManyRequests", "RequestLimitExceeded",
		"InternalError", "InternalFailure", "ServiceUnavailable", "RequestTimeout",
		"RequestTimeoutException", "IncompleteBody", "BadDigest",
		"XMinioServerNotInitialized", "XMinioReadQuorum", "XMinioWriteQuorum":
		return store.ErrTransient
	}
	switch {
	case status == 412:
		return store.ErrPrecondition
	case status == 404 && o.bucket:
		return store.ErrBucketNotFound
	case status == 404:
		return store.ErrNotFound
	case status == 401 || status == 403:
		return store.ErrAccessDenied
	case status == 429 || status >= 500 || (status == 409 && code == ""):
		return store.ErrTransient
	case status != 0 || code != "":
		return nil // an API error that retrying will not fix
	}
	if isTransportError(err) {
		return store.ErrTransient
	}
	return nil
}

// isTransportError reports failures to send a request or receive a whole
// response: resets, refused connections, timeouts, truncated bodies.
func isTransportError(err error) bool {
	if err == nil {
		return false
	}
	var sendErr *smithyhttp.RequestSendError
	var quotaErr *ratelimit.QuotaExceededError
	var netErr net.Error
	switch {
	case errors.As(err, &sendErr), errors.As(err, &quotaErr):
		return true
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
