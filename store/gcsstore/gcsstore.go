package gcsstore

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/httptransport"
	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/pswap/pswap/store"
)

const (
	// DefaultPartSize is the chunk of a resumable upload when none is given:
	// the memory one streaming write holds.
	DefaultPartSize = 16 << 20
	// chunkUnit: GCS takes resumable upload chunks in multiples of 256 KiB.
	chunkUnit = 256 << 10
	// deleteConcurrency is the number of deletes DeleteMany has in flight.
	deleteConcurrency = 16
	// listPageSize is the entries a listing asks for per request (the JSON
	// API's maximum, and S3's).
	listPageSize = 1000
	// EmulatorHostEnv names the variable that points every GCS client
	// library (and this package) at an emulator.
	EmulatorHostEnv  = "STORAGE_EMULATOR_HOST"
	scopeFullControl = "https://www.googleapis.com/auth/devstorage.full_control"
)

// Options configure a Store. The zero value uses STORAGE_EMULATOR_HOST when
// it is set and Application Default Credentials otherwise.
type Options struct {
	// Endpoint, when not empty, is the base URL of a GCS-compatible server
	// (an emulator, or a fault proxy in front of one: "http://host:port"),
	// reached without authentication. It overrides STORAGE_EMULATOR_HOST.
	Endpoint string
	// RetryMaxAttempts bounds the SDK's own attempts at one request,
	// uploads included (0: SDK default, which retries an upload until its
	// context ends; 1: no retry, for callers that retry themselves).
	RetryMaxAttempts int
	// RetryMaxBackoff caps the SDK's backoff between attempts (0: SDK default, 30s).
	RetryMaxBackoff time.Duration
	// Logger, when not nil, receives a debug record for every HTTP request:
	// method, host, path, status, duration. Headers and query strings
	// (tokens, upload session ids) are never logged.
	Logger *slog.Logger
	// OnSecret, when not nil, is called with every access token the client
	// sends, as the credentials produce it, so that a caller can keep it
	// out of its output.
	OnSecret func(secret string)
	// Transport, when not nil, is the HTTP transport under the client
	// (tests: a counting or failing one). Default: a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// PartSize is the chunk size of NewWriter's resumable uploads (default
	// 16 MiB, rounded up to a multiple of 256 KiB).
	PartSize int64
}

// Store is a store.Store on one GCS bucket, rooted at a key prefix.
// It is safe for concurrent use.
type Store struct {
	client   *storage.Client
	bkt      *storage.BucketHandle
	bucket   string
	root     string // "" or a prefix ending in "/"
	partSize int64
	clock    *serverClock
	owned    bool // Close closes client
	// emulator: the endpoint is an emulator (fake-gcs-server), whose gaps
	// the store works around (see Copy and ListDelimited).
	emulator bool
	// serverDelimiter: use the server's delimiter on an emulator too
	// (tests of the merge of a delimited page, export_test.go).
	serverDelimiter bool
	// maxAttempts is Options.RetryMaxAttempts, which boundUploads applies
	// to uploads.
	maxAttempts int
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.BatchDeleter    = (*Store)(nil)
	_ store.RangeReader     = (*Store)(nil)
	_ store.Copier          = (*Store)(nil)
	_ store.DelimiterLister = (*Store)(nil)
	_ store.Clock           = (*Store)(nil)
)

// emulatorEndpoint returns the base URL of the emulator opts or the
// environment name, or "".
func emulatorEndpoint(opts Options) string {
	ep := opts.Endpoint
	if ep == "" {
		ep = os.Getenv(EmulatorHostEnv)
	}
	if ep == "" {
		return ""
	}
	if !strings.Contains(ep, "://") {
		ep = "http://" + ep
	}
	return strings.TrimSuffix(ep, "/")
}

// newClient builds the SDK client: every request passes through the
// package's transport (request log, server clock), under the credentials'
// Authorization header on real GCS.
func newClient(ctx context.Context, opts Options, clock *serverClock) (*storage.Client, error) {
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	rt := &transport{base: base, log: opts.Logger, clock: clock}
	var copts []option.ClientOption
	if ep := emulatorEndpoint(opts); ep != "" {
		// JSON reads: fake-gcs-server's XML API takes no escaped slash
		// (%2F) in an object name, which the SDK sends to an endpoint
		// other than STORAGE_EMULATOR_HOST's.
		copts = append(copts, option.WithHTTPClient(&http.Client{Transport: rt}),
			option.WithEndpoint(ep+"/storage/v1/"), storage.WithJSONReads())
	} else {
		creds, err := detectCredentials(opts)
		if err != nil {
			return nil, err
		}
		hc, err := httptransport.NewClient(&httptransport.Options{Credentials: creds, BaseRoundTripper: rt})
		if err != nil {
			return nil, fmt.Errorf("gcsstore: HTTP client: %w", err)
		}
		copts = append(copts, option.WithHTTPClient(hc))
	}
	c, err := storage.NewClient(ctx, copts...)
	if err != nil {
		return nil, fmt.Errorf("gcsstore: client: %w", err)
	}
	var ro []storage.RetryOption
	if opts.RetryMaxAttempts > 0 {
		ro = append(ro, storage.WithMaxAttempts(opts.RetryMaxAttempts))
	}
	if opts.RetryMaxBackoff > 0 {
		ro = append(ro, storage.WithBackoff(gax.Backoff{Initial: time.Second, Max: opts.RetryMaxBackoff, Multiplier: 2}))
	}
	if len(ro) > 0 {
		c.SetRetry(ro...)
	}
	return c, nil
}

// detectCredentials finds Application Default Credentials
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, the metadata server's), and reports every token they produce to
// opts.OnSecret.
func detectCredentials(opts Options) (*auth.Credentials, error) {
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{
		Scopes: []string{scopeFullControl},
	})
	if err != nil {
		// The SDK's message names where it looked, never a secret.
		return nil, fmt.Errorf("gcsstore: no Google credentials (set GOOGLE_APPLICATION_CREDENTIALS to a key file, "+
			"run 'gcloud auth application-default login', or set %s for an emulator): %w: %w", EmulatorHostEnv, store.ErrAccessDenied, err)
	}
	if opts.OnSecret == nil {
		return creds, nil
	}
	inner := creds.TokenProvider
	return auth.NewCredentials(&auth.CredentialsOptions{
		TokenProvider:          reportingTokens{inner, opts.OnSecret},
		JSON:                   creds.JSON(),
		ProjectIDProvider:      auth.CredentialsPropertyFunc(creds.ProjectID),
		QuotaProjectIDProvider: auth.CredentialsPropertyFunc(creds.QuotaProjectID),
		UniverseDomainProvider: auth.CredentialsPropertyFunc(creds.UniverseDomain),
	}), nil
}

// New returns a Store for keys under prefix in bucket. It does no I/O beyond
// finding credentials: a missing bucket shows up as store.ErrBucketNotFound
// on the first request.
func New(ctx context.Context, bucket, prefix string, opts Options) (*Store, error) {
	root, err := rootIn(bucket, prefix)
	if err != nil {
		return nil, err
	}
	s := &Store{bucket: bucket, root: root, clock: &serverClock{}, owned: true, emulator: emulatorEndpoint(opts) != "", maxAttempts: opts.RetryMaxAttempts}
	s.partSize = chunkSize(opts.PartSize)
	c, err := newClient(ctx, opts, s.clock)
	if err != nil {
		return nil, err
	}
	s.client = c
	s.bkt = c.Bucket(bucket)
	return s, nil
}

// chunkSize returns n (DefaultPartSize when not positive) rounded up to a
// multiple of 256 KiB.
func chunkSize(n int64) int64 {
	if n <= 0 {
		n = DefaultPartSize
	}
	return (n + chunkUnit - 1) / chunkUnit * chunkUnit
}

// validateBucket applies GCS's bucket naming rules
// (https://cloud.google.com/storage/docs/buckets#naming).
func validateBucket(b string) error {
	if len(b) < 3 || len(b) > 222 {
		return fmt.Errorf("gcsstore: invalid bucket name %q: must be 3 to 222 characters", b)
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("gcsstore: invalid bucket name %q: only a-z, 0-9, '-', '_' and '.' allowed", b)
		}
	}
	if alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }; !alnum(b[0]) || !alnum(b[len(b)-1]) {
		return fmt.Errorf("gcsstore: invalid bucket name %q: must begin and end with a letter or digit", b)
	}
	for _, comp := range strings.Split(b, ".") {
		if comp == "" || len(comp) > 63 {
			return fmt.Errorf("gcsstore: invalid bucket name %q: each dot-separated part must be 1 to 63 characters", b)
		}
	}
	if strings.HasPrefix(b, "goog") {
		return fmt.Errorf("gcsstore: invalid bucket name %q: must not begin with \"goog\"", b)
	}
	return nil
}

// Client returns the underlying SDK client.
func (s *Store) Client() *storage.Client { return s.client }

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.bucket }

// Prefix returns the root prefix (empty, or ending in "/").
func (s *Store) Prefix() string { return s.root }

// URI returns gs://bucket/prefix/key.
func (s *Store) URI(key string) string {
	if key == "" {
		return "gs://" + s.bucket + "/" + strings.TrimSuffix(s.root, "/")
	}
	return "gs://" + s.bucket + "/" + s.root + key
}

// Close closes the SDK client (not for a store made by Outer).
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.client.Close()
}

// Outer returns a store on the whole bucket, sharing s's client, and s's
// root prefix in it (without trailing slash): pswap looks there for a
// table that would enclose a new one (pswap.OuterStore).
func (s *Store) Outer() (store.Store, string) {
	return s.sharing(s.bkt, s.bucket, ""), strings.TrimSuffix(s.root, "/")
}

// sharing is a store on bucket (bkt, a handle of s's client) with the root
// prefix root, that shares s's client, clock and settings and does not own
// the client (Outer, Sibling).
func (s *Store) sharing(bkt *storage.BucketHandle, bucket, root string) *Store {
	return &Store{client: s.client, bkt: bkt, bucket: bucket, root: root, partSize: s.partSize, clock: s.clock,
		emulator: s.emulator, serverDelimiter: s.serverDelimiter, maxAttempts: s.maxAttempts}
}

// rootIn checks a bucket name and a root prefix in it, and returns the
// prefix as a store's root ("" or "prefix/").
func rootIn(bucket, prefix string) (string, error) {
	if err := validateBucket(bucket); err != nil {
		return "", err
	}
	prefix = strings.Trim(prefix, "/")
	if err := store.ValidatePrefix(prefix); err != nil {
		return "", fmt.Errorf("gcsstore: root prefix: %w", err)
	}
	if prefix == "" {
		return "", nil
	}
	return prefix + "/", nil
}

func (s *Store) fullKey(op, key string) (string, error) {
	if err := store.ValidateKey(key); err != nil {
		return "", fmt.Errorf("gcsstore: %s %s: %w", op, s.URI(key), err)
	}
	return s.root + key, nil
}

// Generation formats a GCS generation as the store's version token.
func Generation(g int64) string { return strconv.FormatInt(g, 10) }

// parseGeneration reads a version token; anything else (an S3 ETag carried
// over by mistake) is a precondition that cannot hold.
func (s *Store) parseGeneration(op, key, etag string) (int64, error) {
	return parseGeneration(op, s.URI(key), etag)
}

// parseGeneration is Store.parseGeneration for the object uri.
func parseGeneration(op, uri, etag string) (int64, error) {
	g, err := strconv.ParseInt(etag, 10, 64)
	if err != nil || g <= 0 {
		return 0, fmt.Errorf("gcsstore: %s %s: version %q is not a GCS generation: %w", op, uri, etag, store.ErrPrecondition)
	}
	return g, nil
}

// conditions returns the generation preconditions of opts.
func (s *Store) conditions(op, key string, opts store.PutOptions) (storage.Conditions, bool, error) {
	switch {
	case opts.IfNoneMatch && opts.IfMatch != "":
		return storage.Conditions{}, false, fmt.Errorf("gcsstore: %s %s: IfNoneMatch and IfMatch together", op, s.URI(key))
	case opts.IfNoneMatch:
		return storage.Conditions{DoesNotExist: true}, true, nil
	case opts.IfMatch != "":
		g, err := s.parseGeneration(op, key, opts.IfMatch)
		return storage.Conditions{GenerationMatch: g}, true, err
	}
	return storage.Conditions{}, false, nil
}

// attrsOf is a store.Attrs of an object's GCS attributes: its generation
// as the version token, and its md5Hash as ContentMD5 (composite objects
// have none). CRC32C, which every object has, is not used: 32 bits are too
// few to tell that two objects hold the same bytes, and a wrong "the same"
// would make a commit a no-op.
func attrsOf(key string, a *storage.ObjectAttrs) store.Attrs {
	return store.Attrs{Key: key, Size: a.Size, ETag: Generation(a.Generation), ModTime: a.Updated.UTC(), ContentMD5: md5Hex(a.MD5)}
}

// md5Hex is an MD5 digest in lowercase hex, or "" for anything but 16 bytes.
func md5Hex(b []byte) string {
	if len(b) != md5.Size {
		return ""
	}
	return hex.EncodeToString(b)
}

// Get opens an object for reading. Read errors of the body (a reset
// connection) are reported as store.ErrTransient.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	return s.getRange(ctx, opGet, key, 0, -1)
}

// GetRange implements store.RangeReader with one ranged read.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	if off < 0 {
		return nil, store.Attrs{}, fmt.Errorf("gcsstore: get %s range at %d: %w", s.URI(key), off, store.ErrInvalidRange)
	}
	if n == 0 {
		// The SDK reads nothing for a zero length but still wants the
		// object: read its attributes for the same checks.
		a, err := s.Stat(ctx, key)
		if err != nil {
			return nil, store.Attrs{}, err
		}
		if off >= a.Size && a.Size > 0 {
			return nil, store.Attrs{}, fmt.Errorf("gcsstore: get %s range at %d of %d bytes: %w", s.URI(key), off, a.Size, store.ErrInvalidRange)
		}
		return io.NopCloser(strings.NewReader("")), a, nil
	}
	return s.getRange(ctx, opGet, key, off, n)
}

func (s *Store) getRange(ctx context.Context, o op, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	k, err := s.fullKey(o.name, key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	r, err := s.bkt.Object(k).NewRangeReader(ctx, off, n)
	if err != nil {
		err = s.mapError(ctx, o, key, err)
		if off == 0 && errors.Is(err, store.ErrInvalidRange) {
			// A ranged read of an empty object is 416 on GCS: it is empty.
			a, serr := s.Stat(ctx, key)
			if serr == nil && a.Size == 0 {
				return io.NopCloser(strings.NewReader("")), a, nil
			}
		}
		return nil, store.Attrs{}, s.missingBucket(ctx, err)
	}
	ra := r.Attrs
	a := store.Attrs{Key: key, Size: ra.Size, ETag: Generation(ra.Generation), ModTime: ra.LastModified.UTC()}
	if off > 0 && off >= a.Size && a.Size > 0 {
		r.Close()
		return nil, store.Attrs{}, fmt.Errorf("gcsstore: get %s range at %d of %d bytes: %w", s.URI(key), off, a.Size, store.ErrInvalidRange)
	}
	return &body{r: r, s: s, ctx: ctx, key: key}, a, nil
}

// body maps read errors of a streaming read.
type body struct {
	r   *storage.Reader
	s   *Store
	ctx context.Context
	key string
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = b.s.mapError(b.ctx, opRead, b.key, err)
	}
	return n, err
}

func (b *body) Close() error { return b.r.Close() }

// Stat returns an object's attributes (objects.get).
func (s *Store) Stat(ctx context.Context, key string) (store.Attrs, error) {
	k, err := s.fullKey("stat", key)
	if err != nil {
		return store.Attrs{}, err
	}
	a, err := s.bkt.Object(k).Attrs(ctx)
	if err != nil {
		return store.Attrs{}, s.mapError(ctx, opStat, key, err)
	}
	return attrsOf(key, a), nil
}

// Put writes a small object in one upload request, conditionally per opts.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	k, err := s.fullKey("put", key)
	if err != nil {
		return store.Attrs{}, err
	}
	cond, has, err := s.conditions("put", key, opts)
	if err != nil {
		return store.Attrs{}, err
	}
	obj := s.bkt.Object(k)
	if has {
		obj = obj.If(cond)
	}
	obj, _ = s.boundUploads(obj)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := obj.NewWriter(wctx)
	// One chunk larger than the data: a single multipart upload request
	// that the SDK can still retry from its buffer.
	w.ChunkSize = int(chunkSize(int64(len(data)) + 1))
	w.ContentType = opts.ContentType
	w.ForceEmptyContentType = opts.ContentType == ""
	if _, err := w.Write(data); err != nil {
		cancel()
		w.Close()
		return store.Attrs{}, s.writeError(ctx, putOp(opPut, opts), key, err)
	}
	if err := w.Close(); err != nil {
		return store.Attrs{}, s.writeError(ctx, putOp(opPut, opts), key, err)
	}
	return attrsOf(key, w.Attrs()), nil
}

// boundUploads returns obj with its upload requests bounded to
// RetryMaxAttempts attempts each, and the function to call when a chunk of
// a resumable upload was sent (the next request's count starts afresh).
// The SDK applies its WithMaxAttempts to every call but an upload's
// requests, which it retries until their context ends (storage v1.71: the
// upload's retry carries the backoff and the error function only): a
// store that kept answering 503 held a Put forever, however few attempts
// the caller asked for. The error function counts the failures instead.
func (s *Store) boundUploads(obj *storage.ObjectHandle) (*storage.ObjectHandle, func(int64)) {
	if s.maxAttempts <= 0 {
		return obj, nil
	}
	var failed atomic.Int64
	obj = obj.Retryer(storage.WithErrorFunc(func(err error) bool {
		return failed.Add(1) < int64(s.maxAttempts) && storage.ShouldRetry(err)
	}))
	return obj, func(int64) { failed.Store(0) }
}

// writeError maps a failed write; a failed IfMatch precondition is checked
// against the object's existence (GCS answers 412 for both).
func (s *Store) writeError(ctx context.Context, o op, key string, err error) error {
	err = s.mapError(ctx, o, key, err)
	if o.ifMatch && errors.Is(err, store.ErrPrecondition) && !errors.Is(err, store.ErrNotFound) {
		if _, serr := s.Stat(ctx, key); errors.Is(serr, store.ErrNotFound) {
			return fmt.Errorf("%w (%w)", err, store.ErrNotFound)
		}
	}
	return err
}

// Delete removes an object. A missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	k, err := s.fullKey("delete", key)
	if err != nil {
		return err
	}
	if err := s.bkt.Object(k).Delete(ctx); err != nil {
		err = s.missingBucket(ctx, s.mapError(ctx, opDelete, key, err))
		if errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrBucketNotFound) {
			return nil
		}
		return err
	}
	return nil
}

// DeleteMany deletes keys with up to 16 deletes in flight (the Go SDK has
// no batch request). Missing keys are not errors; failures of single keys
// are joined (errors.Join), each naming its key.
func (s *Store) DeleteMany(ctx context.Context, keys []string) error {
	for _, key := range keys {
		if _, err := s.fullKey("delete", key); err != nil {
			return err
		}
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, deleteConcurrency)
	)
	for _, key := range keys {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return fmt.Errorf("gcsstore: delete objects %s: %w", s.URI(key), ctx.Err())
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.Delete(ctx, key); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// List yields the objects whose keys start with prefix, in lexical order
// (objects.list, 1,000 per page). Keys are relative to the store root.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	return func(yield func(store.Attrs, error) bool) {
		for e, err := range s.ListDelimited(ctx, prefix, "") {
			if err != nil {
				yield(store.Attrs{}, err)
				return
			}
			if !yield(e.Attrs, nil) {
				return
			}
		}
	}
}

// ListDelimited implements store.DelimiterLister with objects.list's
// delimiter: one request per page of 1,000 entries (objects and common
// prefixes together).
func (s *Store) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	return func(yield func(store.ListEntry, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.ListEntry{}, fmt.Errorf("gcsstore: list %s: %w", s.URI(prefix), err))
			return
		}
		if delimiter != "" && s.emulator && !s.serverDelimiter {
			// fake-gcs-server rolls up on the delimiter's first byte only,
			// and pages only the objects of a delimited listing: roll up
			// a full listing here instead (same result, full cost).
			for e, err := range store.RollUp(s.List(ctx, prefix), prefix, delimiter) {
				if !yield(e, err) || err != nil {
					return
				}
			}
			return
		}
		q := &storage.Query{Prefix: s.root + prefix, Delimiter: delimiter}
		if err := q.SetAttrSelection([]string{"Name", "Size", "Generation", "Updated", "MD5"}); err != nil {
			yield(store.ListEntry{}, fmt.Errorf("gcsstore: list %s: %w", s.URI(prefix), err))
			return
		}
		it := s.bkt.Objects(ctx, q)
		pager := iterator.NewPager(it, listPageSize, "")
		lastPrefix := ""
		for {
			var page []*storage.ObjectAttrs
			next, err := pager.NextPage(&page)
			if err != nil {
				yield(store.ListEntry{}, s.mapError(ctx, opList, prefix, err))
				return
			}
			// A page holds its objects, then its prefixes: merge them.
			var objs, cps []*storage.ObjectAttrs
			for _, a := range page {
				if a.Prefix != "" && a.Name == "" {
					cps = append(cps, a)
				} else {
					objs = append(objs, a)
				}
			}
			for len(objs) > 0 || len(cps) > 0 {
				var e store.ListEntry
				if len(cps) > 0 && (len(objs) == 0 || cps[0].Prefix < objs[0].Name) {
					cp := cps[0].Prefix
					cps = cps[1:]
					if cp == lastPrefix {
						continue
					}
					lastPrefix = cp
					e = store.ListEntry{Attrs: store.Attrs{Key: strings.TrimPrefix(cp, s.root)}, IsPrefix: true}
				} else {
					o := objs[0]
					objs = objs[1:]
					e = store.ListEntry{Attrs: attrsOf(strings.TrimPrefix(o.Name, s.root), o)}
				}
				if !yield(e, nil) {
					return
				}
			}
			if next == "" {
				return
			}
		}
	}
}

// Copy implements store.Copier with the rewrite API: the bytes never leave
// GCS. SourceIfMatch is a source generation precondition, IfNoneMatch a
// destination ifGenerationMatch=0. CopyFrom copies from another bucket.
func (s *Store) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (store.Attrs, error) {
	sk, err := s.fullKey("copy from", src)
	if err != nil {
		return store.Attrs{}, err
	}
	return s.copyObject(ctx, dst, s.bkt.Object(sk), s.URI(src), opts)
}

// copyObject copies the object so (named srcURI in errors) to the key
// dst of s with one rewrite, conditional per opts.
func (s *Store) copyObject(ctx context.Context, dst string, so *storage.ObjectHandle, srcURI string, opts store.CopyOptions) (store.Attrs, error) {
	dk, err := s.fullKey("copy to", dst)
	if err != nil {
		return store.Attrs{}, err
	}
	do := s.bkt.Object(dk)
	if s.emulator {
		return s.emulatorCopy(ctx, dst, so, do, srcURI, opts)
	}
	if opts.SourceIfMatch != "" {
		g, err := parseGeneration("copy from", srcURI, opts.SourceIfMatch)
		if err != nil {
			return store.Attrs{}, err
		}
		so = so.If(storage.Conditions{GenerationMatch: g})
	}
	if opts.IfNoneMatch {
		do = do.If(storage.Conditions{DoesNotExist: true})
	}
	a, err := do.CopierFrom(so).Run(ctx)
	if err != nil {
		return store.Attrs{}, s.missingBucket(ctx, s.mapError(ctx, opCopy, dst, err))
	}
	return attrsOf(dst, a), nil
}

// emulatorCopy is Copy on fake-gcs-server, whose rewrite ignores every
// precondition: the source version is pinned by copying that generation
// (a replaced source is then not found), and the destination is checked
// with a Stat before the copy, which is not atomic: the one guarantee the
// emulator cannot show (pswap copies only to fresh generation keys).
func (s *Store) emulatorCopy(ctx context.Context, dst string, so, do *storage.ObjectHandle, srcURI string, opts store.CopyOptions) (store.Attrs, error) {
	src := so
	if opts.SourceIfMatch != "" {
		g, err := parseGeneration("copy from", srcURI, opts.SourceIfMatch)
		if err != nil {
			return store.Attrs{}, err
		}
		so = so.Generation(g)
	}
	if opts.IfNoneMatch {
		_, err := s.Stat(ctx, dst)
		if err == nil {
			return store.Attrs{}, fmt.Errorf("gcsstore: copy %s: destination exists: %w", s.URI(dst), store.ErrPrecondition)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return store.Attrs{}, err
		}
	}
	a, err := do.CopierFrom(so).Run(ctx)
	if err != nil {
		err = s.mapError(ctx, opCopy, dst, err)
		if opts.SourceIfMatch != "" && errors.Is(err, store.ErrNotFound) {
			if _, serr := src.Attrs(ctx); serr == nil {
				return store.Attrs{}, fmt.Errorf("gcsstore: copy %s: source changed: %w", srcURI, store.ErrPrecondition)
			}
		}
		return store.Attrs{}, err
	}
	return attrsOf(dst, a), nil
}

// reportingTokens passes every token its provider makes to onSecret.
type reportingTokens struct {
	inner    auth.TokenProvider
	onSecret func(string)
}

func (r reportingTokens) Token(ctx context.Context) (*auth.Token, error) {
	tok, err := r.inner.Token(ctx)
	if err == nil && tok != nil {
		r.onSecret(tok.Value)
	}
	return tok, err
}

// missingBucket turns a not-found error of a read or delete into
// store.ErrBucketNotFound when the bucket itself is missing. GCS reads
// answer 404 for both; until a response has shown the bucket to exist, one
// listing request (objects.list: 404 for a missing bucket) tells them apart,
// one probe at a time: misses at once wait for the probe under way.
func (s *Store) missingBucket(ctx context.Context, err error) error {
	if !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrBucketNotFound) || s.clock.bucketSeen(s.bucket) {
		return err
	}
	// One probe at a time: a miss that waited for another's probe needs
	// none when that one showed the bucket.
	s.clock.probe.Lock()
	defer s.clock.probe.Unlock()
	if s.clock.bucketSeen(s.bucket) {
		return err
	}
	it := s.bkt.Objects(ctx, &storage.Query{Prefix: s.root})
	it.PageInfo().MaxSize = 1
	if _, lerr := it.Next(); lerr != nil && !errors.Is(lerr, iterator.Done) {
		if lerr = s.mapError(ctx, opList, "", lerr); errors.Is(lerr, store.ErrBucketNotFound) {
			return fmt.Errorf("%w (%w)", err, store.ErrBucketNotFound)
		}
		return err
	}
	s.clock.sawBucket(s.bucket)
	return err
}
