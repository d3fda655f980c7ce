package s3store

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/pswap/pswap/store"
)

// abortTimeout bounds the cleanup request that aborts a multipart upload. It
// runs on a fresh context so that it still runs after the caller's is done.
const abortTimeout = 30 * time.Second

// createGrace is how long the creation of a multipart upload may go on
// after its write was cancelled (see writer.create).
const createGrace = 2 * time.Second

var (
	errWriterCommitted = errors.New("s3store: writer already committed")
	errWriterAborted   = errors.New("s3store: writer aborted")
)

// bufPools holds one *sync.Pool of part buffers per part size.
var bufPools sync.Map // int64 -> *sync.Pool

func poolFor(size int64) *sync.Pool {
	if p, ok := bufPools.Load(size); ok {
		return p.(*sync.Pool)
	}
	p, _ := bufPools.LoadOrStore(size, &sync.Pool{New: func() any {
		b := make([]byte, 0, size)
		return &b
	}})
	return p.(*sync.Pool)
}

type writerState int

const (
	stateOpen writerState = iota
	stateCommitted
	stateAborted
)

// writer streams an object as a multipart upload. Full parts are uploaded in
// the background, at most concurrency at a time, while the caller fills the
// next buffer; an object that fits in one part is sent with one PutObject
// at Commit. The multipart upload itself is created in the background too,
// when the first part is full: the first part's upload waits for it, while
// the caller goes on filling the second part (a CreateMultipartUpload took
// 20-120 ms on MinIO, during which nothing was read or sent). It is not
// safe for concurrent use, except that cancelling the context it was made
// with aborts the upload at any time.
type writer struct {
	s      *Store
	parent context.Context
	ctx    context.Context // cancelled on the first failure or on Abort
	cancel context.CancelFunc
	key    string // relative
	full   string // with the root prefix
	opts   store.PutOptions

	pool *sync.Pool
	sem  chan struct{}
	wg   sync.WaitGroup
	buf  *[]byte
	size int64
	next int32 // number of parts handed to uploaders

	// created is nil until the first part is full, then closed once the
	// multipart upload exists (uploadID and stopAfter set) or its creation
	// failed (recorded by fail). Goroutines read uploadID after <-created;
	// the writer's own methods after wg.Wait.
	created   chan struct{}
	uploadID  string
	stopAfter func() bool // stops the AfterFunc that aborts on ctx cancellation
	state     writerState

	mu    sync.Mutex
	parts []types.CompletedPart
	err   error // first failure of a background part upload
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
	partSize := normPartSize(opts.PartSize, s.partSize)
	conc := opts.Concurrency
	if conc <= 0 {
		conc = s.concurrency
	}
	wctx, cancel := context.WithCancel(ctx)
	w := &writer{
		s: s, parent: ctx, ctx: wctx, cancel: cancel,
		key: key, full: full, opts: opts.PutOptions,
		pool: poolFor(partSize),
		sem:  make(chan struct{}, conc),
	}
	w.buf = w.getBuf()
	return w, nil
}

func (w *writer) getBuf() *[]byte {
	b := w.pool.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

func (w *writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// fail records the first failure and stops the other part uploads.
func (w *writer) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.cancel()
}

func (w *writer) Write(p []byte) (int, error) {
	switch w.state {
	case stateCommitted:
		return 0, errWriterCommitted
	case stateAborted:
		return 0, errWriterAborted
	}
	if err := w.failed(); err != nil {
		w.cleanup()
		return 0, err
	}
	if err := w.parent.Err(); err != nil {
		w.cleanup()
		return 0, fmt.Errorf("s3store: write %s: %w", w.s.URI(w.key), err)
	}
	written := 0
	for len(p) > 0 {
		b := *w.buf
		if len(b) == cap(b) {
			// Flush only when more data follows, so that an object of
			// exactly one part still goes out as a single PutObject.
			if err := w.flush(); err != nil {
				w.cleanup()
				return written, err
			}
			b = *w.buf
		}
		n := copy(b[len(b):cap(b)], p)
		*w.buf = b[:len(b)+n]
		p = p[n:]
		written += n
		w.size += int64(n)
	}
	return written, nil
}

// flush hands the current buffer to a background upload, starting the
// creation of the multipart upload first if needed, and takes a fresh
// buffer. It blocks while Concurrency parts are in flight.
func (w *writer) flush() error {
	if w.created == nil {
		w.created = make(chan struct{})
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer close(w.created)
			if err := w.create(); err != nil {
				w.fail(err)
			}
		}()
	}
	if w.next >= maxParts {
		return fmt.Errorf("s3store: write %s: more than %d parts of %d bytes: use a larger PartSize",
			w.s.URI(w.key), maxParts, cap(*w.buf))
	}
	select {
	case w.sem <- struct{}{}:
	case <-w.ctx.Done():
		if err := w.failed(); err != nil {
			return err
		}
		return fmt.Errorf("s3store: write %s: %w", w.s.URI(w.key), w.parent.Err())
	}
	w.next++
	num, buf := w.next, w.buf
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.sem }()
		defer w.pool.Put(buf)
		<-w.created
		if w.uploadID == "" {
			return // the creation failed, and said so
		}
		w.uploadPart(num, *buf)
	}()
	w.buf = w.getBuf()
	return nil
}

func (w *writer) create() error {
	in := &s3.CreateMultipartUploadInput{Bucket: &w.s.bucket, Key: &w.full}
	if w.opts.ContentType != "" {
		in.ContentType = aws.String(w.opts.ContentType)
	}
	if !w.s.whenRequired {
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
	cctx, cancel := context.WithCancel(context.WithoutCancel(w.ctx))
	defer cancel()
	stop := context.AfterFunc(w.ctx, func() { time.AfterFunc(createGrace, cancel) })
	defer stop()
	out, err := w.s.client.CreateMultipartUpload(cctx, in, dataRetries)
	if err != nil {
		return w.s.mapError(w.parent, opCreateMPU, w.key, err)
	}
	w.uploadID = aws.ToString(out.UploadId)
	// A cancelled context aborts the upload even if the caller never calls
	// Abort again (at once if it already is). Write, Commit and Abort also
	// abort it themselves.
	id := w.uploadID
	w.stopAfter = context.AfterFunc(w.parent, func() { w.abortRemote(id) })
	return nil
}

func (w *writer) uploadPart(num int32, data []byte) {
	in := &s3.UploadPartInput{
		Bucket:        &w.s.bucket,
		Key:           &w.full,
		UploadId:      &w.uploadID,
		PartNumber:    aws.Int32(num),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if w.s.whenRequired {
		in.ContentMD5 = aws.String(contentMD5(data))
	} else {
		in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	out, err := w.s.client.UploadPart(w.ctx, in, dataRetries, unsignedPayload)
	if err != nil {
		w.fail(w.s.mapError(w.parent, opUploadPart, w.key, err))
		return
	}
	w.mu.Lock()
	w.parts = append(w.parts, types.CompletedPart{
		PartNumber:    aws.Int32(num),
		ETag:          out.ETag,
		ChecksumCRC32: out.ChecksumCRC32,
	})
	w.mu.Unlock()
}

// Commit uploads what is buffered and makes the object visible: one
// PutObject for an object smaller than a part, else the last part and
// CompleteMultipartUpload. On any failure the upload is aborted.
func (w *writer) Commit() (store.Attrs, error) {
	switch w.state {
	case stateCommitted:
		return store.Attrs{}, errWriterCommitted
	case stateAborted:
		if err := w.failed(); err != nil {
			return store.Attrs{}, err // the failure that aborted the write
		}
		return store.Attrs{}, errWriterAborted
	}
	a, err := w.commit()
	if err != nil {
		w.cleanup()
		return store.Attrs{}, err
	}
	w.state = stateCommitted
	if w.stopAfter != nil {
		w.stopAfter()
	}
	w.cancel()
	w.pool.Put(w.buf)
	w.buf = nil
	return a, nil
}

func (w *writer) commit() (store.Attrs, error) {
	if err := w.failed(); err != nil {
		return store.Attrs{}, err
	}
	if err := w.parent.Err(); err != nil {
		return store.Attrs{}, fmt.Errorf("s3store: write %s: %w", w.s.URI(w.key), err)
	}
	if w.created == nil {
		return w.s.put(w.ctx, w.key, *w.buf, w.opts, dataRetries)
	}
	if len(*w.buf) > 0 {
		if err := w.flush(); err != nil {
			return store.Attrs{}, err
		}
	}
	w.wg.Wait()
	if err := w.failed(); err != nil {
		return store.Attrs{}, err
	}
	if len(w.parts) != int(w.next) {
		return store.Attrs{}, fmt.Errorf("s3store: write %s: %d of %d parts uploaded", w.s.URI(w.key), len(w.parts), w.next)
	}
	slices.SortFunc(w.parts, func(a, b types.CompletedPart) int {
		return cmp.Compare(aws.ToInt32(a.PartNumber), aws.ToInt32(b.PartNumber))
	})
	in := &s3.CompleteMultipartUploadInput{
		Bucket:          &w.s.bucket,
		Key:             &w.full,
		UploadId:        &w.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	}
	if w.opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if w.opts.IfMatch != "" {
		in.IfMatch = aws.String(w.opts.IfMatch)
	}
	out, err := w.s.client.CompleteMultipartUpload(w.ctx, in, dataRetries)
	if err != nil {
		return store.Attrs{}, w.s.mapError(w.parent, putOp(opCompleteMPU, w.opts), w.key, err)
	}
	return store.Attrs{
		Key:     w.key,
		Size:    w.size,
		ETag:    aws.ToString(out.ETag),
		ModTime: serverTime(out.ResultMetadata),
	}, nil
}

// Abort discards the write: it stops the part uploads and aborts the
// multipart upload. A no-op after Commit or a previous Abort.
func (w *writer) Abort() error {
	if w.state != stateOpen {
		return nil
	}
	return w.cleanup()
}

// cleanup moves the writer to the aborted state: it cancels the part
// uploads, waits for them, and aborts the multipart upload on a fresh
// context.
func (w *writer) cleanup() error {
	if w.state != stateOpen {
		return nil
	}
	w.state = stateAborted
	w.cancel()
	w.wg.Wait()
	if w.stopAfter != nil {
		w.stopAfter()
	}
	if w.buf != nil {
		w.pool.Put(w.buf)
		w.buf = nil
	}
	if w.uploadID == "" {
		return nil
	}
	return w.abortRemote(w.uploadID)
}

// abortRemote aborts the multipart upload id on a fresh, bounded context.
// An upload already gone is not an error.
func (w *writer) abortRemote(id string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.parent), abortTimeout)
	defer cancel()
	return w.s.AbortUpload(ctx, store.Upload{Key: w.key, ID: id})
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
