package azstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/pswap/pswap/store"
)

// copyPoll is the first wait between polls of a pending copy; it doubles
// up to copyPollMax.
const (
	copyPoll    = 50 * time.Millisecond
	copyPollMax = 2 * time.Second
)

// GetRange implements store.RangeReader with one ranged Get Blob. Size in
// the returned attributes is the whole blob's, from Content-Range.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, store.Attrs, error) {
	k, err := s.fullKey("get range", key)
	if err != nil {
		return nil, store.Attrs{}, err
	}
	if off < 0 {
		return nil, store.Attrs{}, fmt.Errorf("azstore: get %s range at %d: %w", s.URI(key), off, store.ErrInvalidRange)
	}
	if n == 0 {
		a, err := s.Stat(ctx, key)
		if err != nil {
			return nil, store.Attrs{}, err
		}
		if off >= a.Size && a.Size > 0 {
			return nil, store.Attrs{}, fmt.Errorf("azstore: get %s range at %d of %d bytes: %w", s.URI(key), off, a.Size, store.ErrInvalidRange)
		}
		return io.NopCloser(strings.NewReader("")), a, nil
	}
	rng := blob.HTTPRange{Offset: off}
	if n > 0 {
		rng.Count = n
	}
	out, err := s.blob(k).DownloadStream(ctx, &blob.DownloadStreamOptions{Range: rng})
	if err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) && (re.ErrorCode == "InvalidRange" || re.StatusCode == 416) && ctx.Err() == nil {
			if off == 0 {
				// An empty blob has no byte 0, but reading it from 0 is fine.
				return s.Get(ctx, key)
			}
			return nil, store.Attrs{}, fmt.Errorf("azstore: get %s range at %d: %w: %w", s.URI(key), off, store.ErrInvalidRange, &responseError{re.ErrorCode, re.StatusCode})
		}
		return nil, store.Attrs{}, s.mapError(ctx, opGetRange, key, err)
	}
	a := store.Attrs{Key: key, Size: deref(out.ContentLength, 0), ETag: etag(out.ETag), ModTime: utc(out.LastModified)}
	if total, ok := rangeTotal(deref(out.ContentRange, "")); ok {
		a.Size = total
	}
	if off >= a.Size && a.Size > 0 {
		// Azure answers 416 here; Azurite answers 206 with no bytes
		// ("bytes 1000-999/1000").
		out.Body.Close()
		return nil, store.Attrs{}, fmt.Errorf("azstore: get %s range at %d of %d bytes: %w", s.URI(key), off, a.Size, store.ErrInvalidRange)
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

// Copy implements store.Copier with Copy Blob within the container: the
// service copies the bytes, conditional on the source's ETag
// (x-ms-source-if-match) and on the destination's absence (If-None-Match:
// *). Within one storage account the copy completes before the reply; a
// copy still pending is polled until it ends. The destination is written
// atomically: a failed or aborted copy leaves an empty blob that the copy
// status marks as failed, which is deleted here. CopyFrom copies from
// another container of the account.
func (s *Store) Copy(ctx context.Context, dst, src string, opts store.CopyOptions) (store.Attrs, error) {
	ks, err := s.fullKey("copy", src)
	if err != nil {
		return store.Attrs{}, err
	}
	return s.copyBlob(ctx, dst, s.blob(ks).URL(), s.URI(src), opts)
}

// Sibling returns a store on another container (and root prefix) of the
// same storage account, with s's credential and settings: to list, read
// and copy from (CopyFrom) any container of the account the credential
// reaches. A missing container shows up as store.ErrBucketNotFound, as
// with New (not on Stat, whose HEAD carries no error code).
func (s *Store) Sibling(containerName, prefix string) (*Store, error) {
	root, err := rootIn(containerName, prefix)
	if err != nil {
		return nil, err
	}
	cc, err := s.newClient(containerName)
	if err != nil {
		return nil, err
	}
	o := *s
	o.cc, o.container, o.root = cc, containerName, root
	return &o, nil
}

// CopyFrom copies the blob srcKey of the container srcContainer (a full
// blob name, not relative to this store's root) of this store's storage
// account to the key dst of this store, with Copy Blob, as Copy does
// within the container: the service copies the bytes under the store's
// own credential, conditional per opts. A blob of another account needs
// a credential of its own for the source (a SAS in its URL), which this
// store does not have. Errors name the source.
func (s *Store) CopyFrom(ctx context.Context, dst, srcContainer, srcKey string, opts store.CopyOptions) (store.Attrs, error) {
	src, err := s.Sibling(srcContainer, "")
	if err != nil {
		return store.Attrs{}, err
	}
	ks, err := src.fullKey("copy from", srcKey)
	if err != nil {
		return store.Attrs{}, err
	}
	return s.copyBlob(ctx, dst, src.blob(ks).URL(), src.URI(srcKey), opts)
}

// copyBlob copies the blob at srcURL (named srcURI in errors) to the key
// dst of s: see Copy.
func (s *Store) copyBlob(ctx context.Context, dst, srcURL, srcURI string, opts store.CopyOptions) (store.Attrs, error) {
	kd, err := s.fullKey("copy", dst)
	if err != nil {
		return store.Attrs{}, err
	}
	in := &blob.StartCopyFromURLOptions{}
	if opts.SourceIfMatch != "" {
		in.SourceModifiedAccessConditions = &blob.SourceModifiedAccessConditions{SourceIfMatch: to.Ptr(azcore.ETag(opts.SourceIfMatch))}
	}
	if opts.IfNoneMatch {
		in.AccessConditions = accessConditions(store.PutOptions{IfNoneMatch: true})
	}
	out, err := s.blob(kd).StartCopyFromURL(ctx, srcURL, in)
	if err != nil {
		return store.Attrs{}, fmt.Errorf("copy from %s: %w", srcURI, s.copyError(ctx, dst, err))
	}
	status := deref(out.CopyStatus, blob.CopyStatusTypeSuccess)
	wait := copyPoll
	for status == blob.CopyStatusTypePending {
		select {
		case <-ctx.Done():
			s.abortCopy(ctx, kd, deref(out.CopyID, ""))
			return store.Attrs{}, fmt.Errorf("azstore: copy to %s: %w", s.URI(dst), ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, copyPollMax)
		p, err := s.blob(kd).GetProperties(ctx, nil)
		if err != nil {
			return store.Attrs{}, s.mapError(ctx, opCopyPending, dst, err)
		}
		status = deref(p.CopyStatus, blob.CopyStatusTypeSuccess)
		if status != blob.CopyStatusTypePending {
			out.ETag, out.LastModified = p.ETag, p.LastModified
		}
	}
	if status != blob.CopyStatusTypeSuccess {
		return store.Attrs{}, fmt.Errorf("azstore: copy from %s to %s: copy status %s: %w", srcURI, s.URI(dst), status, store.ErrTransient)
	}
	a, err := s.Stat(ctx, dst)
	if err != nil {
		return store.Attrs{}, err
	}
	if e := etag(out.ETag); e != "" && a.ETag != e {
		// Replaced since the copy: the copy's own attributes stand.
		a.ETag, a.ModTime = e, utc(out.LastModified)
	}
	return a, nil
}

// copyError maps a failed Copy Blob. A missing source is reported by
// Azure as 404 CannotVerifyCopySource or BlobNotFound; a lost source
// condition as 412 SourceConditionNotMet; a destination that exists under
// If-None-Match as 409 BlobAlreadyExists or 412 TargetConditionNotMet.
func (s *Store) copyError(ctx context.Context, dst string, err error) error {
	return s.mapError(ctx, opCopy, dst, err)
}

// abortCopy aborts a pending copy on a fresh, bounded context.
func (s *Store) abortCopy(ctx context.Context, kd, id string) {
	if id == "" {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	s.blob(kd).AbortCopyFromURL(actx, id, nil)
}
