package azstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

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
// sentinels of package store. The result names the operation and the
// blob's URI and wraps both the sentinel and the original error. When ctx
// is done, it wraps ctx.Err() instead.
func (s *Store) mapError(ctx context.Context, o op, key string, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("azstore: %s %s: %w", o.name, s.URI(key), ctx.Err())
	}
	code, status := "", 0
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		code, status = re.ErrorCode, re.StatusCode
		// The SDK's message carries the request URL, and with a SAS its
		// query string is the credential: keep only code and status.
		err = &responseError{code: code, status: status}
	} else {
		err = scrubURL(err)
	}
	return s.mapCode(o, key, code, status, err)
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

// mapCode wraps err with the sentinel classify picks for it.
func (s *Store) mapCode(o op, key, code string, status int, err error) error {
	where := s.URI(key)
	sentinel := classify(o, code, status, err)
	switch {
	case sentinel == nil:
		return fmt.Errorf("azstore: %s %s: %w", o.name, where, err)
	case errors.Is(sentinel, store.ErrNotFound) && o.ifMatch && sentinel != store.ErrBucketNotFound:
		return fmt.Errorf("azstore: %s %s: %w: %w: %w", o.name, where, store.ErrPrecondition, sentinel, err)
	default:
		return fmt.Errorf("azstore: %s %s: %w: %w", o.name, where, sentinel, err)
	}
}

// classify returns the store sentinel for an Azure error code (preferred),
// an HTTP status (for responses without an error body, such as HEAD), or a
// transport failure; nil when none applies (a bad request, say).
// Codes: https://learn.microsoft.com/rest/api/storageservices/blob-service-error-codes
func classify(o op, code string, status int, err error) error {
	switch code {
	case "":
	case "ConditionNotMet", "BlobAlreadyExists", "TargetConditionNotMet", "SourceConditionNotMet":
		return store.ErrPrecondition
	case "BlobNotFound", "CannotVerifyCopySource":
		if code == "CannotVerifyCopySource" && status != 404 {
			break
		}
		return store.ErrNotFound
	case "ContainerNotFound", "ContainerBeingDeleted", "ResourceNotFound":
		if code == "ResourceNotFound" && !o.container {
			return store.ErrNotFound
		}
		return store.ErrBucketNotFound
	case "AuthenticationFailed", "AuthorizationFailure", "AuthorizationPermissionMismatch",
		"AuthorizationResourceTypeMismatch", "AuthorizationServiceMismatch",
		"AuthorizationSourceIPMismatch", "AuthorizationProtocolMismatch",
		"InsufficientAccountPermissions", "AccountIsDisabled", "KeyBasedAuthenticationNotPermitted",
		"NoAuthenticationInformation", "InvalidAuthenticationInfo":
		return store.ErrAccessDenied
	case "ServerBusy", "InternalError", "OperationTimedOut", "IngressOverAccountLimit",
		"EgressOverAccountLimit", "TpsOverAccountLimit", "OperationNotAllowedOnRecoveringContainer":
		return store.ErrTransient
	}
	switch {
	case status == 412:
		return store.ErrPrecondition
	case status == 404 && o.container:
		return store.ErrBucketNotFound
	case status == 404:
		return store.ErrNotFound
	case status == 401 || status == 403:
		return store.ErrAccessDenied
	case status == 408 || status == 429 || status >= 500:
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
	var netErr net.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed),
		errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &netErr):
		return true
	}
	return false
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
