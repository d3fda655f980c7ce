package pswap

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/pswap/pswap/internal/editdist"
	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/gcsstore"
	"github.com/pswap/pswap/store/memstore"
	"github.com/pswap/pswap/store/s3store"
)

// ErrBadURL: a table URL that cannot be opened.
var ErrBadURL = errkind.New("bad table URL", errkind.ErrBadInput)

// OpenStore opens the store rooted at a table URL:
//
//	s3://bucket/prefix   AWS S3 or an S3-compatible server (AWS_ENDPOINT_URL)
//	az://container/prefix Azure Blob Storage (AZURE_STORAGE_ACCOUNT, or
//	                     abfss://container@account.dfs.core.windows.net/prefix,
//	                     wasbs://container@account.blob.core.windows.net/prefix)
//	gs://bucket/prefix   Google Cloud Storage (or STORAGE_EMULATOR_HOST)
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
		if err := checkPath(rawURL); err != nil {
			return nil, err
		}
		return filestore.New(rawURL)
	}
	if azstore.IsURL(rawURL) && !strings.EqualFold(scheme, "az") {
		// abfss://container@account...: the @ separates the container
		// from the account; it holds no credential.
		if _, err := azstore.ParseURL(rawURL); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
		}
		return azstore.Open(ctx, rawURL, opts.Azure)
	}
	if host, _, _ := strings.Cut(rest, "/"); strings.Contains(host, "@") {
		// Never echo the URL: its userinfo is a credential.
		return nil, fmt.Errorf("%w: %s://[REDACTED]@...: credentials in a table URL are refused (the URL is not shown); %s",
			ErrBadURL, strings.ToLower(schemeText(scheme)), credentialHint(scheme))
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
		p := filestore.PathFromURL(u.Path) // file:///C:/data is C:\data on Windows
		if p == "" || !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%w: %q: file URLs need an absolute path", ErrBadURL, rawURL)
		}
		return filestore.New(p)
	case "s3":
		if bucket, _, _ := strings.Cut(rest, "/"); bucket == "" {
			return nil, fmt.Errorf("%w: %q: no bucket", ErrBadURL, rawURL)
		}
		if _, _, err := s3store.ParseURL(rawURL); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
		}
		return s3store.Open(ctx, rawURL, opts.S3)
	case "az":
		if _, err := azstore.ParseURL(rawURL); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
		}
		return azstore.Open(ctx, rawURL, opts.Azure)
	case "gs":
		if _, _, err := gcsstore.ParseURL(rawURL); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
		}
		return gcsstore.Open(ctx, rawURL, opts.GCS)
	case "mem":
		return memstore.New(memstore.Options{Name: rest}), nil
	}
	if s := closestScheme(strings.ToLower(scheme)); s != "" {
		return nil, fmt.Errorf("%w: %q: unknown scheme %q; did you mean %q?", ErrBadURL, rawURL, scheme, s+"://"+rest)
	}
	return nil, fmt.Errorf("%w: %q: unknown scheme %q (want s3://, gs://, az://, file:// or a path)", ErrBadURL, rawURL, scheme)
}

// credentialHint says where a scheme's store takes its credentials from,
// for the error of a table URL that carries some.
func credentialHint(scheme string) string {
	switch strings.ToLower(scheme) {
	case "gs":
		return "use GOOGLE_APPLICATION_CREDENTIALS or another source of Application Default Credentials"
	case "az":
		return "use AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN"
	}
	return "use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or another source of the AWS credential chain"
}

// knownSchemes are the URL schemes OpenStore accepts.
var knownSchemes = []string{"s3", "gs", "az", "file", "mem"}

// checkPath refuses a path that starts like a URL with a mistyped scheme
// (s3:/bucket/sales, file:relative, s3:bucket): written as a path, it would
// silently create a local folder named "s3:". A real local path whose
// first segment has a colon can be written ./s3:...
func checkPath(p string) error {
	if err := checkSlashScheme(p); err != nil {
		return err
	}
	word, rest, ok := strings.Cut(p, ":")
	if !ok || !isSchemeWord(word) || (len(word) == 1 && runtime.GOOS == "windows") {
		return nil // a Windows drive letter (C:\data) is a path
	}
	if host, _, _ := strings.Cut(strings.TrimLeft(rest, "/"), "/"); strings.Contains(host, "@") {
		return fmt.Errorf("%w: %s:...: a mistyped URL with credentials in it is refused (the URL is not shown); "+
			"write s3://bucket/prefix and use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE", ErrBadURL, schemeText(word))
	}
	scheme := strings.ToLower(word)
	local := "./" + p
	var guess string
	switch {
	case scheme == "file":
		path := strings.TrimLeft(rest, "/")
		if strings.HasPrefix(rest, "/") {
			guess = "file:///" + path
		} else {
			// file:relative: a file URL needs an absolute path; the
			// relative path alone is the other reading.
			return fmt.Errorf("%w: %q is neither a file URL (file:///absolute/path) nor a path; did you mean %q (a relative path)? "+
				"A local folder whose name has a colon is written %q", ErrBadURL, p, path, local)
		}
	case slices.Contains(knownSchemes, scheme):
		guess = scheme + "://" + strings.TrimLeft(rest, "/")
	default:
		if s := closestScheme(scheme); s != "" {
			guess = s + "://" + strings.TrimLeft(rest, "/")
		}
	}
	if guess != "" {
		return fmt.Errorf("%w: %q looks like a URL with a mistyped scheme; did you mean %q? "+
			"A local folder whose name has a colon is written %q", ErrBadURL, p, guess, local)
	}
	return fmt.Errorf("%w: %q starts with an unknown scheme %q (want s3://, gs://, az://, file:// or a path); "+
		"a local folder whose name has a colon is written %q", ErrBadURL, p, word+":", local)
}

// checkSlashScheme refuses a path that is a URL with its colon missing
// (s3//bucket/sales, file///data/sales, s3a//bucket): written as a path it
// would silently create the local folders ./s3/bucket/sales. A scheme word
// followed by an empty path segment is never what a user meant by a path;
// the local folder is still reachable as ./s3/bucket/sales.
func checkSlashScheme(p string) error {
	word, rest, ok := strings.Cut(p, "//")
	if !ok || !isSchemeWord(word) {
		return nil
	}
	scheme := strings.ToLower(word)
	if !slices.Contains(knownSchemes, scheme) {
		if scheme = closestScheme(scheme); scheme == "" {
			return nil
		}
	}
	if host, _, _ := strings.Cut(strings.TrimLeft(rest, "/"), "/"); strings.Contains(host, "@") {
		return fmt.Errorf("%w: %s//...: a mistyped URL with credentials in it is refused (the URL is not shown); "+
			"write s3://bucket/prefix and use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE", ErrBadURL, schemeText(word))
	}
	guess := scheme + "://" + rest
	if scheme == "file" {
		guess = "file:///" + strings.TrimLeft(rest, "/")
	}
	return fmt.Errorf("%w: %q looks like a URL with the colon of its scheme missing; did you mean %q? "+
		"A local folder is written %q", ErrBadURL, p, guess, "./"+path.Clean(p))
}

// isSchemeWord reports whether w has the syntax of a URL scheme (RFC 3986:
// a letter, then letters, digits, '+', '-' or '.').
func isSchemeWord(w string) bool {
	if w == "" {
		return false
	}
	for i, r := range w {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

// closestScheme returns the known scheme one edit away from s (s4, s3a,
// fille), or "".
func closestScheme(s string) string {
	for _, k := range knownSchemes {
		if k != "mem" && editdist.Levenshtein(s, k) <= 1 {
			return k
		}
	}
	if s == "s3a" || s == "s3n" {
		return "s3"
	}
	if s == "gcs" {
		return "gs"
	}
	return ""
}

// schemeText is a scheme for a message: printable and short.
func schemeText(s string) string {
	if !isSchemeWord(s) || len(s) > 16 {
		return "URL"
	}
	return s
}
