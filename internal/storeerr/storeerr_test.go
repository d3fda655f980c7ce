package storeerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/pswap/pswap/store"
)

var errOdd = errors.New("odd")

func TestClassify(t *testing.T) {
	r := Rules{
		Codes:     map[string]error{"Gone": store.ErrNotFound, "Busy": store.ErrTransient},
		NoCode:    map[int]error{409: store.ErrTransient, 416: store.ErrInvalidRange},
		Transport: func(err error) bool { return errors.Is(err, errOdd) },
	}
	for _, c := range []struct {
		f      Failure
		bucket bool
		want   error
	}{
		{Failure{Code: "Gone", Status: 500}, false, store.ErrNotFound}, // the code wins over the status
		{Failure{Code: "Busy", Status: 400}, false, store.ErrTransient},
		{Failure{Status: 409}, false, store.ErrTransient},
		{Failure{Code: "BucketNotEmpty", Status: 409}, false, nil}, // NoCode is for responses without a code
		{Failure{Status: 416}, false, store.ErrInvalidRange},
		{Failure{Code: "Other", Status: 412}, false, store.ErrPrecondition},
		{Failure{Status: 404}, false, store.ErrNotFound},
		{Failure{Status: 404}, true, store.ErrBucketNotFound},
		{Failure{Status: 401}, false, store.ErrAccessDenied},
		{Failure{Status: 403}, false, store.ErrAccessDenied},
		{Failure{Status: 408}, false, store.ErrTransient},
		{Failure{Status: 429}, false, store.ErrTransient},
		{Failure{Status: 503}, false, store.ErrTransient},
		{Failure{Status: 400, Err: io.ErrUnexpectedEOF}, false, nil}, // a response: not a transport failure
		{Failure{Code: "Other"}, false, nil},
		{Failure{Err: fmt.Errorf("dial: %w", syscall.ECONNREFUSED)}, false, store.ErrTransient},
		{Failure{Err: errOdd}, false, store.ErrTransient}, // the SDK's own
		{Failure{Err: errors.New("plain")}, false, nil},
		{Failure{}, false, nil},
	} {
		if got := r.Classify(c.f, c.bucket); got != c.want {
			t.Errorf("Classify(%+v, bucket %v) = %v, want %v", c.f, c.bucket, got, c.want)
		}
	}
	if got := (Rules{}).Classify(Failure{Err: errOdd}, false); got != nil {
		t.Errorf("zero Rules: %v for an unknown error, want nil", got)
	}
}

// The messages are the ones each driver wrote before the frame was shared.
func TestWrapMessages(t *testing.T) {
	cause := errors.New("SlowDown (HTTP 503)")
	o := Op{Driver: "s3store", Name: "put", URI: "s3://b/k"}
	ifMatch := o
	ifMatch.IfMatch = true
	for _, c := range []struct {
		o        Op
		sentinel error
		want     string
		is       []error
		not      []error
	}{
		{o, nil, "s3store: put s3://b/k: SlowDown (HTTP 503)", nil, []error{store.ErrTransient}},
		{o, store.ErrTransient, "s3store: put s3://b/k: transient store failure: SlowDown (HTTP 503)", []error{store.ErrTransient}, nil},
		{ifMatch, store.ErrNotFound, "s3store: put s3://b/k: precondition failed: object not found: SlowDown (HTTP 503)", []error{store.ErrPrecondition, store.ErrNotFound}, nil},
		{ifMatch, store.ErrBucketNotFound, "s3store: put s3://b/k: bucket not found: SlowDown (HTTP 503)", []error{store.ErrBucketNotFound}, []error{store.ErrPrecondition}},
		{o, store.ErrNotFound, "s3store: put s3://b/k: object not found: SlowDown (HTTP 503)", []error{store.ErrNotFound}, []error{store.ErrPrecondition}},
	} {
		got := Wrap(c.o, c.sentinel, cause)
		if got.Error() != c.want {
			t.Errorf("Wrap = %q, want %q", got, c.want)
		}
		if !errors.Is(got, cause) {
			t.Errorf("Wrap = %v does not wrap its cause", got)
		}
		for _, e := range c.is {
			if !errors.Is(got, e) {
				t.Errorf("Wrap = %v, want it to match %v", got, e)
			}
		}
		for _, e := range c.not {
			if errors.Is(got, e) {
				t.Errorf("Wrap = %v must not match %v", got, e)
			}
		}
	}
}

func TestMap(t *testing.T) {
	o := Op{Driver: "azstore", Name: "get", URI: "az://c/k"}
	decoded := errors.New("decoded")
	decode := func(error) Failure { return Failure{Status: 500, Err: decoded} }
	classify := func(f Failure) error { return Rules{}.Classify(f, false) }
	if err := Map(context.Background(), o, nil, decode, classify); err != nil {
		t.Errorf("Map(nil) = %v", err)
	}
	got := Map(context.Background(), o, errors.New("raw"), decode, classify)
	if got.Error() != "azstore: get az://c/k: transient store failure: decoded" || !errors.Is(got, decoded) {
		t.Errorf("Map = %q, want the decoded error named and transient", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got = Map(ctx, o, errors.New("raw"), decode, classify)
	if !errors.Is(got, context.Canceled) || errors.Is(got, store.ErrTransient) || got.Error() != "azstore: get az://c/k: context canceled" {
		t.Errorf("Map with a done context = %q, want ctx.Err() and no sentinel", got)
	}
}
