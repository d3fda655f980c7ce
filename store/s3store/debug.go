package s3store

import (
	"context"
	"log/slog"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// requestLogger logs every attempt of every request at debug level: the
// operation, method, bucket-relative path, status, attempt number and
// duration. It logs no header and no query string, so neither signatures
// nor tokens reach the log.
type requestLogger struct{ log *slog.Logger }

type attemptKey struct{}

// addMiddleware installs the logger: a counter at the start of each
// operation, and a record per attempt in the deserialize step (which runs
// once per attempt, below the SDK's retry loop).
func (l requestLogger) addMiddleware(stack *middleware.Stack) error {
	err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("pswapLogInit",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
			middleware.InitializeOutput, middleware.Metadata, error,
		) {
			return next.HandleInitialize(context.WithValue(ctx, attemptKey{}, new(int)), in)
		}), middleware.Before)
	if err != nil {
		return err
	}
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("pswapLogAttempt",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
			middleware.DeserializeOutput, middleware.Metadata, error,
		) {
			attempt := 1
			if n, ok := ctx.Value(attemptKey{}).(*int); ok {
				*n++
				attempt = *n
			}
			start := time.Now()
			out, md, err := next.HandleDeserialize(ctx, in)
			attrs := []slog.Attr{
				slog.String("op", awsmiddleware.GetOperationName(ctx)),
				slog.Int("attempt", attempt),
				slog.Duration("took", time.Since(start).Round(time.Millisecond)),
			}
			if req, ok := in.Request.(*smithyhttp.Request); ok && req.URL != nil {
				attrs = append(attrs, slog.String("method", req.Method), slog.String("host", req.URL.Host),
					slog.String("path", req.URL.EscapedPath()))
			}
			if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp != nil && resp.Response != nil {
				attrs = append(attrs, slog.Int("status", resp.StatusCode))
			} else {
				attrs = append(attrs, slog.String("status", "no response"))
			}
			if err != nil {
				attrs = append(attrs, slog.String("error", err.Error()))
			}
			l.log.LogAttrs(ctx, slog.LevelDebug, "s3 request", attrs...)
			return out, md, err
		}), middleware.After)
}
