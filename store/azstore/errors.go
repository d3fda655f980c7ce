package azstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/pswap/pswap/internal/storeerr"
	"github.com/pswap/pswap/store"
)

// op names an operation in error messages and tells the mapping what a
// 404 means for it.
type op struct {
	name string
	// ifMatch: a replace-if-match write, where a missing blob is both a
	// lost precondition and a missing object.
	ifMatch bool
	// container: an operation on the container itself.
	container bool
}

var (
	opGet         = op{name: "get"}
	opRead        = op{name: "read"}
	opStat        = op{name: "stat"}
	opPut         = op{name: "put"}
	opDelete      = op{name: "delete"}
	opDeleteMany  = op{name: "delete blobs"}
	opList        = op{name: "list"}
	opStageBlock  = op{name: "stage block"}
	opCommitList  = op{name: "commit block list"}
	opGetRange    = op{name: "get range"}
	opCopy        = op{name: "copy"}
	opContainer   = op{name: "container properties", container: true}
	opCopyPending = op{name: "wait for copy"}
)

// putOp marks o as conditional on opts.IfMatch.
func putOp(o op, opts store.PutOptions) op {
	o.ifMatch = opts.IfMatch != ""
	return o
}

// mapError is the one place where Azure and transport failures become the
// sentinels of package store, in the frame the drivers share
// (internal/storeerr): the result names the operation and the blob's URI
// and wraps both the sentinel and the original error. When ctx is done, it
// wraps ctx.Err() instead.
func (s *Store) mapError(ctx context.Context, o op, key string, err error) error {
	return storeerr.Map(ctx, s.errOp(o, key), err, decode, func(f storeerr.Failure) error {
		return classify(o, f.Code, f.Status, f.Err)
	})
}

// decode reads the Azure error code and the HTTP status off an SDK error.
// The SDK's message carries the request URL, and with a SAS its query
// string is the credential: the result keeps only code and status, and a
// transport error's URL loses its query.
func decode(err error) storeerr.Failure {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return storeerr.Failure{Code: re.ErrorCode, Status: re.StatusCode, Err: &responseError{code: re.ErrorCode, status: re.StatusCode}}
	}
	return storeerr.Failure{Err: scrubURL(err)}
}

func (s *Store) errOp(o op, key string) storeerr.Op {
	return storeerr.Op{Driver: "azstore", Name: o.name, URI: s.URI(key), IfMatch: o.ifMatch}
}

// responseError is an Azure error response without the SDK's message,
// which quotes the request URL (a SAS token in its query) and headers.
type responseError struct {
	code   string
	status int
}

func (e *responseError) Error() string {
	if e.code == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("%s (HTTP %d)", e.code, e.status)
}

// Code returns the Azure error code (x-ms-error-code), "" for a response without one.
func (e *responseError) Code() string { return e.code }

// StatusCode returns the HTTP status of the response.
func (e *responseError) StatusCode() int { return e.status }

// codes is Azure's error code table; containerCodes the same for an
// operation on the container itself, where ResourceNotFound names the
// container. CannotVerifyCopySource is left to its status (404: the
// source is missing).
// Codes: https://learn.microsoft.com/rest/api/storageservices/blob-service-error-codes
var codes, containerCodes = func() (map[string]error, map[string]error) {
	c := map[string]error{
		"ConditionNotMet":       store.ErrPrecondition,
		"BlobAlreadyExists":     store.ErrPrecondition,
		"TargetConditionNotMet": store.ErrPrecondition,
		"SourceConditionNotMet": store.ErrPrecondition,
		"BlobNotFound":          store.ErrNotFound,
		"ContainerNotFound":     store.ErrBucketNotFound,
		"ContainerBeingDeleted": store.ErrBucketNotFound,
		"ResourceNotFound":      store.ErrNotFound,
	}
	for _, code := range []string{"AuthenticationFailed", "AuthorizationFailure", "AuthorizationPermissionMismatch",
		"AuthorizationResourceTypeMismatch", "AuthorizationServiceMismatch",
		"AuthorizationSourceIPMismatch", "AuthorizationProtocolMismatch",
		"InsufficientAccountPermissions", "AccountIsDisabled", "KeyBasedAuthenticationNotPermitted",
		"NoAuthenticationInformation", "InvalidAuthenticationInfo"} {
		c[code] = store.ErrAccessDenied
	}
	for _, code := range []string{"ServerBusy", "InternalError", "OperationTimedOut", "IngressOverAccountLimit",
		"EgressOverAccountLimit", "TpsOverAccountLimit", "OperationNotAllowedOnRecoveringContainer"} {
		c[code] = store.ErrTransient
	}
	b := maps.Clone(c)
	b["ResourceNotFound"] = store.ErrBucketNotFound
	return c, b
}()

// rules are Azure's beside the shared statuses: every net.Error and a
// body that ends early (io.EOF from the SDK's retry reader) are transport
// failures.
var rules = storeerr.Rules{Codes: codes, Transport: func(err error) bool {
	var netErr net.Error
	return errors.Is(err, io.EOF) || errors.As(err, &netErr)
}}

// classify returns the store sentinel for an Azure error code (preferred),
// an HTTP status (for responses without an error body, such as HEAD), or a
// transport failure; nil when none applies (a bad request, say).
func classify(o op, code string, status int, err error) error {
	r := rules
	if o.container {
		r.Codes = containerCodes
	}
	return r.Classify(storeerr.Failure{Code: code, Status: status, Err: err}, o.container)
}

// scrubURL drops the query string (a SAS token is one) from the URL that a
// transport error quotes, keeping the error it wraps for errors.Is.
func scrubURL(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	u, _, _ := strings.Cut(ue.URL, "?")
	return &url.Error{Op: ue.Op, URL: u, Err: ue.Err}
}
