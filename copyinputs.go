package pswap

import (
	"github.com/pswap/pswap/internal/checksum"
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
	"github.com/pswap/pswap/store/s3store"
	"github.com/pswap/pswap/swap"
)

// Objects already in the store as inputs: `pswap commit s3://bucket/spark-out/dt=X/`
// copies them server-side into a new generation, never through this process.

// sourceObject is one object to copy: where it is, what the listing said.
type sourceObject struct {
	st   *s3store.Store // rooted at the bucket
	attr store.Attrs    // Key relative to the bucket
	name string         // path in the generation
}

// CommitObjects commits objects that are already in an S3 store (the
// table's bucket or any other the credentials can read) as one new
// generation: each uri is an object (s3://bucket/key) or a prefix
// (s3://bucket/prefix/, every data object under it, engine markers
// skipped). Each file's footer is read with ranged GETs, as for adoption
// (schema and rows checked), then the object is copied server-side
// (CopyObject, UploadPartCopy above 5 GiB), conditional on the ETag the
// listing gave, into the generation's prefix, create-if-absent. A source
// replaced during the copy fails the commit (store.ErrPrecondition) and
// nothing becomes visible. The table must be on S3.
func (p *Partition) CommitObjects(ctx context.Context, uris []string, opts WriteOptions, adopt ...AdoptOptions) (Result, error) {
	var ao AdoptOptions
	if len(adopt) > 0 {
		ao = adopt[0]
	}
	ao.AllowEmpty = ao.AllowEmpty || opts.Commit.AllowEmpty
	ao = ao.defaults()
	dst, ok := p.t.st.(*s3store.Store)
	if !ok {
		return Result{}, fmt.Errorf("%w: s3:// inputs are copied server-side, which needs an s3:// table (this one is %s)", ErrBadInput, p.t.st.URI(""))
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
func listSources(ctx context.Context, dst *s3store.Store, uris []string) ([]sourceObject, error) {
	var out []sourceObject
	seen := map[string]string{}
	for _, u := range uris {
		bucket, key, err := s3store.ParseURL(u)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		src, err := dst.Sibling(bucket, "")
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadInput, u, err)
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
func copySources(ctx context.Context, dst *s3store.Store, prefix string, srcs []sourceObject, o AdoptOptions) (manifest.Content, asIs, error) {
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
				a, err := dst.CopyFrom(cctx, prefix+s.name, s.st.Bucket(), s.attr.Key, s.attr.Size,
					store.CopyOptions{SourceIfMatch: s.attr.ETag, IfNoneMatch: true})
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
	c.ContentChecksum = checksum.OfAdopted(c.Files)
	return c, asIsOf(out), nil
}
