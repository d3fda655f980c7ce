package azstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/pswap/pswap/store"
)

var (
	errWriterCommitted = errors.New("azstore: writer already committed")
	errWriterAborted   = errors.New("azstore: writer aborted")
)

// bufPools holds one *sync.Pool of block buffers per block size.
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

// writer streams a blob as staged blocks (Put Block), committed at once by
// Put Block List: full blocks are staged in the background, at most
// concurrency at a time, while the caller fills the next buffer; a blob
// that fits in one block is sent with one Put Blob at Commit. Staged blocks
// are invisible until committed, and Azure discards uncommitted blocks
// after a week (or when another write of the blob commits), so an aborted
// write needs no cleanup request. It is not safe for concurrent use.
type writer struct {
	s      *Store
	parent context.Context
	ctx    context.Context // cancelled on the first failure or on Abort
	cancel context.CancelFunc
	key    string
	full   string
	opts   store.PutOptions
	prefix string // this writer's block id prefix

	pool  *sync.Pool
	sem   chan struct{}
	wg    sync.WaitGroup
	buf   *[]byte
	size  int64
	ids   []string // block ids in order
	state writerState

	mu  sync.Mutex
	err error // first failure of a background block upload
}

// NewWriter starts a streaming write. No request is made until the first
// block is full (or Commit, for small blobs). The conditions in opts apply
// to the final Put Blob or Put Block List. Memory in use is about
// (Concurrency+1)*PartSize; block buffers are pooled across writers.
func (s *Store) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	full, err := s.fullKey("write", key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("azstore: write %s: %w", s.URI(key), err)
	}
	partSize := opts.PartSize
	if partSize <= 0 {
		partSize = s.partSize
	}
	partSize = min(partSize, MaxPartSize)
	conc := opts.Concurrency
	if conc <= 0 {
		conc = s.concurrency
	}
	var id [12]byte
	rand.Read(id[:])
	wctx, cancel := context.WithCancel(policy.WithRetryOptions(ctx, s.dataRetry))
	w := &writer{
		s: s, parent: ctx, ctx: wctx, cancel: cancel,
		key: key, full: full, opts: opts.PutOptions, prefix: hex.EncodeToString(id[:]),
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
		return 0, fmt.Errorf("azstore: write %s: %w", w.s.URI(w.key), err)
	}
	written := 0
	for len(p) > 0 {
		b := *w.buf
		if len(b) == cap(b) {
			// Flush only when more data follows, so that a blob of exactly
			// one block still goes out as a single Put Blob.
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

// blockID is the base64 id of block n: all of one blob's ids must have the
// same length, and each writer has its own, so that two writers of one
// blob never stage over each other's blocks.
func (w *writer) blockID(n int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s-%06d", w.prefix, n))
}

// flush hands the current buffer to a background Put Block and takes a
// fresh buffer. It blocks while Concurrency blocks are in flight.
func (w *writer) flush() error {
	if len(w.ids) >= maxBlocks {
		return fmt.Errorf("azstore: write %s: more than %d blocks of %d bytes: use a larger PartSize",
			w.s.URI(w.key), maxBlocks, cap(*w.buf))
	}
	select {
	case w.sem <- struct{}{}:
	case <-w.ctx.Done():
		if err := w.failed(); err != nil {
			return err
		}
		return fmt.Errorf("azstore: write %s: %w", w.s.URI(w.key), w.parent.Err())
	}
	id, buf := w.blockID(len(w.ids)), w.buf
	w.ids = append(w.ids, id)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.sem }()
		defer w.pool.Put(buf)
		_, err := w.s.block(w.full).StageBlock(w.ctx, id, streaming.NopCloser(bytes.NewReader(*buf)), nil)
		if err != nil {
			w.fail(w.s.mapError(w.parent, opStageBlock, w.key, err))
		}
	}()
	w.buf = w.getBuf()
	return nil
}

// Commit uploads what is buffered and makes the blob visible: one Put Blob
// for a blob smaller than a block, else the last block and Put Block List.
func (w *writer) Commit() (store.Attrs, error) {
	switch w.state {
	case stateCommitted:
		return store.Attrs{}, errWriterCommitted
	case stateAborted:
		if err := w.failed(); err != nil {
			return store.Attrs{}, err
		}
		return store.Attrs{}, errWriterAborted
	}
	a, err := w.commit()
	if err != nil {
		w.cleanup()
		return store.Attrs{}, err
	}
	w.state = stateCommitted
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
		return store.Attrs{}, fmt.Errorf("azstore: write %s: %w", w.s.URI(w.key), err)
	}
	if len(w.ids) == 0 {
		return w.s.put(w.ctx, w.key, w.full, *w.buf, w.opts)
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
	if err := w.parent.Err(); err != nil {
		return store.Attrs{}, fmt.Errorf("azstore: write %s: %w", w.s.URI(w.key), err)
	}
	out, err := w.s.block(w.full).CommitBlockList(w.ctx, w.ids, &blockblob.CommitBlockListOptions{
		AccessConditions: accessConditions(w.opts),
		HTTPHeaders:      httpHeaders(w.opts),
	})
	if err != nil {
		return store.Attrs{}, w.s.writeError(w.parent, putOp(opCommitList, w.opts), w.key, w.full, w.opts, err)
	}
	return store.Attrs{Key: w.key, Size: w.size, ETag: etag(out.ETag), ModTime: utc(out.LastModified)}, nil
}

// Abort discards the write. A no-op after Commit or a previous Abort.
func (w *writer) Abort() error {
	if w.state != stateOpen {
		return nil
	}
	return w.cleanup()
}

// cleanup stops the block uploads and waits for them. The staged blocks
// stay uncommitted: invisible, and discarded by Azure.
func (w *writer) cleanup() error {
	if w.state != stateOpen {
		return nil
	}
	w.state = stateAborted
	w.cancel()
	w.wg.Wait()
	if w.buf != nil {
		w.pool.Put(w.buf)
		w.buf = nil
	}
	return nil
}
