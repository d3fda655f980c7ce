package gcsstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/pswap/pswap/store"
)

// ParseURL splits a gs://bucket/prefix URL into its bucket and root prefix
// (without leading or trailing slashes). The path is taken literally, as
// s3store.ParseURL takes it: not percent-decoded. The prefix must pass
// store.ValidatePrefix.
func ParseURL(raw string) (bucket, prefix string, err error) {
	const scheme = "gs://"
	if len(raw) < len(scheme) || !strings.EqualFold(raw[:len(scheme)], scheme) {
		return "", "", fmt.Errorf("gcsstore: %q is not a gs:// URL", raw)
	}
	bucket, prefix, _ = strings.Cut(raw[len(scheme):], "/")
	if err := validateBucket(bucket); err != nil {
		return "", "", fmt.Errorf("gcsstore: URL %q: %w", raw, err)
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix != "" {
		if err := store.ValidateKey(prefix); err != nil {
			return "", "", fmt.Errorf("gcsstore: URL %q: %w", raw, err)
		}
	}
	return bucket, prefix, nil
}

// Open is New for a gs://bucket/prefix URL.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	bucket, prefix, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return New(ctx, bucket, prefix, opts)
}
