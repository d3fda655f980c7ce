package main

import (
	"bytes"
	"io"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/pswap/pswap/catalog"
)

// The redactor is the one place that removes credentials from what pswap
// prints. run() wraps stdout and stderr in it, so every error, warning,
// debug line and progress frame passes it; nothing needs to remember to
// call it. It removes secrets only, never user names, ordinary words or
// machine-readable fields (a table URL, a run id with an @, a key):
//   - the values of the secret variables (AWS secret key and session
//     token, PGPASSWORD, the catalog's token and credential), and any
//     secret the S3 client signs with (from profiles, SSO, ...);
//   - the password of a URL given on the command line or in $PSWAP_TABLE
//     or $PSWAP_CATALOG, also where a message quotes it alone; for the
//     schemes that have no users (s3://, file://, ...), where userinfo can
//     only be a pasted access key and secret, the whole userinfo;
//   - the shape of credentials in text: a URL's password, presigned-URL
//     signatures and security tokens, Authorization header signatures.
//
// What the user part of a sql+postgres:// or https:// URL names is a user,
// and what precedes an @ elsewhere (a run id "backfill@2026-11-28") is
// data: neither is ever replaced.

// redacted replaces every secret in output.
const redacted = "[REDACTED]"

// minSecret is the shortest literal secret replaced: shorter ones would
// mangle ordinary words.
const minSecret = 4

// minGuessedSecret is the shortest userinfo of a scheme without users
// (s3://KEY@bucket) taken as a secret: an access key id or secret key is
// 16 characters or more, and a shorter word there is more likely a typo
// than a credential, which must not mangle every occurrence of the word.
const minGuessedSecret = 8

var (
	// userinfo in URLs: scheme://user@, scheme://user:password@.
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*)://([^/@\s"':]*)(:[^/@\s"']*)?@`)
	// Signed query parameters of presigned URLs, and signed headers.
	signedParam = regexp.MustCompile(`(?i)((?:X-Amz-(?:Security-Token|Signature|Credential)|Signature)=)[^&\s"',]+`)
	// Azure's SAS signature (sig=) in a URL's query or a connection
	// string, and a connection string's account key.
	azureSecret = regexp.MustCompile(`(?i)((?:[?&;]sig=)|(?:AccountKey=)|(?:SharedAccessSignature=))[^&\s"',;]+`)
	// An Authorization or token header, as a debug line might show it.
	authHeader = regexp.MustCompile(`(?i)((?:Authorization|X-Amz-Security-Token)["']?\s*[:=]\s*["']?)[^"'\n]+`)
	// Google Cloud credentials in text: OAuth 2 access tokens (ya29.),
	// the signature and credential of a V4 signed URL, the id of a
	// resumable upload session (whoever has it can write the upload), and
	// a key file's private key, as PEM or as its JSON field.
	gcsAccessToken = regexp.MustCompile(`\bya29\.[A-Za-z0-9_.\-]+`)
	gcsSignedParam = regexp.MustCompile(`(?i)((?:X-Goog-(?:Signature|Credential)|upload_id)=)[^&\s"',]+`)
	gcsPrivateKey  = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`)
	gcsKeyField    = regexp.MustCompile(`("private_key(?:_id)?"\s*:\s*")[^"]*`)
	// A scheme pswap or a user would write, at the start of a word,
	// followed by its colon: where a URL-like argument begins.
	urlStart = regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9+.-])([a-z][a-z0-9+.-]*):`)
)

// secretEnv are variables whose values must never be printed.
var secretEnv = []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "MINIO_ROOT_PASSWORD", "PGPASSWORD",
	catalog.EnvToken, catalog.EnvCredential,
	"AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_CLIENT_SECRET"}

// redactor removes credentials from text. It is safe for concurrent use:
// the S3 client may report a secret while another goroutine prints.
type redactor struct {
	mu      sync.Mutex
	secrets []string // literal values, longest first
}

// newRedactor returns a redactor that knows the secret variables of getenv
// and the passwords in the URLs among args, $PSWAP_TABLE and
// $PSWAP_CATALOG.
func newRedactor(getenv func(string) string, args []string) *redactor {
	r := &redactor{}
	for _, name := range secretEnv {
		r.add(getenv(name))
	}
	// An Azure connection string's key or SAS, also where shown alone,
	// and a SAS token's signature.
	for _, part := range strings.Split(getenv("AZURE_STORAGE_CONNECTION_STRING"), ";") {
		if k, v, ok := strings.Cut(part, "="); ok && (strings.EqualFold(k, "AccountKey") || strings.EqualFold(k, "SharedAccessSignature")) {
			r.add(v)
		}
	}
	for _, param := range strings.Split(strings.TrimPrefix(getenv("AZURE_STORAGE_SAS_TOKEN"), "?"), "&") {
		if sig, ok := strings.CutPrefix(param, "sig="); ok {
			r.add(sig) // as written, and decoded
			if u, err := url.QueryUnescape(sig); err == nil {
				r.add(u)
			}
		}
	}
	// A REST catalog's client_secret, also where it is shown alone.
	if _, secret, ok := strings.Cut(getenv(catalog.EnvCredential), ":"); ok {
		r.add(secret)
	}
	for _, a := range append(args, getenv(envTable), getenv(envCatalog)) {
		r.addURLSecrets(a)
	}
	return r
}

// add makes r replace the literal value s.
func (r *redactor) add(s string) { r.addMin(s, minSecret) }

// addMin makes r replace the literal value s if it has at least min bytes.
func (r *redactor) addMin(s string, min int) {
	s = strings.TrimSpace(s)
	if len(s) < min {
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

// addURLSecrets makes r replace the secrets of the URLs in an argument,
// wherever a message quotes them: the password of each URL's userinfo, and
// for a scheme without users the whole userinfo, also in mistyped forms
// such as s3:/key:secret@bucket. Only text that follows a URL scheme is
// looked at: the part before an @ of anything else (a run id, an e-mail
// address in a comment) is data, not a credential.
func (r *redactor) addURLSecrets(s string) {
	for _, m := range urlStart.FindAllStringSubmatchIndex(s, -1) {
		scheme := s[m[2]:m[3]]
		if !isURLScheme(scheme) {
			continue
		}
		// The authority: after the colon and any slashes, up to the next
		// slash (a userinfo holds none unescaped).
		rest := strings.TrimLeft(s[m[3]+1:], "/")
		if end := strings.IndexAny(rest, "/?# \t\n"); end >= 0 {
			rest = rest[:end]
		}
		at := strings.LastIndex(rest, "@")
		if at < 0 {
			continue
		}
		user, pass, hasPass := strings.Cut(rest[:at], ":")
		if hasPass {
			r.add(pass)
			if u, err := url.PathUnescape(pass); err == nil {
				r.add(u)
			}
		}
		if !hasUsers(scheme) {
			// s3://KEY:SECRET@bucket: an access key pair pasted into
			// the URL, never a user name.
			r.addMin(rest[:at], minGuessedSecret)
			r.addMin(user, minGuessedSecret)
		}
	}
}

// isURLScheme reports whether w is a scheme pswap or a user would write.
func isURLScheme(w string) bool {
	switch strings.ToLower(w) {
	case "s3", "s3a", "s3n", "gs", "gcs", "az", "abfss", "wasbs", "file", "mem", "http", "https", "sql+postgres", "sql+postgresql", "postgres", "postgresql",
		"sql+sqlite", "rest+http", "rest+https":
		return true
	}
	return false
}

// hasUsers reports whether a URL scheme names a user in its userinfo (a
// database or web login), as opposed to the schemes of stores, whose
// userinfo can only be credentials.
func hasUsers(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3n", "gs", "gcs", "az", "file", "mem", "sql+sqlite":
		return false
	}
	return true
}

// String returns s with every credential replaced by [REDACTED].
func (r *redactor) String(s string) string {
	r.mu.Lock()
	secrets := r.secrets
	r.mu.Unlock()
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	s = redactURL(s)
	s = authHeader.ReplaceAllString(s, "${1}"+redacted)
	s = azureSecret.ReplaceAllString(s, "${1}"+redacted)
	s = gcsAccessToken.ReplaceAllString(s, redacted)
	s = gcsSignedParam.ReplaceAllString(s, "${1}"+redacted)
	s = gcsPrivateKey.ReplaceAllString(s, redacted)
	s = gcsKeyField.ReplaceAllString(s, "${1}"+redacted)
	return signedParam.ReplaceAllString(s, "${1}"+redacted)
}

// redactURL removes the password from the userinfo of the URLs in u (the
// whole userinfo for the schemes without users) for display; user names
// stay.
func redactURL(u string) string {
	return urlUserinfo.ReplaceAllStringFunc(u, func(m string) string {
		sm := urlUserinfo.FindStringSubmatch(m)
		scheme, user, pass := sm[1], sm[2], sm[3]
		switch {
		case !hasUsers(scheme):
			return scheme + "://" + redacted + "@"
		case pass != "" && pass != ":"+redacted:
			return scheme + "://" + user + ":" + redacted + "@"
		}
		return m
	})
}

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
