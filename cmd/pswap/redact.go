package main

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/pswap/pswap/catalog"
)

// The redactor is the one place that removes credentials from what pswap
// prints. run() wraps stdout and stderr in it, so every error, warning,
// debug line and progress frame passes it; nothing needs to remember to
// call it. It knows:
//   - the values of the secret AWS variables (secret key, session token),
//     and any secret the S3 client signs with (from profiles, SSO, ...);
//   - the userinfo of URLs given on the command line or in $PSWAP_TABLE,
//     also where a message quotes it without its scheme;
//   - the shape of credentials in text: URL userinfo, presigned-URL
//     signatures and security tokens, Authorization header signatures.

// redacted replaces every secret in output.
const redacted = "[REDACTED]"

// minSecret is the shortest literal secret replaced: shorter ones would
// mangle ordinary words.
const minSecret = 4

var (
	// userinfo in URLs (s3://key:secret@bucket, https://user:pass@host).
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s"']+@`)
	// Signed query parameters of presigned URLs, and signed headers.
	signedParam = regexp.MustCompile(`(?i)((?:X-Amz-(?:Security-Token|Signature|Credential)|Signature)=)[^&\s"',]+`)
	// An Authorization or token header, as a debug line might show it.
	authHeader = regexp.MustCompile(`(?i)((?:Authorization|X-Amz-Security-Token)["']?\s*[:=]\s*["']?)[^"'\n]+`)
)

// secretEnv are variables whose values must never be printed.
var secretEnv = []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "MINIO_ROOT_PASSWORD", "PGPASSWORD",
	catalog.EnvToken, catalog.EnvCredential}

// redactor removes credentials from text. It is safe for concurrent use:
// the S3 client may report a secret while another goroutine prints.
type redactor struct {
	mu      sync.Mutex
	secrets []string // literal values, longest first
}

// newRedactor returns a redactor that knows the secret variables of getenv
// and the userinfo of the URLs among args.
func newRedactor(getenv func(string) string, args []string) *redactor {
	r := &redactor{}
	for _, name := range secretEnv {
		r.add(getenv(name))
	}
	// A REST catalog's client_secret, also where it is shown alone.
	if _, secret, ok := strings.Cut(getenv(catalog.EnvCredential), ":"); ok {
		r.add(secret)
	}
	for _, a := range append(args, getenv(envTable), getenv(envCatalog)) {
		r.addUserinfo(a)
	}
	return r
}

// add makes r replace the literal value s.
func (r *redactor) add(s string) {
	s = strings.TrimSpace(s)
	if len(s) < minSecret {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, have := range r.secrets {
		if have == s {
			return
		}
	}
	r.secrets = append(r.secrets, s)
	// Longest first, so that a secret containing another is replaced whole.
	for i := len(r.secrets) - 1; i > 0 && len(r.secrets[i]) > len(r.secrets[i-1]); i-- {
		r.secrets[i], r.secrets[i-1] = r.secrets[i-1], r.secrets[i]
	}
}

// addUserinfo makes r replace the userinfo of a URL-like argument (whole,
// and its user and password), wherever a message quotes it: in
// s3://user:pass@bucket, and in mistyped forms such as s3:/user:pass@bucket.
func (r *redactor) addUserinfo(s string) {
	for {
		at := strings.Index(s, "@")
		if at < 0 {
			return
		}
		info := s[:at]
		if slash := strings.LastIndex(info, "/"); slash >= 0 {
			info = info[slash+1:]
		}
		parts := strings.Split(info, ":")
		if len(parts) > 1 && isURLScheme(parts[0]) {
			parts = parts[1:] // s3:user:pass@bucket
		}
		r.add(strings.Join(parts, ":"))
		for _, p := range parts {
			r.add(p)
		}
		s = s[at+1:]
	}
}

// isURLScheme reports whether w is a scheme pswap or a user would write.
func isURLScheme(w string) bool {
	switch strings.ToLower(w) {
	case "s3", "s3a", "s3n", "file", "mem", "http", "https", "sql+postgres", "sql+postgresql", "rest+http", "rest+https":
		return true
	}
	return false
}

// String returns s with every credential replaced by [REDACTED].
func (r *redactor) String(s string) string {
	r.mu.Lock()
	secrets := r.secrets
	r.mu.Unlock()
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	s = urlUserinfo.ReplaceAllString(s, "${1}"+redacted+"@")
	s = authHeader.ReplaceAllString(s, "${1}"+redacted)
	return signedParam.ReplaceAllString(s, "${1}"+redacted)
}

// redactURL removes userinfo from a URL for display.
func redactURL(u string) string { return urlUserinfo.ReplaceAllString(u, "${1}"+redacted+"@") }

// redactWriter passes whole lines (ended by \n or \r, the progress bar's
// redraw) through the redactor, so that no secret is split across two
// writes. Flush writes a last unterminated line.
type redactWriter struct {
	mu  sync.Mutex
	r   *redactor
	w   io.Writer
	buf []byte
}

func newRedactWriter(r *redactor, w io.Writer) *redactWriter { return &redactWriter{r: r, w: w} }

func (rw *redactWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.buf = append(rw.buf, p...)
	end := bytes.LastIndexAny(rw.buf, "\n\r")
	if end < 0 {
		if len(rw.buf) < 1<<20 {
			return len(p), nil
		}
		end = len(rw.buf) - 1 // a huge line: redact what there is
	}
	out := rw.r.String(string(rw.buf[:end+1]))
	rw.buf = append(rw.buf[:0], rw.buf[end+1:]...)
	if _, err := io.WriteString(rw.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is left of an unterminated line.
func (rw *redactWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if len(rw.buf) == 0 {
		return nil
	}
	out := rw.r.String(string(rw.buf))
	rw.buf = rw.buf[:0]
	_, err := io.WriteString(rw.w, out)
	return err
}

// Unwrap returns the writer below, for terminal detection.
func (rw *redactWriter) Unwrap() io.Writer { return rw.w }
