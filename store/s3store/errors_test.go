package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/pswap/pswap/store"
)

// apiError builds the error chain the SDK returns for an S3 error response:
// OperationError > ResponseError (HTTP status) > APIError (code).
func apiError(opName string, status int, apiErr error) error {
	return &smithy.OperationError{
		ServiceID:     "S3",
		OperationName: opName,
		Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
				Err:      apiErr,
			},
			RequestID: "req-1",
		},
	}
}

func generic(code string) error {
	return &smithy.GenericAPIError{Code: code, Message: "message for " + code}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

func testStore(t *testing.T) *Store {
	t.Helper()
	s, err := New(context.Background(), "bkt", "root/pre", Options{
		Endpoint: "http://127.0.0.1:1", Region: "us-east-1",
		Credentials: staticCreds("AKIDEXAMPLE", "secret-never-shown"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMapError(t *testing.T) {
	t.Parallel()
	s := testStore(t)
	ctx := context.Background()
	ifMatch := putOp(opPut, store.PutOptions{IfMatch: `"abc"`})
	for _, tc := range []struct {
		name string
		op   op
		err  error
		want []error // every sentinel the result must match
		not  []error // sentinels it must not match
	}{
		{"precondition", opPut, apiError("PutObject", 412, generic("PreconditionFailed")), []error{store.ErrPrecondition}, []error{store.ErrNotFound, store.ErrTransient}},
		{"precondition by status only", opPut, apiError("PutObject", 412, generic("")), []error{store.ErrPrecondition}, nil},
		{"conditional conflict", opPut, apiError("PutObject", 409, generic("ConditionalRequestConflict")), []error{store.ErrTransient}, []error{store.ErrPrecondition}},
		{"slow down", opPut, apiError("PutObject", 503, generic("SlowDown")), []error{store.ErrTransient}, nil},
		{"internal error", opGet, apiError("GetObject", 500, generic("InternalError")), []error{store.ErrTransient}, nil},
		{"service unavailable", opGet, apiError("GetObject", 503, generic("ServiceUnavailable")), []error{store.ErrTransient}, nil},
		{"request timeout", opPut, apiError("PutObject", 400, generic("RequestTimeout")), []error{store.ErrTransient}, nil},
		{"5xx without code", opStat, apiError("HeadObject", 502, generic("")), []error{store.ErrTransient}, nil},
		{"429", opStat, apiError("HeadObject", 429, generic("")), []error{store.ErrTransient}, nil},
		{"no such key", opGet, apiError("GetObject", 404, &types.NoSuchKey{}), []error{store.ErrNotFound}, []error{store.ErrPrecondition}},
		{"head not found", opStat, apiError("HeadObject", 404, &types.NotFound{}), []error{store.ErrNotFound}, []error{store.ErrBucketNotFound}},
		{"if-match on missing key", ifMatch, apiError("PutObject", 404, generic("NoSuchKey")), []error{store.ErrNotFound, store.ErrPrecondition}, []error{store.ErrTransient}},
		{"if-match stale", ifMatch, apiError("PutObject", 412, generic("PreconditionFailed")), []error{store.ErrPrecondition}, []error{store.ErrNotFound}},
		{"no such bucket", opGet, apiError("GetObject", 404, &types.NoSuchBucket{}), []error{store.ErrBucketNotFound}, []error{store.ErrNotFound}},
		{"head bucket 404", opHeadBucket, apiError("HeadBucket", 404, &types.NotFound{}), []error{store.ErrBucketNotFound}, []error{store.ErrNotFound}},
		{"no such upload", opAbortUpload, apiError("AbortMultipartUpload", 404, generic("NoSuchUpload")), []error{store.ErrNotFound}, nil},
		{"access denied", opGet, apiError("GetObject", 403, generic("AccessDenied")), []error{store.ErrAccessDenied}, []error{store.ErrTransient}},
		{"bad key id", opPut, apiError("PutObject", 403, generic("InvalidAccessKeyId")), []error{store.ErrAccessDenied}, nil},
		{"bad signature", opPut, apiError("PutObject", 403, generic("SignatureDoesNotMatch")), []error{store.ErrAccessDenied}, nil},
		{"head forbidden", opStat, apiError("HeadObject", 403, generic("Forbidden")), []error{store.ErrAccessDenied}, nil},
		{"403 without code", opStat, apiError("HeadObject", 403, generic("")), []error{store.ErrAccessDenied}, nil},
		{"bad request", opPut, apiError("PutObject", 400, generic("InvalidArgument")), nil, []error{store.ErrTransient, store.ErrNotFound, store.ErrPrecondition, store.ErrAccessDenied}},
		{"bucket not empty", opDelete, apiError("DeleteBucket", 409, generic("BucketNotEmpty")), nil, []error{store.ErrTransient}},
		{"connection reset", opPut, &smithy.OperationError{Err: &smithyhttp.RequestSendError{Err: syscall.ECONNRESET}}, []error{store.ErrTransient}, nil},
		{"connection refused", opGet, fmt.Errorf("dial: %w", syscall.ECONNREFUSED), []error{store.ErrTransient}, nil},
		{"truncated body", opRead, io.ErrUnexpectedEOF, []error{store.ErrTransient}, nil},
		{"net timeout", opGet, &net.OpError{Op: "read", Err: timeoutErr{}}, []error{store.ErrTransient}, nil},
		{"retry quota", opPut, &ratelimit.QuotaExceededError{Available: 0, Requested: 5}, []error{store.ErrTransient}, nil},
		{"plain error", opPut, errors.New("something odd"), nil, []error{store.ErrTransient, store.ErrNotFound}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.mapError(ctx, tc.op, "dt=1/k", tc.err)
			for _, w := range tc.want {
				if !errors.Is(got, w) {
					t.Errorf("mapError = %v; want it to match %v", got, w)
				}
			}
			for _, n := range tc.not {
				if errors.Is(got, n) {
					t.Errorf("mapError = %v; must not match %v", got, n)
				}
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("mapError = %v; does not wrap the original error", got)
			}
			msg := got.Error()
			for _, part := range []string{tc.op.name, "s3://bkt/root/pre/dt=1/k"} {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q does not name %q", msg, part)
				}
			}
			if strings.Contains(msg, "secret-never-shown") {
				t.Errorf("message %q contains the secret", msg)
			}
		})
	}
}

func TestMapErrorCancelled(t *testing.T) {
	t.Parallel()
	s := testStore(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), -1)
	defer cancel2()
	for _, tc := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		// Whatever the SDK reports, a done context wins.
		got := s.mapError(tc.ctx, opPut, "k", apiError("PutObject", 500, generic("InternalError")))
		if !errors.Is(got, tc.want) {
			t.Errorf("mapError with done ctx = %v, want %v", got, tc.want)
		}
		if errors.Is(got, store.ErrTransient) {
			t.Errorf("mapError with done ctx = %v must not be transient", got)
		}
	}
	if err := s.mapError(context.Background(), opPut, "k", nil); err != nil {
		t.Errorf("mapError(nil) = %v", err)
	}
}

// TestClassifyCodes checks that every code the mapping names lands on the
// sentinel its group promises, whatever the HTTP status.
func TestClassifyCodes(t *testing.T) {
	t.Parallel()
	groups := map[error][]string{
		store.ErrPrecondition:   {"PreconditionFailed"},
		store.ErrNotFound:       {"NoSuchKey", "NotFound", "NoSuchUpload"},
		store.ErrBucketNotFound: {"NoSuchBucket"},
		store.ErrAccessDenied:   {"AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken"},
		store.ErrTransient:      {"ConditionalRequestConflict", "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "OperationAborted"},
	}
	for want, codes := range groups {
		for _, code := range codes {
			for _, status := range []int{0, 200, 400, 404, 500} {
				if got := classify(opGet, code, status, nil); got != want {
					t.Errorf("classify(%q, %d) = %v, want %v", code, status, got, want)
				}
			}
		}
	}
}
