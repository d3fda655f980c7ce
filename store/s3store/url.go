package s3store

import (
	"context"
	"fmt"
	"strings"

	"github.com/pswap/pswap/store"
)

// ParseURL splits an s3://bucket/prefix URL into its bucket and root prefix
// (without leading or trailing slashes). The path is taken literally: it is
// not percent-decoded, so Hive-escaped partition values such as
// "city=S%C3%A3o" keep their escapes, and '?' and '#' are ordinary
// characters. The prefix must pass store.ValidatePrefix.
func ParseURL(raw string) (bucket, prefix string, err error) {
	const scheme = "s3://"
	if len(raw) < len(scheme) || !strings.EqualFold(raw[:len(scheme)], scheme) {
		return "", "", fmt.Errorf("s3store: %q is not an s3:// URL", raw)
	}
	rest := raw[len(scheme):]
	bucket, prefix, _ = strings.Cut(rest, "/")
	if err := validateBucket(bucket); err != nil {
		return "", "", fmt.Errorf("s3store: URL %q: %w", raw, err)
	}
	// One trailing slash is allowed (s3://b/sales/); anything else that
	// leaves an empty segment ("sales//", "/sales") is refused.
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix != "" {
		if err := store.ValidateKey(prefix); err != nil {
			return "", "", fmt.Errorf("s3store: URL %q: %w", raw, err)
		}
	}
	return bucket, prefix, nil
}

// Open is New for an s3://bucket/prefix URL.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	bucket, prefix, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return New(ctx, bucket, prefix, opts)
}
