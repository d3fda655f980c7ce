package pswap

import (
	"github.com/pswap/pswap/internal/inputfiles"

	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/staging"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/azstore"
	"github.com/pswap/pswap/store/gcsstore"
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/swap"
)

// Objects already in the store as inputs: `pswap commit s3://bucket/spark-out/dt=X/`
// (gs:// on GCS, az:// on Azure) copies them server-side into a new
// generation, never through this process.

// sourceObject is one object to copy: where it is, what the listing said.
type sourceObject struct {
	st   store.Store // rooted at the bucket (container)
	attr store.Attrs // Key relative to the bucket
	name string      // path in the generation
}

// IsStoreURI reports whether an input names objects in an object store
// (scheme://…, any scheme but file://) rather than a local file: such
// inputs are committed by Partition.CommitObjects, which copies them
// server-side and refuses a scheme other than the table's store's (s3://
// for S3, gs:// for GCS, az://, abfss:// or wasbs:// for Azure), naming it.
func IsStoreURI(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || strings.EqualFold(scheme, "file") {
		return false
	}
	for i, r := range scheme {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// objectCopier is the table's store seen as the place input objects are
// copied within: it resolves an input URI to the store on the bucket (or
// container) that holds it and the key there, and copies one such object
// into the table server-side.
type objectCopier struct {
	// resolve parses uri, refusing another store's scheme or a bucket
	// (an Azure account) the copy cannot reach (ErrBadInput).
	resolve func(uri string) (src store.Store, key string, err error)
	// copy copies s to dst, a key relative to the table's root.
	copy func(ctx context.Context, dst string, s sourceObject, opts store.CopyOptions) (store.Attrs, error)
}

// Accepted input schemes, as errors name them.
const (
	acceptsS3    = "s3://"
	acceptsGCS   = "gs://"
	acceptsAzure = "az:// (or abfss://, wasbs://)"
)

// copierOf returns the objectCopier of the table's store st, or ErrBadInput
// for a store without server-side copies between its objects (a local
// folder, memory).
func copierOf(st store.Store) (objectCopier, error) {
	switch dst := st.(type) {
	case *s3store.Store:
		return objectCopier{
			resolve: func(uri string) (store.Store, string, error) {
				if err := sameScheme(uri, dst.URI(""), acceptsS3, isScheme(uri, "s3")); err != nil {
					return nil, "", err
				}
				bucket, key, err := s3store.ParseURL(uri)
				if err != nil {
					return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
				}
				src, err := dst.Sibling(bucket, "")
				if err != nil {
					return nil, "", fmt.Errorf("%w: %s: %w", ErrBadInput, uri, err)
				}
				return src, key, nil
			},
			copy: func(ctx context.Context, to string, s sourceObject, opts store.CopyOptions) (store.Attrs, error) {
				return dst.CopyFrom(ctx, to, s.st.(*s3store.Store).Bucket(), s.attr.Key, s.attr.Size, opts)
			},
		}, nil
	case *gcsstore.Store:
		return objectCopier{
			resolve: func(uri string) (store.Store, string, error) {
				if err := sameScheme(uri, dst.URI(""), acceptsGCS, isScheme(uri, "gs")); err != nil {
					return nil, "", err
				}
				bucket, key, err := gcsstore.ParseURL(uri)
				if err != nil {
					return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
				}
				src, err := dst.Sibling(bucket, "")
				if err != nil {
					return nil, "", fmt.Errorf("%w: %s: %w", ErrBadInput, uri, err)
				}
				return src, key, nil
			},
			copy: func(ctx context.Context, to string, s sourceObject, opts store.CopyOptions) (store.Attrs, error) {
				return dst.CopyFrom(ctx, to, s.st.(*gcsstore.Store).Bucket(), s.attr.Key, opts)
			},
		}, nil
	case *azstore.Store:
		return objectCopier{
			resolve: func(uri string) (store.Store, string, error) {
				if err := sameScheme(uri, dst.URI(""), acceptsAzure, azstore.IsURL(uri)); err != nil {
					return nil, "", err
				}
				loc, err := azstore.ParseURL(uri)
				if err != nil {
					return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
				}
				if loc.Account != "" && !strings.EqualFold(loc.Account, dst.Account()) {
					return nil, "", fmt.Errorf("%w: input %s is in storage account %s and the table %s in %s: on Azure, objects are copied server-side from the table's own storage account only (any of its containers); a blob of another account needs a SAS for its source, which pswap does not hold (copy them into the table's account first, or commit local files)",
						ErrBadInput, uri, loc.Account, dst.URI(""), azAccount(dst.Account()))
				}
				src, err := dst.Sibling(loc.Container, "")
				if err != nil {
					return nil, "", fmt.Errorf("%w: %s: %w", ErrBadInput, uri, err)
				}
				return src, loc.Prefix, nil
			},
			copy: func(ctx context.Context, to string, s sourceObject, opts store.CopyOptions) (store.Attrs, error) {
				return dst.CopyFrom(ctx, to, s.st.(*azstore.Store).Container(), s.attr.Key, opts)
			},
		}, nil
	}
	return objectCopier{}, fmt.Errorf("%w: inputs already in an object store are copied server-side within the table's store, which needs a table on S3, GCS or Azure (this one is %s): commit local files instead",
		ErrBadInput, st.URI(""))
}

// azAccount names the table's Azure storage account, or says it is not
// known (a connection string with a SAS and no account name).
func azAccount(account string) string {
	if account == "" {
		return "an account the credential does not name"
	}
	return "account " + account
}

// isScheme reports whether uri starts with scheme://, in any case.
func isScheme(uri, scheme string) bool {
	s, _, ok := strings.Cut(uri, "://")
	return ok && strings.EqualFold(s, scheme)
}

// sameScheme refuses an input URI whose scheme is not the table's store's
// (ok false), naming the schemes the table accepts.
func sameScheme(uri, table, accepts string, ok bool) error {
	if ok {
		return nil
	}
	scheme, _, _ := strings.Cut(uri, "://")
	return fmt.Errorf("%w: input %s: a %s:// input cannot be copied server-side into the table %s, whose store takes %s inputs",
		ErrBadInput, uri, strings.ToLower(scheme), table, accepts)
}

// CommitObjects commits objects that are already in the table's object
// store as one new generation: each uri is an object (s3://bucket/key) or
// a prefix (s3://bucket/prefix/, every data object under it, engine
// markers skipped). The URIs take the table's store's scheme: s3:// on S3
// and gs:// on GCS (the table's bucket or any other the credentials can
// read), az://container/key, abfss:// or wasbs:// on Azure (any container
// of the table's storage account the credential can read); another scheme,
// or on Azure another account, is ErrBadInput naming the accepted one. An
// input the credentials cannot list or read, or in a missing bucket
// (container), fails naming the input before anything is written. Each
// file's footer is read with ranged GETs, as for adoption (schema and rows
// checked), then the object is copied server-side (S3 CopyObject,
// UploadPartCopy above 5 GiB; the GCS rewrite API; Azure Copy Blob),
// conditional on the version the listing gave, into the generation's
// prefix, create-if-absent. A source replaced during the copy fails the
// commit (store.ErrPrecondition) and nothing becomes visible. A table on a
// local folder takes no such inputs (ErrBadInput).
func (p *Partition) CommitObjects(ctx context.Context, uris []string, opts WriteOptions, adopt ...AdoptOptions) (Result, error) {
	var ao AdoptOptions
	if len(adopt) > 0 {
		ao = adopt[0]
	}
	ao.AllowEmpty = ao.AllowEmpty || opts.Commit.AllowEmpty
	ao = ao.defaults()
	dst, err := copierOf(p.t.st)
	if err != nil {
		return Result{}, err
	}
	srcs, err := listSources(ctx, dst, uris)
	if err != nil {
		return Result{}, err
	}
	txn, err := swap.Begin(ctx, p.t.st, p.key, opts.swapOptions())
	if err != nil {
		return Result{}, err
	}
	// The attempt's record (run id, identity, start), as a Writer's: sent
	// beside the first copy, rewritten if the attempt ends without a
	// commit.
	att := newAttemptRecord(p, txn.Generation(), opts)
	if txn.AlreadyCommitted() {
		// Our run id committed here before: nothing to copy, and the
		// commit is the SameRun no-op describing the current generation.
		res, err := txn.Commit(ctx, manifest.Content{})
		att.ended(ctx, res, err, true)
		return res, err
	}
	att.start(ctx)
	c, s, err := copySources(ctx, dst, txn.DataPrefix(), srcs, ao)
	if err == nil {
		err = checkAsIs(ctx, p.t.st, p.key, opts.Commit, s)
	}
	if err != nil {
		txn.Abort(context.WithoutCancel(ctx))
		att.ended(ctx, Result{}, err, false)
		return Result{}, err
	}
	res, err := txn.Commit(ctx, c)
	att.ended(ctx, res, err, false)
	return res, err
}

func (o AdoptOptions) defaults() AdoptOptions {
	if o.TailSize <= 0 {
		o.TailSize = store.DefaultTail
	}
	o.TailSize = max(o.TailSize, minParquetSize)
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	return o
}

// listSources resolves the input URIs to objects: an object by HEAD, a
// prefix (ending in "/", or naming no object) by listing it.
func listSources(ctx context.Context, dst objectCopier, uris []string) ([]sourceObject, error) {
	var out []sourceObject
	seen := map[string]string{}
	for _, u := range uris {
		src, key, err := dst.resolve(u)
		if err != nil {
			return nil, err
		}
		var found []sourceObject
		if key != "" && !strings.HasSuffix(u, "/") {
			a, err := src.Stat(ctx, key)
			switch {
			case err == nil:
				found = append(found, sourceObject{st: src, attr: a, name: path.Base(key)})
			case !errors.Is(err, store.ErrNotFound):
				return nil, fmt.Errorf("input %s: %w", u, err)
			}
		}
		if len(found) == 0 {
			prefix := key
			if prefix != "" && !strings.HasSuffix(prefix, "/") {
				prefix += "/"
			}
			for a, err := range src.List(ctx, prefix) {
				if err != nil {
					return nil, fmt.Errorf("input %s: %w", u, err)
				}
				rel := strings.TrimPrefix(a.Key, prefix)
				if inputfiles.IsEngineMarker(rel) || strings.HasPrefix(rel, "_pswap/") || strings.Contains(rel, "/_pswap/") {
					continue
				}
				found = append(found, sourceObject{st: src, attr: a, name: rel})
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%w: input %s: no such object, and no data object under it", ErrBadInput, u)
		}
		for _, f := range found {
			if err := manifest.ValidateFilePath(f.name); err != nil {
				return nil, fmt.Errorf("%w: input %s: %v", ErrBadInput, src.URI(f.attr.Key), err)
			}
			if prev, dup := seen[strings.ToLower(f.name)]; dup {
				return nil, fmt.Errorf("%w: inputs %s and %s would both be %s in the generation", ErrBadInput, prev, src.URI(f.attr.Key), f.name)
			}
			seen[strings.ToLower(f.name)] = src.URI(f.attr.Key)
		}
		out = append(out, found...)
	}
	if len(out) > manifest.MaxFiles {
		return nil, fmt.Errorf("%w: %d input objects, at most %d per generation", ErrBadInput, len(out), manifest.MaxFiles)
	}
	return out, nil
}

// copySources reads each source's footer and copies it server-side under
// prefix, at most o.Concurrency at a time.
func copySources(ctx context.Context, dst objectCopier, prefix string, srcs []sourceObject, o AdoptOptions) (manifest.Content, asIs, error) {
	out := make([]adopted, len(srcs))
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.Concurrency)
	for i, s := range srcs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if cctx.Err() != nil {
				out[i] = adopted{err: cctx.Err()}
				return
			}
			r := adoptFile(cctx, s.st, "", s.attr, o)
			if r.err == nil {
				a, err := dst.copy(cctx, prefix+s.name, s, store.CopyOptions{SourceIfMatch: s.attr.ETag, IfNoneMatch: true})
				if err != nil {
					r.err = fmt.Errorf("copy %s: %w", s.st.URI(s.attr.Key), err)
				} else if r.file.Checksum, err = manifest.ETagChecksum(a.ETag); err != nil {
					r.err = fmt.Errorf("copy %s: %w", s.st.URI(s.attr.Key), err)
				}
				r.file.Path = s.name
			}
			if r.err != nil {
				cancel()
			}
			out[i] = r
		}()
	}
	wg.Wait()
	// The first failure, not the cancellations it caused.
	var first error
	for _, r := range out {
		if r.err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = r.err
		}
	}
	if first != nil {
		return manifest.Content{}, asIs{}, first
	}
	var c manifest.Content
	schema := out[0].schema
	for i, r := range out {
		if r.schema != schema {
			return manifest.Content{}, asIs{}, fmt.Errorf("%w: %s has\n%s\nbut %s has\n%s", staging.ErrSchemaMismatch,
				srcs[i].st.URI(srcs[i].attr.Key), r.schema, srcs[0].st.URI(srcs[0].attr.Key), schema)
		}
		c.Add(r.file)
	}
	c.Schema = schema
	c.LimitStats(manifest.StatsBudget) // each file's, from the footer its adoption read
	if c.Rows == 0 && !o.AllowEmpty {
		return manifest.Content{}, asIs{}, fmt.Errorf("%w: %w: the %d input object(s) hold no rows", ErrBadInput, ErrEmptyCommit, len(c.Files))
	}
	// The sources' MD5s (adoptFile's) name the copies' bytes: each copy
	// was of the version whose attributes gave it (SourceIfMatch).
	c.ContentChecksum = adoptedChecksum(out)
	return c, asIsOf(out), nil
}
