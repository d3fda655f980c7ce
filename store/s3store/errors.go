package s3store

import (
	"context"
	"errors"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

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
// sentinels of package store, in the frame the drivers share
// (internal/storeerr): the result names the operation and the object's
// URI and wraps both the sentinel and the original error; when ctx is
// done, it wraps ctx.Err() instead: cancellation is the caller's doing,
// not a store failure.
func (s *Store) mapError(ctx context.Context, o op, key string, err error) error {
	return storeerr.Map(ctx, s.errOp(o, key), err, decode, func(f storeerr.Failure) error {
		return classify(o, f.Code, f.Status, f.Err)
	})
}

// decode reads the S3 error code and the HTTP status off an SDK error.
func decode(err error) storeerr.Failure {
	f := storeerr.Failure{Err: err}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		f.Code = apiErr.ErrorCode()
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) {
		f.Status = respErr.HTTPStatusCode()
	}
	return f
}

func (s *Store) errOp(o op, key string) storeerr.Op {
	return storeerr.Op{Driver: "s3store", Name: o.name, URI: s.URI(key), IfMatch: o.ifMatch}
}

// mapCode wraps err with the sentinel that classify picks for it.
func (s *Store) mapCode(o op, key, code string, status int, err error) error {
	return storeerr.Wrap(s.errOp(o, key), classify(o, code, status, err), err)
}

// codes is S3's error code table; bucketCodes the same for an operation
// on the bucket itself, where the SDK's "NotFound" (a HEAD's 404) names
// the bucket.
var codes, bucketCodes = func() (map[string]error, map[string]error) {
	c := map[string]error{
		"PreconditionFailed": store.ErrPrecondition,
		"NotFound":           store.ErrNotFound,
		"NoSuchKey":          store.ErrNotFound,
		"NoSuchUpload":       store.ErrNotFound,
		"NoSuchBucket":       store.ErrBucketNotFound,
	}
	for _, code := range []string{"AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch",
		"AllAccessDisabled", "AccountProblem", "InvalidToken", "ExpiredToken",
		"InvalidSecurity", "Unauthorized"} {
		c[code] = store.ErrAccessDenied
	}
	for _, code := range []string{"ConditionalRequestConflict", "OperationAborted", "SlowDown", "Throttling",
		"ThrottlingException", "RequestThrottled", "TooManyRequests", "RequestLimitExceeded",
		"InternalError", "InternalFailure", "ServiceUnavailable", "RequestTimeout",
		"RequestTimeoutException", "IncompleteBody", "BadDigest",
		"XMinioServerNotInitialized", "XMinioReadQuorum", "XMinioWriteQuorum"} {
		c[code] = store.ErrTransient
	}
	b := maps.Clone(c)
	b["NotFound"] = store.ErrBucketNotFound
	return c, b
}()

// rules are S3's beside the shared statuses: a 409 without a code (a
// conditional write's conflict) is retried, and the SDK's send and retry
// quota failures are transport failures.
var rules = storeerr.Rules{Codes: codes, NoCode: map[int]error{409: store.ErrTransient}, Transport: isSDKTransportError}

// classify returns the store sentinel for an S3 error code (preferred), an
// HTTP status (for responses without an error body, such as HEAD), or a
// transport failure; nil when none applies (a bad request, say).
func classify(o op, code string, status int, err error) error {
	r := rules
	if o.bucket {
		r.Codes = bucketCodes
	}
	return r.Classify(storeerr.Failure{Code: code, Status: status, Err: err}, o.bucket)
}

// isSDKTransportError reports the SDK's own failures to send a request,
// beside the ones storeerr.IsTransport knows.
func isSDKTransportError(err error) bool {
	var sendErr *smithyhttp.RequestSendError
	var quotaErr *ratelimit.QuotaExceededError
	return errors.As(err, &sendErr) || errors.As(err, &quotaErr)
}
