package azstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/pswap/pswap/store"
)

// Environment variables read when Options leave a setting empty: the ones
// the Azure CLI and SDKs read.
const (
	EnvAccount          = "AZURE_STORAGE_ACCOUNT"
	EnvKey              = "AZURE_STORAGE_KEY"
	EnvSAS              = "AZURE_STORAGE_SAS_TOKEN"
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
)

const (
	// DefaultPartSize is the block size NewWriter stages when none is given.
	DefaultPartSize = 8 << 20
	// MaxPartSize is the largest block Azure accepts (4,000 MiB).
	MaxPartSize = 4000 << 20
	// DefaultConcurrency is the number of blocks staged at once by default.
	DefaultConcurrency = 4
	// maxBlocks is Azure's limit on the committed blocks of one blob.
	maxBlocks = 50000
	// maxBatch is Azure's limit on the subrequests of one blob batch.
	maxBatch = 256
	// deleteConcurrency bounds the single deletes in flight where a batch
	// is not available.
	deleteConcurrency = 16
)

// Options configure a Store. The zero value takes the account and its
// credential from the environment: AZURE_STORAGE_CONNECTION_STRING, or
// AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN.
type Options struct {
	// Account is the storage account name (default AZURE_STORAGE_ACCOUNT,
	// or the account of the connection string or URL).
	Account string
	// Key is the account's shared key (default AZURE_STORAGE_KEY).
	Key string
	// SAS is a shared access signature, with or without its leading '?'
	// (default AZURE_STORAGE_SAS_TOKEN).
	SAS string
	// ConnectionString is an account's connection string (default
	// AZURE_STORAGE_CONNECTION_STRING): its BlobEndpoint (an emulator's,
	// say), AccountName and AccountKey or SharedAccessSignature.
	ConnectionString string
	// Credential is a Microsoft Entra ID token credential (for example
	// azidentity's DefaultAzureCredential), used when no key, SAS or
	// connection string is given. pswap does not link azidentity itself.
	Credential azcore.TokenCredential
	// Endpoint overrides the blob service URL (default
	// https://ACCOUNT.blob.core.windows.net).
	Endpoint string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Transport replaces the SDK's HTTP client (e.g. to insert a fault proxy).
	Transport policy.Transporter
	// RetryMaxAttempts bounds the SDK's attempts at one request (0: SDK
	// default, 4; 1: no retry). Block uploads always get at least
	// DataAttempts.
	RetryMaxAttempts int
	// RetryMaxBackoff caps the SDK's backoff between attempts (0: SDK default).
	RetryMaxBackoff time.Duration
	// Logger, when not nil, receives a debug record for every attempt of
	// every request: operation, method, path, status, attempt, duration.
	// Headers and query strings (signatures, SAS tokens) are never logged.
	Logger *slog.Logger
	// OnSecret, when not nil, is called with every secret the store signs
	// with (the key, the SAS, the connection string and its secrets), so
	// that a caller can keep them out of its output.
	OnSecret func(secret string)
	// PartSize is the default block size of NewWriter (default 8 MiB).
	PartSize int64
	// Concurrency is the default number of blocks NewWriter stages at once (default 4).
	Concurrency int
}

// DataAttempts is the least number of attempts at each request of a
// streaming write, whatever RetryMaxAttempts says: nothing above a Writer
// retries a single block.
const DataAttempts = 3

// Store is a store.Store on one Azure Blob Storage container, rooted at a
// blob name prefix. It is safe for concurrent use.
type Store struct {
	cc          *container.Client
	account     string
	container   string
	root        string // "" or a prefix ending in "/"
	suffix      string // the cloud's endpoint suffix, core.windows.net
	partSize    int64
	concurrency int
	sharedKey   bool // batches need a shared key or a token (not a SAS)
	dataRetry   policy.RetryOptions
	clock       *serverClock
	// newClient makes a client of another container of the account with
	// the store's credential and pipeline settings (Sibling).
	newClient func(container string) (*container.Client, error)
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.BatchDeleter    = (*Store)(nil)
	_ store.DelimiterLister = (*Store)(nil)
	_ store.RangeReader     = (*Store)(nil)
	_ store.Copier          = (*Store)(nil)
	_ store.Clock           = (*Store)(nil)
)

// New returns a Store for blobs under prefix in containerName. It does no
// I/O: a missing container or bad credentials show up as
// store.ErrBucketNotFound or store.ErrAccessDenied on the first request.
func New(ctx context.Context, containerName, prefix string, opts Options) (*Store, error) {
	root, err := rootIn(containerName, prefix)
	if err != nil {
		return nil, err
	}
	s := &Store{container: containerName, root: root, clock: &serverClock{}}
	s.partSize = opts.PartSize
	if s.partSize <= 0 {
		s.partSize = DefaultPartSize
	}
	s.partSize = min(s.partSize, MaxPartSize)
	s.concurrency = opts.Concurrency
	if s.concurrency <= 0 {
		s.concurrency = DefaultConcurrency
	}
	if err := s.connect(opts); err != nil {
		return nil, err
	}
	s.suffix = "core.windows.net"
	if u, err := url.Parse(s.cc.URL()); err == nil {
		if _, rest, ok := strings.Cut(u.Hostname(), ".blob."); ok && rest != "" {
			s.suffix = rest // another cloud's (core.chinacloudapi.cn)
		}
	}
	return s, nil
}

func (s *Store) connect(opts Options) error {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	pick := func(v, env string) string {
		if v != "" {
			return v
		}
		return strings.TrimSpace(getenv(env))
	}
	secret := func(v string) {
		if opts.OnSecret != nil && v != "" {
			opts.OnSecret(v)
		}
	}
	co := &container.ClientOptions{}
	co.Transport = opts.Transport
	if opts.RetryMaxAttempts > 0 {
		co.Retry.MaxRetries = int32(opts.RetryMaxAttempts - 1)
		if opts.RetryMaxAttempts == 1 {
			co.Retry.MaxRetries = -1
		}
	}
	co.Retry.MaxRetryDelay = opts.RetryMaxBackoff
	s.dataRetry = co.Retry
	if r := s.dataRetry.MaxRetries; r < 0 || (r > 0 && r < DataAttempts-1) {
		s.dataRetry.MaxRetries = DataAttempts - 1 // 0 is the SDK's default, 3
	}
	// The server clock sees every attempt's response; the request log
	// records every attempt.
	co.PerRetryPolicies = append(co.PerRetryPolicies, s.clock)
	if opts.Logger != nil {
		co.PerCallPolicies = append(co.PerCallPolicies, attemptCounter{})
		co.PerRetryPolicies = append(co.PerRetryPolicies, requestLogger{log: opts.Logger})
	}
	// The SDK's own logging policy may print the query string's
	// parameter names only; it prints nothing unless a listener is set.
	co.Logging.AllowedQueryParams = nil

	if cs := pick(opts.ConnectionString, EnvConnectionString); cs != "" {
		secret(cs)
		for _, part := range strings.Split(cs, ";") {
			k, v, _ := strings.Cut(part, "=")
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "accountkey", "sharedaccesssignature":
				secret(v)
			case "accountname":
				s.account = v
			}
		}
		if opts.Account != "" && s.account != "" && !strings.EqualFold(opts.Account, s.account) {
			return fmt.Errorf("azstore: the URL names account %q but the connection string is for account %q", opts.Account, s.account)
		}
		co.InsecureAllowCredentialWithHTTP = true // an emulator's http:// BlobEndpoint
		s.newClient = func(name string) (*container.Client, error) {
			cc, err := container.NewClientFromConnectionString(cs, name, co)
			if err != nil {
				return nil, fmt.Errorf("azstore: connection string (not shown): %w", scrubSDK(err))
			}
			return cc, nil
		}
		cc, err := s.newClient(s.container)
		if err != nil {
			return err
		}
		s.cc = cc
		s.sharedKey = strings.Contains(strings.ToLower(cs), "accountkey=")
		return nil
	}
	s.account = pick(opts.Account, EnvAccount)
	if s.account == "" {
		return fmt.Errorf("azstore: no storage account: set %s (with %s or %s), or %s", EnvAccount, EnvKey, EnvSAS, EnvConnectionString)
	}
	if err := validateAccount(s.account); err != nil {
		return err
	}
	endpoint := strings.TrimSuffix(opts.Endpoint, "/")
	if endpoint == "" {
		endpoint = "https://" + s.account + ".blob.core.windows.net"
	}
	co.InsecureAllowCredentialWithHTTP = strings.HasPrefix(endpoint, "http://")
	var newClient func(containerURL string) (*container.Client, error)
	switch key, sas := pick(opts.Key, EnvKey), pick(opts.SAS, EnvSAS); {
	case key != "":
		secret(key)
		cred, cerr := container.NewSharedKeyCredential(s.account, key)
		if cerr != nil {
			return fmt.Errorf("azstore: account key (not shown): %w", scrubSDK(cerr))
		}
		newClient = func(u string) (*container.Client, error) {
			return container.NewClientWithSharedKeyCredential(u, cred, co)
		}
		s.sharedKey = true
	case sas != "":
		sas = strings.TrimPrefix(sas, "?")
		secret(sas)
		if q, qerr := url.ParseQuery(sas); qerr == nil {
			secret(q.Get("sig"))
		}
		newClient = func(u string) (*container.Client, error) { return container.NewClientWithNoCredential(u+"?"+sas, co) }
	case opts.Credential != nil:
		newClient = func(u string) (*container.Client, error) { return container.NewClient(u, opts.Credential, co) }
		s.sharedKey = true
	default:
		return fmt.Errorf("azstore: no credential for account %s: set %s, %s or %s", s.account, EnvKey, EnvSAS, EnvConnectionString)
	}
	s.newClient = func(name string) (*container.Client, error) {
		cc, err := newClient(endpoint + "/" + name)
		if err != nil {
			return nil, fmt.Errorf("azstore: %w", scrubSDK(err))
		}
		return cc, nil
	}
	var err error
	s.cc, err = s.newClient(s.container)
	return err
}

// scrubSDK keeps an SDK construction error's message off any secret: only
// its first line, which names the problem, not the input.
func scrubSDK(err error) error {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if strings.ContainsAny(msg, "=?") {
		msg = "invalid"
	}
	return errors.New(msg)
}

// validateContainer checks Azure's container naming rules: 3 to 63
// characters, lowercase letters, digits and single hyphens, starting and
// ending with a letter or digit.
// rootIn checks a container name and a root prefix in it, and returns the
// prefix as a store's root ("" or "prefix/").
func rootIn(containerName, prefix string) (string, error) {
	if err := validateContainer(containerName); err != nil {
		return "", err
	}
	prefix = strings.Trim(prefix, "/")
	if err := store.ValidatePrefix(prefix); err != nil {
		return "", fmt.Errorf("azstore: root prefix: %w", err)
	}
	if prefix == "" {
		return "", nil
	}
	return prefix + "/", nil
}

func validateContainer(c string) error {
	if len(c) < 3 || len(c) > 63 {
		return fmt.Errorf("azstore: invalid container name %q: must be 3 to 63 characters", c)
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("azstore: invalid container name %q: only a-z, 0-9 and '-' allowed", c)
		}
	}
	if c[0] == '-' || c[len(c)-1] == '-' || strings.Contains(c, "--") {
		return fmt.Errorf("azstore: invalid container name %q: hyphens must be single and inside the name", c)
	}
	return nil
}

// validateAccount checks Azure's account naming rules: 3 to 24 lowercase
// letters and digits.
func validateAccount(a string) error {
	if len(a) < 3 || len(a) > 24 {
		return fmt.Errorf("azstore: invalid storage account name %q: must be 3 to 24 characters", a)
	}
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return fmt.Errorf("azstore: invalid storage account name %q: only a-z and 0-9 allowed", a)
		}
	}
	return nil
}

// Container returns the container name.
func (s *Store) Container() string { return s.container }

// Account returns the storage account name, when known.
func (s *Store) Account() string { return s.account }

// Prefix returns the root prefix (empty, or ending in "/").
func (s *Store) Prefix() string { return s.root }

// Client returns the underlying container client.
func (s *Store) Client() *container.Client { return s.cc }

// URI returns the location of a key in the form every engine reads
// (Spark's and PyIceberg's file IO, delta-rs, DuckDB):
// abfss://container@account.dfs.core.windows.net/prefix/key, or
// az://container/prefix/key when the account is not known (a connection
// string with a SAS and no account name). Iceberg metadata records these
// locations, and ParseURL reads both forms back.
func (s *Store) URI(key string) string {
	base := s.base()
	if key == "" {
		return base + strings.TrimSuffix(s.root, "/")
	}
	return base + s.root + key
}

// base is the location of the container, with a trailing slash.
func (s *Store) base() string {
	if s.account == "" {
		return "az://" + s.container + "/"
	}
	return "abfss://" + s.container + "@" + s.account + ".dfs." + s.suffix + "/"
}

// Close releases nothing: the SDK client needs no closing.
func (s *Store) Close() error { return nil }

func (s *Store) fullKey(op, key string) (string, error) {
	if err := store.ValidateKey(key); err != nil {
		return "", fmt.Errorf("azstore: %s %s: %w", op, s.URI(key), err)
	}
	return s.root + key, nil
}

func (s *Store) blob(full string) *blob.Client { return s.cc.NewBlobClient(full) }

func (s *Store) block(full string) *blockblob.Client { return s.cc.NewBlockBlobClient(full) }

func etag(e *azcore.ETag) string {
	if e == nil {
		return ""
	}
	return string(*e)
}

func utc(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// Get opens a blob for reading. Read errors (a truncated body, a reset
// connection) are reported as store.ErrTransient.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, store.Attrs, error) {
	k, err := s.fullKey("get", key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	out, err := s.blob(k).DownloadStream(ctx, nil)
	if err != nil {
		return nil, store.Attrs{}, s.mapError(ctx, opGet, key, err)
	}
	a := store.Attrs{Key: key, Size: deref(out.ContentLength, 0), ETag: etag(out.ETag), ModTime: utc(out.LastModified)}
	return &body{rc: out.Body, s: s, ctx: ctx, key: key}, a, nil
}

// body maps read errors of a streaming download.
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
		if !errors.Is(err, store.ErrTransient) && b.ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", store.ErrTransient, err)
		}
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }

// Stat returns a blob's attributes (Get Blob Properties, a HEAD). HEAD
// responses carry no error code, so a missing container is reported as
// store.ErrNotFound here.
func (s *Store) Stat(ctx context.Context, key string) (store.Attrs, error) {
	k, err := s.fullKey("stat", key)
	if err != nil {
		return store.Attrs{}, err
	}
	out, err := s.blob(k).GetProperties(ctx, nil)
	if err != nil {
		return store.Attrs{}, s.mapError(ctx, opStat, key, err)
	}
	return store.Attrs{Key: key, Size: deref(out.ContentLength, 0), ETag: etag(out.ETag), ModTime: utc(out.LastModified), ContentMD5: md5Hex(out.ContentMD5)}, nil
}

// md5Hex is a blob's Content-MD5 in lowercase hex, or "" for anything but
// 16 bytes (a blob without one). Azure computes it on Put Blob; a block
// upload has one only when its writer sent it with the block list, and the
// service does not check a value a writer sets (pswap's own block uploads
// send none): see store.Attrs.ContentMD5.
func md5Hex(b []byte) string {
	if len(b) != md5.Size {
		return ""
	}
	return hex.EncodeToString(b)
}

// accessConditions turns PutOptions into Azure's conditional headers:
// If-None-Match: * and If-Match: ETag.
func accessConditions(opts store.PutOptions) *blob.AccessConditions {
	if !opts.IfNoneMatch && opts.IfMatch == "" {
		return nil
	}
	m := &blob.ModifiedAccessConditions{}
	if opts.IfNoneMatch {
		m.IfNoneMatch = to.Ptr(azcore.ETagAny)
	}
	if opts.IfMatch != "" {
		m.IfMatch = to.Ptr(azcore.ETag(opts.IfMatch))
	}
	return &blob.AccessConditions{ModifiedAccessConditions: m}
}

func httpHeaders(opts store.PutOptions) *blob.HTTPHeaders {
	if opts.ContentType == "" {
		return nil
	}
	return &blob.HTTPHeaders{BlobContentType: to.Ptr(opts.ContentType)}
}

// Put writes a small blob with one Put Blob, conditionally per opts.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	k, err := s.fullKey("put", key)
	if err != nil {
		return store.Attrs{}, err
	}
	return s.put(ctx, key, k, data, opts)
}

func (s *Store) put(ctx context.Context, key, k string, data []byte, opts store.PutOptions) (store.Attrs, error) {
	out, err := s.block(k).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
		AccessConditions: accessConditions(opts),
		HTTPHeaders:      httpHeaders(opts),
	})
	if err != nil {
		return store.Attrs{}, s.writeError(ctx, putOp(opPut, opts), key, k, opts, err)
	}
	return store.Attrs{Key: key, Size: int64(len(data)), ETag: etag(out.ETag), ModTime: utc(out.LastModified)}, nil
}

// writeError maps a failed conditional write. Azure answers an If-Match
// write to a missing blob with 412, like a stale ETag (S3 says 404): a
// HEAD tells the two apart, so that the error matches store.ErrNotFound
// too when the blob is gone.
func (s *Store) writeError(ctx context.Context, o op, key, k string, opts store.PutOptions, err error) error {
	mapped := s.mapError(ctx, o, key, err)
	if opts.IfMatch == "" || !errors.Is(mapped, store.ErrPrecondition) || errors.Is(mapped, store.ErrNotFound) {
		return mapped
	}
	if _, serr := s.blob(k).GetProperties(ctx, nil); serr != nil && errors.Is(s.mapError(ctx, opStat, key, serr), store.ErrNotFound) {
		return fmt.Errorf("%w: %w", mapped, store.ErrNotFound)
	}
	return mapped
}

// Delete removes a blob (and its snapshots). A missing blob is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	k, err := s.fullKey("delete", key)
	if err != nil {
		return err
	}
	return s.delete(ctx, key, k)
}

func (s *Store) delete(ctx context.Context, key, k string) error {
	_, err := s.blob(k).Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	if err != nil {
		err = s.mapError(ctx, opDelete, key, err)
		if errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrBucketNotFound) {
			return nil
		}
		return err
	}
	return nil
}

// List yields the blobs whose names start with prefix, in lexical order
// (List Blobs, 5,000 per page). Keys are relative to the store root.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[store.Attrs, error] {
	return func(yield func(store.Attrs, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.Attrs{}, fmt.Errorf("azstore: list %s: %w", s.URI(prefix), err))
			return
		}
		p := s.cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(s.root + prefix)})
		for p.More() {
			page, err := p.NextPage(ctx)
			if err != nil {
				yield(store.Attrs{}, s.mapError(ctx, opList, prefix, err))
				return
			}
			if page.Segment == nil {
				continue
			}
			for _, b := range page.Segment.BlobItems {
				if !yield(s.attrs(b), nil) {
					return
				}
			}
		}
	}
}

func (s *Store) attrs(b *container.BlobItem) store.Attrs {
	a := store.Attrs{Key: strings.TrimPrefix(deref(b.Name, ""), s.root)}
	if p := b.Properties; p != nil {
		a.Size = deref(p.ContentLength, 0)
		// List Blobs gives the ETag unquoted, the headers quoted: one
		// form, the headers', so that a listing's version matches a read's.
		a.ETag = etag(p.ETag)
		if a.ETag != "" && !strings.HasPrefix(a.ETag, `"`) {
			a.ETag = `"` + a.ETag + `"`
		}
		a.ModTime = utc(p.LastModified)
		a.ContentMD5 = md5Hex(p.ContentMD5)
	}
	return a
}

// ListDelimited implements store.DelimiterLister with List Blobs'
// delimiter: one request per page of entries (blobs and prefixes
// together), whatever the number of blobs under the prefixes.
func (s *Store) ListDelimited(ctx context.Context, prefix, delimiter string) iter.Seq2[store.ListEntry, error] {
	if delimiter == "" {
		return store.RollUp(s.List(ctx, prefix), prefix, "")
	}
	return func(yield func(store.ListEntry, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield(store.ListEntry{}, fmt.Errorf("azstore: list %s: %w", s.URI(prefix), err))
			return
		}
		p := s.cc.NewListBlobsHierarchyPager(delimiter, &container.ListBlobsHierarchyOptions{Prefix: to.Ptr(s.root + prefix)})
		lastPrefix := ""
		for p.More() {
			page, err := p.NextPage(ctx)
			if err != nil {
				yield(store.ListEntry{}, s.mapError(ctx, opList, prefix, err))
				return
			}
			if page.Segment == nil {
				continue
			}
			// Each page holds a lexical range of entries; merge its two lists.
			objs, cps := page.Segment.BlobItems, page.Segment.BlobPrefixes
			for len(objs) > 0 || len(cps) > 0 {
				var e store.ListEntry
				if len(cps) > 0 && (len(objs) == 0 || fixPrefix(deref(cps[0].Name, ""), delimiter) < deref(objs[0].Name, "")) {
					cp := fixPrefix(deref(cps[0].Name, ""), delimiter)
					cps = cps[1:]
					if cp == lastPrefix {
						continue
					}
					lastPrefix = cp
					e = store.ListEntry{Attrs: store.Attrs{Key: strings.TrimPrefix(cp, s.root)}, IsPrefix: true}
				} else {
					e = store.ListEntry{Attrs: s.attrs(objs[0])}
					objs = objs[1:]
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// DeleteMany deletes keys with blob batches of up to 256 deletes per
// request when the credential allows batches (a shared key or a token),
// else with concurrent single deletes. Missing blobs are not errors.
// Failures of single blobs are mapped and joined, each naming its key.
func (s *Store) DeleteMany(ctx context.Context, keys []string) error {
	for _, key := range keys {
		if _, err := s.fullKey("delete", key); err != nil {
			return err
		}
	}
	if s.sharedKey {
		err := s.deleteBatches(ctx, keys)
		if !errors.Is(err, errNoBatch) {
			return err
		}
	}
	return s.deleteEach(ctx, keys)
}

// errNoBatch: the server refused the batch request itself (an emulator
// without blob batch support), so the deletes are sent one by one.
var errNoBatch = errors.New("azstore: blob batch not supported")

func (s *Store) deleteBatches(ctx context.Context, keys []string) error {
	var errs []error
	for len(keys) > 0 {
		n := min(len(keys), maxBatch)
		bb, err := s.cc.NewBatchBuilder()
		if err != nil {
			return errNoBatch
		}
		for _, key := range keys[:n] {
			if err := bb.Delete(s.root+key, &container.BatchDeleteOptions{DeleteOptions: blob.DeleteOptions{
				DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}}); err != nil {
				return errNoBatch
			}
		}
		out, err := s.cc.SubmitBatch(ctx, bb, nil)
		if err != nil {
			var re *azcore.ResponseError
			if errors.As(err, &re) && (re.StatusCode == http.StatusBadRequest || re.StatusCode == http.StatusNotImplemented || re.StatusCode == http.StatusMethodNotAllowed) && ctx.Err() == nil {
				return errNoBatch
			}
			return s.mapError(ctx, opDeleteMany, keys[0], err)
		}
		for _, r := range out.Responses {
			if r == nil || r.Error == nil {
				continue
			}
			key := strings.TrimPrefix(deref(r.BlobName, ""), s.root)
			err := s.mapError(ctx, opDelete, key, r.Error)
			if errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrBucketNotFound) {
				continue
			}
			errs = append(errs, err)
		}
		keys = keys[n:]
	}
	return errors.Join(errs...)
}

func (s *Store) deleteEach(ctx context.Context, keys []string) error {
	errs := make([]error, len(keys))
	sem := make(chan struct{}, deleteConcurrency)
	var wg sync.WaitGroup
	for i, key := range keys {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = s.delete(ctx, key, s.root+key)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Outer returns a store on the whole container, sharing s's client, and
// s's root prefix in it (without trailing slash): pswap looks there for a
// table that would enclose a new one (pswap.OuterStore).
func (s *Store) Outer() (store.Store, string) {
	o := *s
	o.root = ""
	return &o, strings.TrimSuffix(s.root, "/")
}

// deref is *p, or def for a nil p.
func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// fixPrefix repairs a common prefix that Azurite cut short: for a
// delimiter of more than one character it ends the prefix after the
// delimiter's first character ("t/dt=1/" for "t/dt=1/_pswap/" with the
// delimiter "/_pswap/"). Azure itself ends it after the whole delimiter,
// and such a prefix is returned unchanged.
func fixPrefix(cp, delimiter string) string {
	if len(delimiter) > 1 && !strings.HasSuffix(cp, delimiter) && strings.HasSuffix(cp, delimiter[:1]) {
		return cp + delimiter[1:]
	}
	return cp
}
