package s3store

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"

	"github.com/pswap/pswap/store"
)

const (
	// DefaultPartSize is the multipart part size used when none is given.
	DefaultPartSize = 8 << 20
	// MinPartSize is the smallest part S3 accepts (except for the last part).
	MinPartSize = 5 << 20
	// DefaultConcurrency is the number of parts uploaded at once by default.
	DefaultConcurrency = 4
	// maxParts is the S3 limit on the number of parts of one upload.
	maxParts = 10000
	// maxDeleteBatch is the S3 limit on keys per DeleteObjects request.
	maxDeleteBatch = 1000
	// defaultRegion is used when neither Options nor the AWS chain name one.
	defaultRegion = "us-east-1"
)

// Options configure a Store. The zero value uses the standard AWS
// configuration chain (environment, shared config files, profiles).
type Options struct {
	// Endpoint overrides the S3 endpoint URL (e.g. a MinIO server). When
	// empty, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (or the profile's
	// endpoint_url) is used if set. Any custom endpoint implies path-style
	// addressing.
	Endpoint string
	// UsePathStyle forces path-style addressing (bucket in the path, not
	// the host name). It is forced on whenever a custom endpoint is in use.
	UsePathStyle bool
	// Region overrides the AWS region; default from the AWS chain, else us-east-1.
	Region string
	// Profile selects a shared-config profile; default from AWS_PROFILE.
	Profile string
	// Credentials overrides the standard credential chain (tests, embedding).
	Credentials aws.CredentialsProvider
	// ChecksumWhenRequired makes the SDK compute and validate checksums only
	// where the API requires them, for S3-compatible servers that reject the
	// default CRC checksums. Also settable with the standard
	// AWS_REQUEST_CHECKSUM_CALCULATION / AWS_RESPONSE_CHECKSUM_VALIDATION
	// variables. In this mode, writes carry a Content-MD5 instead.
	ChecksumWhenRequired bool
	// HTTPClient replaces the SDK's HTTP client (e.g. to insert a fault proxy).
	HTTPClient aws.HTTPClient
	// RetryMaxAttempts bounds the SDK's own attempts at one request (0: SDK
	// default, 3; 1: no retry, for callers that retry themselves). The
	// requests of a streaming write (NewWriter) always get at least
	// DataAttempts: no caller retries a single part.
	RetryMaxAttempts int
	// RetryMaxBackoff caps the SDK's backoff between attempts (0: SDK
	// default, 20s).
	RetryMaxBackoff time.Duration
	// Logger, when not nil, receives a debug record for every attempt of
	// every request: operation, method, path, status, attempt, duration.
	// Headers and query strings (signatures, tokens) are never logged.
	Logger *slog.Logger
	// LogOutput, when not nil, receives the SDK's own log messages (such as
	// its warnings about instance metadata), which otherwise go straight to
	// the process's stderr; a CLI passes its redacted stderr.
	LogOutput io.Writer
	// OnSecret, when not nil, is called with every secret the client signs
	// with (secret access key, session token) as the credential chain
	// produces it, so that a caller can keep it out of its output.
	OnSecret func(secret string)
	// PartSize is the default multipart part size for NewWriter
	// (default 8 MiB, at least 5 MiB).
	PartSize int64
	// Concurrency is the default number of parts NewWriter uploads at once (default 4).
	Concurrency int
}

// Store is a store.Store on one S3 bucket, rooted at a key prefix.
// It is safe for concurrent use.
type Store struct {
	client       *s3.Client
	bucket       string
	root         string // "" or a prefix ending in "/"
	partSize     int64
	concurrency  int
	whenRequired bool
	clock        serverClock
	// Set by tests only (export_test.go): multipart copies of small objects.
	testCopyLimit, testCopyPart int64
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.BatchDeleter = (*Store)(nil)
	_ store.UploadLister = (*Store)(nil)

	_ store.DelimiterLister = (*Store)(nil)
	_ store.Clock           = (*Store)(nil)
)

// NewClient returns an S3 client configured from opts and the standard AWS
// chain, as New uses it. Tests and tools use it to reach a bucket directly.
func NewClient(ctx context.Context, opts Options) (*s3.Client, error) {
	return newClient(ctx, opts)
}

func newClient(ctx context.Context, opts Options, extra ...func(*s3.Options)) (*s3.Client, error) {
	var lo []func(*config.LoadOptions) error
	if opts.Region != "" {
		lo = append(lo, config.WithRegion(opts.Region))
	}
	if opts.Profile != "" {
		lo = append(lo, config.WithSharedConfigProfile(opts.Profile))
	}
	if opts.Credentials != nil {
		lo = append(lo, config.WithCredentialsProvider(opts.Credentials))
	}
	if opts.ChecksumWhenRequired {
		lo = append(lo,
			config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
			config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired))
	}
	if opts.HTTPClient != nil {
		lo = append(lo, config.WithHTTPClient(opts.HTTPClient))
	}
	if opts.RetryMaxAttempts > 0 || opts.RetryMaxBackoff > 0 {
		lo = append(lo, config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				if opts.RetryMaxAttempts > 0 {
					so.MaxAttempts = opts.RetryMaxAttempts
				}
				if opts.RetryMaxBackoff > 0 {
					so.MaxBackoff = opts.RetryMaxBackoff
				}
			})
		}))
	}
	if opts.LogOutput != nil {
		lo = append(lo, config.WithLogger(logging.NewStandardLogger(opts.LogOutput)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("s3store: load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	if opts.OnSecret != nil && cfg.Credentials != nil {
		inner := cfg.Credentials
		cfg.Credentials = aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
			c, err := inner.Retrieve(ctx)
			if err == nil {
				opts.OnSecret(c.SecretAccessKey)
				opts.OnSecret(c.SessionToken)
			}
			return c, err
		}))
	}
	if opts.Logger != nil {
		extra = append(extra, func(o *s3.Options) {
			o.APIOptions = append(o.APIOptions, requestLogger{opts.Logger}.addMiddleware)
		})
	}
	fns := []func(*s3.Options){func(o *s3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		if opts.UsePathStyle || (o.BaseEndpoint != nil && *o.BaseEndpoint != "") {
			o.UsePathStyle = true
		}
		// Reading a multipart object (composite checksum) would otherwise
		// print a warning on stderr for every Get.
		o.DisableLogOutputChecksumValidationSkipped = true
	}}
	return s3.NewFromConfig(cfg, append(fns, extra...)...), nil
}

// New returns a Store for keys under prefix in bucket. It does no I/O beyond
// loading the AWS configuration: a missing bucket or bad credentials show up
// as store.ErrBucketNotFound or store.ErrAccessDenied on the first request.
func New(ctx context.Context, bucket, prefix string, opts Options) (*Store, error) {
	root, err := rootIn(bucket, prefix)
	if err != nil {
		return nil, err
	}
	s := &Store{bucket: bucket, root: root}
	s.partSize = normPartSize(opts.PartSize, DefaultPartSize)
	s.concurrency = opts.Concurrency
	if s.concurrency <= 0 {
		s.concurrency = DefaultConcurrency
	}
	c, err := newClient(ctx, opts, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, s.clock.addMiddleware)
	})
	if err != nil {
		return nil, err
	}
	s.client = c
	s.whenRequired = c.Options().RequestChecksumCalculation == aws.RequestChecksumCalculationWhenRequired
	return s, nil
}

// rootIn checks a bucket name and a root prefix in it, and returns the
// prefix as a store's root ("" or "prefix/").
func rootIn(bucket, prefix string) (string, error) {
	if err := validateBucket(bucket); err != nil {
		return "", err
	}
	prefix = strings.Trim(prefix, "/")
	if err := store.ValidatePrefix(prefix); err != nil {
		return "", fmt.Errorf("s3store: root prefix: %w", err)
	}
	if prefix == "" {
		return "", nil
	}
	return prefix + "/", nil
}

func validateBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("s3store: invalid bucket name %q: must be 3 to 63 characters", b)
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return fmt.Errorf("s3store: invalid bucket name %q: only a-z, 0-9, '-' and '.' allowed", b)
		}
	}
	if alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }; !alnum(b[0]) || !alnum(b[len(b)-1]) {
		return fmt.Errorf("s3store: invalid bucket name %q: must begin and end with a letter or digit", b)
	}
	if strings.Contains(b, "..") {
		return fmt.Errorf("s3store: invalid bucket name %q: has \"..\"", b)
	}
	return nil
}

// normPartSize returns n, or def when n is not positive, raised to MinPartSize.
func normPartSize(n, def int64) int64 {
	if n <= 0 {
		n = def
	}
	return max(n, MinPartSize)
}

// Client returns the underlying S3 client.
func (s *Store) Client() *s3.Client { return s.client }

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.bucket }

// Prefix returns the root prefix (empty, or ending in "/").
func (s *Store) Prefix() string { return s.root }

// URI returns s3://bucket/prefix/key.
func (s *Store) URI(key string) string {
	if key == "" {
		return "s3://" + s.bucket + "/" + strings.TrimSuffix(s.root, "/")
	}
	return "s3://" + s.bucket + "/" + s.root + key
}

// Close releases nothing: the SDK client needs no closing.
func (s *Store) Close() error { return nil }

func (s *Store) fullKey(op, key string) (string, error) {
	if err := store.ValidateKey(key); err != nil {
		return "", fmt.Errorf("s3store: %s %s: %w", op, s.URI(key), err)
	}
	return s.root + key, nil
}

// Get opens an object for reading. The body streams from S3; read errors
// (a truncated body, a reset connection) are reported as store.ErrTransient.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	k, err := s.fullKey("get", key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return nil, store.Attrs{}, s.mapError(ctx, opGet, key, err)
	}
	a := store.Attrs{
		Key:     key,
		Size:    aws.ToInt64(out.ContentLength),
		ETag:    aws.ToString(out.ETag),
		ModTime: aws.ToTime(out.LastModified),
	}
	return &body{rc: out.Body, s: s, ctx: ctx, key: key}, a, nil
}

// body maps read errors of a streaming GetObject body.
type body struct {
	rc  io.ReadCloser
	s   *Store
	ctx context.Context
	key string
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		err = b.s.mapError(b.ctx, opRead, b.key, err)
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }

// Stat returns an object's attributes (HeadObject). HEAD responses carry no
// error body, so a missing bucket is reported as store.ErrNotFound here.
func (s *Store) Stat(ctx context.Context, key string) (store.Attrs, error) {
	k, err := s.fullKey("stat", key)
	if err != nil {
		return store.Attrs{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return store.Attrs{}, s.mapError(ctx, opStat, key, err)
	}
	return store.Attrs{
		Key:     key,
		Size:    aws.ToInt64(out.ContentLength),
		ETag:    aws.ToString(out.ETag),
		ModTime: aws.ToTime(out.LastModified),
	}, nil
}

// Put writes a small object with one PutObject, conditionally per opts.
// The returned ModTime is the server's Date of the response (1 s resolution).
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	return s.put(ctx, key, data, opts)
}

func (s *Store) put(ctx context.Context, key string, data []byte, opts store.PutOptions, optFns ...func(*s3.Options)) (store.Attrs, error) {
	k, err := s.fullKey("put", key)
	if err != nil {
		return store.Attrs{}, err
	}
	in := &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &k,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	s.setPutConditions(in, opts)
	if s.whenRequired {
		in.ContentMD5 = aws.String(contentMD5(data))
	}
	out, err := s.client.PutObject(ctx, in, optFns...)
	if err != nil {
		return store.Attrs{}, s.mapError(ctx, putOp(opPut, opts), key, err)
	}
	return store.Attrs{
		Key:     key,
		Size:    int64(len(data)),
		ETag:    aws.ToString(out.ETag),
		ModTime: serverTime(out.ResultMetadata),
	}, nil
}

func (s *Store) setPutConditions(in *s3.PutObjectInput, opts store.PutOptions) {
	if opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if opts.IfMatch != "" {
		in.IfMatch = aws.String(opts.IfMatch)
	}
	if opts.ContentType != "" {
		in.ContentType = aws.String(opts.ContentType)
	}
}

func contentMD5(b []byte) string {
	sum := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

func serverTime(md middleware.Metadata) time.Time {
	if t, ok := awsmiddleware.GetServerTime(md); ok {
		return t.UTC()
	}
	return time.Time{}
}

// Delete removes an object. A missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	k, err := s.fullKey("delete", key)
	if err != nil {
		return err
	}
	_, err = s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return s.mapError(ctx, opDelete, key, err)
	}
	return nil
}

// DeleteMany deletes keys with DeleteObjects, 1,000 per request. Missing keys
// are not errors. Failures of single keys are mapped like request errors and
// joined (errors.Join), each naming its key.
func (s *Store) DeleteMany(ctx context.Context, keys []string) error {
	full := make([]types.ObjectIdentifier, 0, min(len(keys), maxDeleteBatch))
	for _, key := range keys {
		if _, err := s.fullKey("delete", key); err != nil {
			return err
		}
	}
	var errs []error
	for len(keys) > 0 {
		n := min(len(keys), maxDeleteBatch)
		full = full[:0]
		for _, key := range keys[:n] {
			full = append(full, types.ObjectIdentifier{Key: aws.String(s.root + key)})
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: &s.bucket,
			Delete: &types.Delete{Objects: full, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return s.mapError(ctx, opDeleteMany, keys[0], err)
		}
		for _, e := range out.Errors {
			key := strings.TrimPrefix(aws.ToString(e.Key), s.root)
			errs = append(errs, s.mapCode(opDelete, key, aws.ToString(e.Code), 0,
				fmt.Errorf("%s: %s", aws.ToString(e.Code), aws.ToString(e.Message))))
		}
		keys = keys[n:]
	}
	return errors.Join(errs...)
}

// List yields the objects whose keys start with prefix, in lexical order
// (ListObjectsV2, paginated). Keys are relative to the store root. Objects
// written by other tools under the root are yielded even if their keys
// would not pass store.ValidateKey.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	return func(yield func(store.Attrs, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.Attrs{}, fmt.Errorf("s3store: list %s: %w", s.URI(prefix), err))
			return
		}
		p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
			Bucket: &s.bucket,
			Prefix: aws.String(s.root + prefix),
		})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				yield(store.Attrs{}, s.mapError(ctx, opList, prefix, err))
				return
			}
			for _, o := range page.Contents {
				a := store.Attrs{
					Key:     strings.TrimPrefix(aws.ToString(o.Key), s.root),
					Size:    aws.ToInt64(o.Size),
					ETag:    aws.ToString(o.ETag),
					ModTime: aws.ToTime(o.LastModified),
				}
				if !yield(a, nil) {
					return
				}
			}
		}
	}
}

// ListDelimited implements store.DelimiterLister with ListObjectsV2's
// Delimiter: one request per page of 1,000 entries (objects and common
// prefixes together), whatever the number of objects under the prefixes.
// (MinIO does that for the delimiter "/" only; it serves others by walking
// every key beneath, 1,000 keys per page.)
func (s *Store) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	return func(yield func(store.ListEntry, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.ListEntry{}, fmt.Errorf("s3store: list %s: %w", s.URI(prefix), err))
			return
		}
		in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.root + prefix)}
		if delimiter != "" {
			in.Delimiter = aws.String(delimiter)
		}
		p := s3.NewListObjectsV2Paginator(s.client, in)
		lastPrefix := ""
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				yield(store.ListEntry{}, s.mapError(ctx, opList, prefix, err))
				return
			}
			// Each page holds a lexical range of entries; merge its two lists.
			objs, cps := page.Contents, page.CommonPrefixes
			for len(objs) > 0 || len(cps) > 0 {
				var e store.ListEntry
				if len(cps) > 0 && (len(objs) == 0 || aws.ToString(cps[0].Prefix) < aws.ToString(objs[0].Key)) {
					cp := aws.ToString(cps[0].Prefix)
					cps = cps[1:]
					if cp == lastPrefix {
						// MinIO pages a delimiter other than "/" by the keys
						// beneath, and repeats a common prefix that spans pages.
						continue
					}
					lastPrefix = cp
					e = store.ListEntry{Attrs: store.Attrs{Key: strings.TrimPrefix(cp, s.root)}, IsPrefix: true}
				} else {
					o := objs[0]
					objs = objs[1:]
					e = store.ListEntry{Attrs: store.Attrs{
						Key:     strings.TrimPrefix(aws.ToString(o.Key), s.root),
						Size:    aws.ToInt64(o.Size),
						ETag:    aws.ToString(o.ETag),
						ModTime: aws.ToTime(o.LastModified),
					}}
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// ListUploads yields the unfinished multipart uploads whose keys start with
// prefix (ListMultipartUploads, paginated). MinIO only honours an empty
// prefix or an exact key there, so when the prefixed listing finds nothing,
// the whole bucket is listed and filtered here.
func (s *Store) ListUploads(ctx context.Context, prefix string) iter.Seq2[store.Upload, error] {
	return func(yield func(store.Upload, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.Upload{}, fmt.Errorf("s3store: list uploads %s: %w", s.URI(prefix), err))
			return
		}
		full := s.root + prefix
		n, ok := s.listUploads(ctx, prefix, full, yield)
		if ok && n == 0 && full != "" {
			s.listUploads(ctx, prefix, "", yield)
		}
	}
}

// listUploads lists the uploads under the server-side prefix listPrefix and
// yields those under the root-relative prefix. It returns how many it
// yielded and false when the caller stopped or an error was yielded.
func (s *Store) listUploads(ctx context.Context, prefix, listPrefix string, yield func(store.Upload, error) bool) (int, bool) {
	in := &s3.ListMultipartUploadsInput{Bucket: &s.bucket}
	if listPrefix != "" {
		in.Prefix = aws.String(listPrefix)
	}
	want := s.root + prefix
	n := 0
	p := s3.NewListMultipartUploadsPaginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			yield(store.Upload{}, s.mapError(ctx, opListUploads, prefix, err))
			return n, false
		}
		for _, u := range page.Uploads {
			key := aws.ToString(u.Key)
			if !strings.HasPrefix(key, want) {
				continue
			}
			up := store.Upload{
				Key:       strings.TrimPrefix(key, s.root),
				ID:        aws.ToString(u.UploadId),
				Initiated: aws.ToTime(u.Initiated),
			}
			n++
			if !yield(up, nil) {
				return n, false
			}
		}
	}
	return n, true
}

// AbortUpload aborts a multipart upload. An upload that no longer exists
// (completed or already aborted) is not an error.
func (s *Store) AbortUpload(ctx context.Context, u store.Upload) error {
	k, err := s.fullKey("abort upload", u.Key)
	if err != nil {
		return err
	}
	if u.ID == "" {
		return fmt.Errorf("s3store: abort upload %s: empty upload id", s.URI(u.Key))
	}
	_, err = s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: &s.bucket, Key: &k, UploadId: aws.String(u.ID),
	})
	if err != nil {
		err = s.mapError(ctx, opAbortUpload, u.Key, err)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}
	return nil
}

// Outer returns a store on the whole bucket, sharing s's client, and s's
// root prefix in it (without trailing slash): pswap looks there for a
// table that would enclose a new one (pswap.OuterStore).
func (s *Store) Outer() (store.Store, string) {
	return &Store{client: s.client, bucket: s.bucket, partSize: s.partSize, concurrency: s.concurrency, whenRequired: s.whenRequired},
		strings.TrimSuffix(s.root, "/")
}
