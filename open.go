package pswap

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/s3store"
)

// ErrBadURL: a table URL that cannot be opened.
var ErrBadURL = errors.New("bad table URL")

// OpenStore opens the store rooted at a table URL:
//
//	s3://bucket/prefix   AWS S3 or an S3-compatible server (AWS_ENDPOINT_URL)
//	file:///abs/path     a local directory
//	/abs/path, rel/path  a local directory (the embedded default)
//	mem://name           a process-local memory store (tests)
func OpenStore(ctx context.Context, rawURL string, opts Options) (store.Store, error) {
	if rawURL == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadURL)
	}
	if strings.ContainsAny(rawURL, "\x00\n\r") {
		return nil, fmt.Errorf("%w: %q contains control characters", ErrBadURL, rawURL)
	}
	scheme, rest, hasScheme := strings.Cut(rawURL, "://")
	if !hasScheme {
		return filestore.New(rawURL)
	}
	switch strings.ToLower(scheme) {
	case "file":
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrBadURL, rawURL, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("%w: %q: file URLs take an absolute path (file:///path), not a host %q", ErrBadURL, rawURL, u.Host)
		}
		if u.Path == "" || !filepath.IsAbs(u.Path) {
			return nil, fmt.Errorf("%w: %q: file URLs need an absolute path", ErrBadURL, rawURL)
		}
		return filestore.New(u.Path)
	case "s3":
		if bucket, _, _ := strings.Cut(rest, "/"); bucket == "" {
			return nil, fmt.Errorf("%w: %q: no bucket", ErrBadURL, rawURL)
		}
		if _, _, err := s3store.ParseURL(rawURL); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
		}
		return s3store.Open(ctx, rawURL, opts.S3)
	case "mem":
		return memstore.New(memstore.Options{Name: rest}), nil
	}
	return nil, fmt.Errorf("%w: %q: unknown scheme %q (want s3://, file:// or a path)", ErrBadURL, rawURL, scheme)
}
