package s3store

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/pswap/pswap/internal/serverclock"
)

// serverClock remembers the Date header of the most recent response and the
// local monotonic time it arrived at.
type serverClock struct{ serverclock.Clock }

// addMiddleware installs the Date recorder on a client's middleware stack.
// It sits in the deserialize step, so it sees every attempt's raw response,
// errors included.
func (c *serverClock) addMiddleware(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("pswapServerDate",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
			middleware.DeserializeOutput, middleware.Metadata, error,
		) {
			out, md, err := next.HandleDeserialize(ctx, in)
			if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp != nil && resp.Response != nil {
				c.Observe(resp.Header.Get("Date"), time.Now())
			}
			return out, md, err
		}), middleware.After)
}

// Now returns the S3 server's current time: the Date header of the most
// recent response plus the local monotonic time elapsed since. When no
// response arrived for over a minute, it makes a HeadBucket request to get
// one. The Date header has one-second resolution and is truncated, so Now
// may be behind the server by up to a second, never ahead: ages computed
// from it err on the young (safe) side.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if t, ok := s.clock.Now(time.Now(), serverclock.MaxAge); ok {
		return t, nil
	}
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	if err != nil {
		return time.Time{}, s.mapError(ctx, opHeadBucket, "", err)
	}
	if t, ok := s.clock.Now(time.Now(), serverclock.MaxAge); ok {
		return t, nil
	}
	return time.Time{}, s.mapError(ctx, opHeadBucket, "", errNoDate)
}

var errNoDate = errors.New("server response has no valid Date header")
