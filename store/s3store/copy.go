package s3store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/pswap/pswap/store"
)

const (
	// MaxCopyObjectSize is the largest object one CopyObject may copy (5 GiB);
	// larger ones are copied part by part with UploadPartCopy.
	MaxCopyObjectSize = 5 << 30
	// copyPartSize is the part size of a multipart copy (raised so that at
	// most maxParts parts are needed).
	copyPartSize = 1 << 30
	// copyConcurrency bounds the UploadPartCopy requests of one copy in flight.
	copyConcurrency = 4
)

var (
	opGetRange = op{name: "get range"}
	opCopy     = op{name: "copy"}
	opPartCopy = op{name: "upload part copy"}
)

var (
	_ store.RangeReader = (*Store)(nil)
	_ store.Copier      = (*Store)(nil)
)

// GetRange implements store.RangeReader with one ranged GetObject. Size in
// the returned attributes is the whole object's, from Content-Range.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	k, err := s.fullKey("get range", key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	if off < 0 {
		return nil, store.Attrs{}, fmt.Errorf("s3store: get %s range at %d: %w", s.URI(key), off, store.ErrInvalidRange)
	}
	if n == 0 {
		// A zero-length range cannot be expressed in HTTP: a HEAD gives the attributes.
		a, err := s.Stat(ctx, key)
		if err != nil {
			return nil, store.Attrs{}, err
		}
		if off >= a.Size && a.Size > 0 {
			return nil, store.Attrs{}, fmt.Errorf("s3store: get %s range at %d of %d bytes: %w", s.URI(key), off, a.Size, store.ErrInvalidRange)
		}
		return io.NopCloser(strings.NewReader("")), a, nil
	}
	rng := "bytes=" + strconv.FormatInt(off, 10) + "-"
	if n > 0 {
		rng += strconv.FormatInt(off+n-1, 10)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &k, Range: &rng})
	if err != nil {
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidRange" && ctx.Err() == nil {
			if off == 0 {
				// An empty object has no byte 0, but reading it from 0 is fine.
				return s.Get(ctx, key)
			}
			return nil, store.Attrs{}, fmt.Errorf("s3store: get %s range at %d: %w: %w", s.URI(key), off, store.ErrInvalidRange, err)
		}
		return nil, store.Attrs{}, s.mapError(ctx, opGetRange, key, err)
	}
	a := store.Attrs{
		Key:     key,
		Size:    aws.ToInt64(out.ContentLength),
		ETag:    aws.ToString(out.ETag),
		ModTime: aws.ToTime(out.LastModified),
	}
	if total, ok := rangeTotal(aws.ToString(out.ContentRange)); ok {
		a.Size = total
	}
	return &body{rc: out.Body, s: s, ctx: ctx, key: key}, a, nil
}

// rangeTotal parses the total size out of a Content-Range ("bytes 0-9/100").
func rangeTotal(cr string) (int64, bool) {
	_, total, ok := strings.Cut(cr, "/")
	if !ok || total == "*" {
		return 0, false
	}
	n, err := strconv.ParseInt(total, 10, 64)
	return n, err == nil && n >= 0
}

// Copy implements store.Copier within the store's bucket: see CopyFrom.
func (s *Store) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (store.Attrs, error) {
	k, err := s.fullKey("copy", src)
	if err != nil {
		return store.Attrs{}, err
	}
	return s.CopyFrom(ctx, dst, s.bucket, k, -1, opts)
}

// CopyFrom copies the object srcKey of bucket srcBucket (a full key, not
// relative to this store's root: any bucket the credentials can read) to the
// key dst of this store, server-side: one CopyObject up to 5 GiB, else a
// multipart upload of UploadPartCopy parts. Every request is conditional on
// opts.SourceIfMatch (x-amz-copy-source-if-match), so a source replaced
// during a multipart copy fails the part and the upload is aborted.
//
// A create-if-absent copy (opts.IfNoneMatch) always takes the multipart
// path, whose CompleteMultipartUpload carries If-None-Match: MinIO ignores
// If-None-Match on CopyObject (checked by the conformance suite), so only
// the multipart form is conditional everywhere. It costs three requests
// (create, one part per GiB, complete) instead of one. size is the source's size when the caller knows
// it from a listing (it picks the method); a negative size costs a HEAD.
func (s *Store) CopyFrom(ctx context.Context, dst, srcBucket, srcKey string, size int64, opts store.CopyOptions) (store.Attrs, error) {
	k, err := s.fullKey("copy", dst)
	if err != nil {
		return store.Attrs{}, err
	}
	if err := validateBucket(srcBucket); err != nil {
		return store.Attrs{}, err
	}
	if srcKey == "" {
		return store.Attrs{}, fmt.Errorf("s3store: copy to %s: empty source key: %w", s.URI(dst), store.ErrInvalidKey)
	}
	srcURI := "s3://" + srcBucket + "/" + srcKey
	if size < 0 {
		in := &s3.HeadObjectInput{Bucket: &srcBucket, Key: &srcKey}
		if opts.SourceIfMatch != "" {
			in.IfMatch = aws.String(opts.SourceIfMatch)
		}
		out, err := s.client.HeadObject(ctx, in)
		if err != nil {
			return store.Attrs{}, fmt.Errorf("copy from %s: %w", srcURI, s.mapError(ctx, opStat, dst, err))
		}
		size = aws.ToInt64(out.ContentLength)
	}
	// The copy source is "bucket/key", URL-encoded (slashes kept).
	source := srcBucket + "/" + escapeKey(srcKey)
	if size <= s.copyLimit() && !opts.IfNoneMatch {
		in := &s3.CopyObjectInput{Bucket: &s.bucket, Key: &k, CopySource: &source}
		if opts.SourceIfMatch != "" {
			in.CopySourceIfMatch = aws.String(opts.SourceIfMatch)
		}
		out, err := s.client.CopyObject(ctx, in)
		if err != nil {
			return store.Attrs{}, fmt.Errorf("copy from %s: %w", srcURI, s.mapError(ctx, opCopy, dst, err))
		}
		a := store.Attrs{Key: dst, Size: size, ModTime: serverTime(out.ResultMetadata)}
		if r := out.CopyObjectResult; r != nil {
			a.ETag = aws.ToString(r.ETag)
			if r.LastModified != nil {
				a.ModTime = r.LastModified.UTC()
			}
		}
		return a, nil
	}
	return s.copyParts(ctx, dst, k, source, srcURI, size, opts)
}

// escapeKey URL-encodes a key for x-amz-copy-source, keeping its slashes.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}

// copyParts copies an object with a multipart upload of UploadPartCopy
// parts (one for an object up to a part's size); any failure aborts the upload.
func (s *Store) copyParts(ctx context.Context, dst, k, source, srcURI string, size int64, opts store.CopyOptions) (store.Attrs, error) {
	partSize := max(s.copyPartSize(), (size+maxParts-1)/maxParts)
	cr, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return store.Attrs{}, s.mapError(ctx, opCreateMPU, dst, err)
	}
	id := aws.ToString(cr.UploadId)
	abort := func() {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		s.AbortUpload(actx, store.Upload{Key: dst, ID: id})
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		parts []types.CompletedPart
		first error
		wg    sync.WaitGroup
		sem   = make(chan struct{}, copyConcurrency)
	)
	num := int32(0)
	for off := int64(0); off < size || num == 0; off += partSize {
		num++
		in := &s3.UploadPartCopyInput{
			Bucket: &s.bucket, Key: &k, UploadId: &id, PartNumber: aws.Int32(num),
			CopySource: &source,
		}
		if size > partSize {
			end := min(off+partSize, size) - 1
			in.CopySourceRange = aws.String(fmt.Sprintf("bytes=%d-%d", off, end))
		}
		if opts.SourceIfMatch != "" {
			in.CopySourceIfMatch = aws.String(opts.SourceIfMatch)
		}
		select {
		case sem <- struct{}{}:
		case <-pctx.Done():
		}
		if pctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out, err := s.client.UploadPartCopy(pctx, in)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = fmt.Errorf("copy from %s: %w", srcURI, s.mapError(ctx, opPartCopy, dst, err))
					cancel()
				}
				return
			}
			p := types.CompletedPart{PartNumber: in.PartNumber}
			if r := out.CopyPartResult; r != nil {
				p.ETag = r.ETag
			}
			parts = append(parts, p)
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = fmt.Errorf("s3store: copy to %s: %w", s.URI(dst), ctx.Err())
	}
	if first == nil && len(parts) != int(num) {
		first = fmt.Errorf("s3store: copy to %s: %d of %d parts copied", s.URI(dst), len(parts), num)
	}
	if first != nil {
		abort()
		return store.Attrs{}, first
	}
	slices.SortFunc(parts, func(a, b types.CompletedPart) int {
		return cmp.Compare(aws.ToInt32(a.PartNumber), aws.ToInt32(b.PartNumber))
	})
	in := &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &k, UploadId: &id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	}
	if opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := s.client.CompleteMultipartUpload(ctx, in)
	if err != nil {
		abort()
		return store.Attrs{}, s.mapError(ctx, opCompleteMPU, dst, err)
	}
	return store.Attrs{Key: dst, Size: size, ETag: aws.ToString(out.ETag), ModTime: serverTime(out.ResultMetadata)}, nil
}

// copyLimit and copyPartSize are the limits in use: tests lower them (per
// store) to exercise UploadPartCopy on small objects.
func (s *Store) copyLimit() int64 {
	if s.testCopyLimit > 0 {
		return s.testCopyLimit
	}
	return MaxCopyObjectSize
}

func (s *Store) copyPartSize() int64 {
	if s.testCopyPart > 0 {
		return s.testCopyPart
	}
	return copyPartSize
}

// Sibling returns a store on another bucket (and root prefix) that shares
// s's client, credentials and settings: to read, list and copy from any
// bucket the credentials reach.
func (s *Store) Sibling(bucket, prefix string) (*Store, error) {
	root, err := rootIn(bucket, prefix)
	if err != nil {
		return nil, err
	}
	return &Store{client: s.client, bucket: bucket, root: root, partSize: s.partSize, concurrency: s.concurrency, whenRequired: s.whenRequired}, nil
}
