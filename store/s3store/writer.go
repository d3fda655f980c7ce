package s3store

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/pswap/pswap/internal/partupload"
	"github.com/pswap/pswap/store"
)

// abortTimeout bounds the cleanup request that aborts a multipart upload. It
// runs on a fresh context so that it still runs after the caller's is done.
const abortTimeout = 30 * time.Second

// createGrace is how long the creation of a multipart upload may go on
// after its write was cancelled (see writer.create).
const createGrace = 2 * time.Second

// target is a multipart upload, the [partupload.Target] of a streaming
// write: the pipeline (bounded memory, parallel parts, abort on error) is
// package partupload's; the requests, and their options, are here. The
// multipart upload is created by the first part's upload, while the caller
// goes on filling the second part (a CreateMultipartUpload took 20-120 ms
// on MinIO, during which nothing was read or sent); the other parts wait
// for it. A cancellation of the context the write was made with aborts
// the upload at any time.
type target struct {
	s      *Store
	parent context.Context
	key    string // relative
	full   string // with the root prefix
	opts   store.PutOptions

	// once creates the multipart upload; uploadID is "" until it exists
	// (or when its creation failed: createErr). Part uploads read them
	// after once.Do, Finish and Complete after every part upload returned.
	once      sync.Once
	uploadID  string
	createErr error
	stopAfter func() bool // stops the AfterFunc that aborts on ctx cancellation

	mu    sync.Mutex
	parts []types.CompletedPart

	completed bool // Complete made the object from the upload
}

var _ partupload.Preparer = (*target)(nil)

// Prepare creates the multipart upload before the first part is full
// (partupload.Writer.SizeHint: an existing file's size is known), so that
// its round trip overlaps the reading of that part instead of following it.
func (t *target) Prepare(ctx context.Context) {
	t.once.Do(func() { t.createErr = t.create(ctx) })
}

// NewWriter starts a streaming write. No request is made until the first
// part is full (or Commit, for small objects). The conditions in opts apply
// to the final PutObject or CompleteMultipartUpload. Memory in use is about
// (Concurrency+1)*PartSize; part buffers are pooled across writers.
func (s *Store) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	full, err := s.fullKey("write", key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("s3store: write %s: %w", s.URI(key), err)
	}
	conc := opts.Concurrency
	if conc <= 0 {
		conc = s.concurrency
	}
	t := &target{s: s, parent: ctx, key: key, full: full, opts: opts.PutOptions}
	return partupload.New(ctx, t, partupload.Options{
		Name: "s3store", URI: s.URI(key), Unit: "part",
		PartSize: normPartSize(opts.PartSize, s.partSize), Concurrency: conc, MaxParts: maxParts,
	}), nil
}

// create creates the multipart upload; ctx is the write's.
func (t *target) create(ctx context.Context) error {
	in := &s3.CreateMultipartUploadInput{Bucket: &t.s.bucket, Key: &t.full}
	if t.opts.ContentType != "" {
		in.ContentType = aws.String(t.opts.ContentType)
	}
	if !t.s.whenRequired {
		in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	// The creation runs in the background, so a cancellation can come
	// while it is in flight: cut off then, the server may have created an
	// upload whose id never arrives, and nobody would abort it. So it gets
	// createGrace past the write's cancellation to finish (an interrupted
	// command still stops promptly when the store does not answer); if it
	// does, the AfterFunc below aborts the upload at once, and Abort (which
	// waits for the creation) aborts it too. An upload whose creation is
	// cut off all the same is left to GC (abandoned multipart uploads).
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(createGrace, cancel) })
	defer stop()
	out, err := t.s.client.CreateMultipartUpload(cctx, in, dataRetries)
	if err != nil {
		return t.s.mapError(t.parent, opCreateMPU, t.key, err)
	}
	t.uploadID = aws.ToString(out.UploadId)
	// A cancelled context aborts the upload even if the caller never calls
	// Abort again (at once if it already is). Write, Commit and Abort also
	// abort it themselves.
	id := t.uploadID
	t.stopAfter = context.AfterFunc(t.parent, func() { t.abortRemote(id) })
	return nil
}

// UploadPart sends one part, after creating the multipart upload (the
// first part) or waiting for its creation (the others).
func (t *target) UploadPart(ctx context.Context, num int, data []byte) error {
	t.once.Do(func() { t.createErr = t.create(ctx) })
	if t.createErr != nil {
		return t.createErr
	}
	in := &s3.UploadPartInput{
		Bucket:        &t.s.bucket,
		Key:           &t.full,
		UploadId:      &t.uploadID,
		PartNumber:    aws.Int32(int32(num)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if t.s.whenRequired {
		in.ContentMD5 = aws.String(contentMD5(data))
	} else {
		in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	out, err := t.s.client.UploadPart(ctx, in, dataRetries, unsignedPayload)
	if err != nil {
		return t.s.mapError(t.parent, opUploadPart, t.key, err)
	}
	t.mu.Lock()
	t.parts = append(t.parts, types.CompletedPart{
		PartNumber:    aws.Int32(int32(num)),
		ETag:          out.ETag,
		ChecksumCRC32: out.ChecksumCRC32,
	})
	t.mu.Unlock()
	return nil
}

// Put sends an object smaller than a part with one PutObject.
func (t *target) Put(ctx context.Context, data []byte) (store.Attrs, error) {
	return t.s.put(ctx, t.key, data, t.opts, dataRetries)
}

// Complete sends CompleteMultipartUpload, with the write's conditions.
func (t *target) Complete(ctx context.Context, n int, size int64) (store.Attrs, error) {
	if len(t.parts) != n {
		return store.Attrs{}, fmt.Errorf("s3store: write %s: %d of %d parts uploaded", t.s.URI(t.key), len(t.parts), n)
	}
	slices.SortFunc(t.parts, func(a, b types.CompletedPart) int {
		return cmp.Compare(aws.ToInt32(a.PartNumber), aws.ToInt32(b.PartNumber))
	})
	in := &s3.CompleteMultipartUploadInput{
		Bucket:          &t.s.bucket,
		Key:             &t.full,
		UploadId:        &t.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: t.parts},
	}
	if t.opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if t.opts.IfMatch != "" {
		in.IfMatch = aws.String(t.opts.IfMatch)
	}
	out, err := t.s.client.CompleteMultipartUpload(ctx, in, dataRetries)
	if err != nil {
		return store.Attrs{}, t.s.mapError(t.parent, putOp(opCompleteMPU, t.opts), t.key, err)
	}
	t.completed = true
	return store.Attrs{
		Key:     t.key,
		Size:    size,
		ETag:    aws.ToString(out.ETag),
		ModTime: serverTime(out.ResultMetadata),
	}, nil
}

// Finish stops the abort on cancellation and, unless the write committed
// from it, aborts the multipart upload (if it was created: a write that
// Prepare created one for and that still ended in one Put aborts it too).
func (t *target) Finish(committed bool) error {
	if t.stopAfter != nil {
		t.stopAfter()
	}
	if (committed && t.completed) || t.uploadID == "" {
		return nil
	}
	return t.abortRemote(t.uploadID)
}

// abortRemote aborts the multipart upload id on a fresh, bounded context.
// An upload already gone is not an error.
func (t *target) abortRemote(id string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.parent), abortTimeout)
	defer cancel()
	return t.s.AbortUpload(ctx, store.Upload{Key: t.key, ID: id})
}

// DataAttempts is the least number of attempts the SDK makes at each
// request of a streaming write (CreateMultipartUpload, UploadPart,
// CompleteMultipartUpload, the PutObject of a small object), even when the
// client is configured with fewer (Options.RetryMaxAttempts 1, as the CLI
// sets it when pswap's own loops retry the small metadata requests).
// Nothing above a Writer retries one part: without this, a single 503
// SlowDown on one part of a large upload would fail the whole commit. A
// retried completion or PutObject that meets its own earlier success gets
// a precondition failure, which staging resolves by reading the object back.
const DataAttempts = 3

// dataRetries raises an operation's attempts to DataAttempts.
func dataRetries(o *s3.Options) {
	if o.RetryMaxAttempts < DataAttempts {
		o.RetryMaxAttempts = DataAttempts
	}
}
