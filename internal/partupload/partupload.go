package partupload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/pswap/pswap/store"
)

// Target is what a store does with the parts of one write. Its methods are
// called by the [Writer] only: UploadPart from background goroutines (at
// most Concurrency at a time), the others from the caller's goroutine once
// every part upload has returned.
type Target interface {
	// UploadPart sends part num (1 for the first) whose bytes are data,
	// valid only until it returns. ctx is cancelled at the first failure
	// of any part, or when the write is aborted. An error fails the write.
	UploadPart(ctx context.Context, num int, data []byte) error
	// Put writes an object that fits in one part, in one request: no part
	// was uploaded.
	Put(ctx context.Context, data []byte) (store.Attrs, error)
	// Complete makes the object of parts 1..parts, all uploaded, of size
	// bytes in all.
	Complete(ctx context.Context, parts int, size int64) (store.Attrs, error)
	// Finish ends the write once, after the last part upload returned:
	// committed tells a write that made its object from one whose parts
	// are to be discarded (a failure, or Abort). Its error is Abort's.
	Finish(committed bool) error
}

// Preparer is a Target that can get ready for the parts before the first
// one is full: an S3 multipart upload is created so (Writer.SizeHint).
// Prepare is called at most once, from a background goroutine that Commit
// and Abort wait for; Finish must then discard what it prepared unless
// Complete used it (an object that turned out to fit one Put).
type Preparer interface {
	Prepare(ctx context.Context)
}

// Options describe a write. Name and URI only make the messages.
type Options struct {
	Name        string // the store package, leading every message ("s3store")
	URI         string // the object written
	Unit        string // what a part is called in messages ("part", "block"); "part" if empty
	PartSize    int64  // the size of each part but the last; must be > 0
	Concurrency int    // part uploads at once; 1 if < 1
	MaxParts    int    // the store's limit on the parts of one object; none if < 1
}

// ErrCommitted is returned by Write and Commit after a Commit.
var ErrCommitted = errors.New("writer already committed")

// ErrSealed is returned by Write and ReadFrom after Seal.
var ErrSealed = errors.New("writer sealed: no more bytes after Seal")

// ErrAborted is returned by Write and Commit after Abort (Commit returns
// the failure that aborted the write, if one did).
var ErrAborted = errors.New("writer aborted")

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

type state int

const (
	stateOpen state = iota
	stateCommitted
	stateAborted
)

// Writer streams an object in parts to a Target: a store.Writer. Full parts
// are uploaded in the background, at most Concurrency at a time, while the
// caller fills the next buffer; a part is uploaded only when more data
// follows it, so that an object of exactly one part is still one Put. It is
// not safe for concurrent use.
type Writer struct {
	t      Target
	o      Options
	parent context.Context
	ctx    context.Context // cancelled on the first failure, on Abort and after Commit
	cancel context.CancelFunc

	pool     *sync.Pool
	free     chan *[]byte // buffers of finished part uploads, for this write's next parts
	sem      chan struct{}
	wg       sync.WaitGroup
	buf      *[]byte
	size     int64
	next     int // number of parts handed to uploads
	state    state
	sealed   bool // Seal was called: no more bytes
	prepared bool // SizeHint started the Target's Prepare

	mu  sync.Mutex
	err error // first failure of a background part upload
}

// New starts a write to t. ctx governs the whole write: its cancellation
// stops the part uploads, and every request is made on a context derived
// from it. No request is made until a part is full, or Commit.
func New(ctx context.Context, t Target, o Options) *Writer {
	if o.Unit == "" {
		o.Unit = "part"
	}
	conc := max(o.Concurrency, 1)
	wctx, cancel := context.WithCancel(ctx)
	w := &Writer{
		t: t, o: o, parent: ctx, ctx: wctx, cancel: cancel,
		pool: poolFor(o.PartSize),
		sem:  make(chan struct{}, conc),
		free: make(chan *[]byte, conc),
	}
	w.buf = w.getBuf()
	return w
}

// getBuf takes a part buffer: one a finished part upload of this write
// gave back, else one from the pool. A part upload hands its buffer to
// this write before it frees its slot, so a write never holds more than
// Concurrency+1 buffers; through the pool alone it took one or two more
// per write (a buffer put back on another P sits in that P's private
// slot, which Get on this one does not see, and a GC empties the pool),
// each 8 MiB of fresh memory to fault in.
func (w *Writer) getBuf() *[]byte {
	var b *[]byte
	select {
	case b = <-w.free:
	default:
		b = w.pool.Get().(*[]byte)
	}
	*b = (*b)[:0]
	return b
}

// putBuf gives a finished part upload's buffer back: to this write first.
func (w *Writer) putBuf(b *[]byte) {
	select {
	case w.free <- b:
	default:
		w.pool.Put(b)
	}
}

// releaseBufs puts the write's buffers back in the pool, for other writes,
// once no part upload runs.
func (w *Writer) releaseBufs() {
	if w.buf != nil {
		w.pool.Put(w.buf)
		w.buf = nil
	}
	for {
		select {
		case b := <-w.free:
			w.pool.Put(b)
		default:
			return
		}
	}
}

// errorf is an error about the write, led by the store and the object.
func (w *Writer) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: write %s: "+format, append([]any{w.o.Name, w.o.URI}, args...)...)
}

func (w *Writer) stateError() error {
	if w.state == stateCommitted {
		return fmt.Errorf("%s: %w", w.o.Name, ErrCommitted)
	}
	return fmt.Errorf("%s: %w", w.o.Name, ErrAborted)
}

func (w *Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// fail records the first failure and stops the other part uploads.
func (w *Writer) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.cancel()
}

// Write buffers p, handing each full part to a background upload once more
// data follows it. It blocks while Concurrency parts are in flight. After
// a failure the write is aborted.
func (w *Writer) Write(p []byte) (int, error) {
	if err := w.ready(len(p) > 0); err != nil {
		return 0, err
	}
	written := 0
	for len(p) > 0 {
		b := *w.buf
		if len(b) == cap(b) {
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

// ready returns why no bytes may be added now: the write is over, sealed
// (when adding), or its uploads failed or its context ended (these two
// abort it).
func (w *Writer) ready(adding bool) error {
	if w.state != stateOpen {
		return w.stateError()
	}
	if w.sealed && adding {
		return fmt.Errorf("%s: %w", w.o.Name, ErrSealed)
	}
	if err := w.failed(); err != nil {
		w.cleanup()
		return err
	}
	if err := w.parent.Err(); err != nil {
		w.cleanup()
		return w.errorf("%w", err)
	}
	return nil
}

// ReadFrom reads r until EOF straight into the part buffers (one copy less
// than Write: an existing file goes from the page cache to a part buffer
// and from there to the socket). Parts are handed to background uploads as
// Write hands them: a full part only once more data follows it (a one-byte
// read tells), so that an object of exactly one part is still one Put. It
// blocks while Concurrency parts are in flight. After a failure the write
// is aborted; an error of r is returned as it is and leaves the write
// open.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	var probe [1]byte
	for {
		if err := w.ready(true); err != nil {
			return total, err
		}
		b := *w.buf
		if len(b) == cap(b) {
			// Full: upload it only if more data follows.
			n, err := r.Read(probe[:])
			if n > 0 {
				if ferr := w.flush(); ferr != nil {
					w.cleanup()
					return total, ferr
				}
				*w.buf = append(*w.buf, probe[0])
				w.size++
				total++
			}
			if err == io.EOF {
				return total, nil
			}
			if err != nil {
				return total, err
			}
			continue
		}
		n, err := r.Read(b[len(b):min(cap(b), len(b)+readChunk)])
		*w.buf = b[:len(b)+n]
		w.size += int64(n)
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// readChunk bounds each read of ReadFrom, so that a reader that goes over
// what it has just read (the SHA-256 staging tees off the reads) finds it
// in the CPU's cache: with reads of a whole 8 MiB part that hash's CPU
// time went up by about a quarter (pprof of 10 commits of a 75 MiB file),
// more than the copy saved.
const readChunk = 1 << 20

// flush hands the current buffer to a background upload and takes a fresh
// buffer. It blocks while Concurrency parts are in flight.
func (w *Writer) flush() error {
	if w.o.MaxParts > 0 && w.next >= w.o.MaxParts {
		return w.errorf("more than %d %ss of %d bytes: use a larger PartSize", w.o.MaxParts, w.o.Unit, cap(*w.buf))
	}
	select {
	case w.sem <- struct{}{}:
	case <-w.ctx.Done():
		if err := w.failed(); err != nil {
			return err
		}
		return w.errorf("%w", w.parent.Err())
	}
	w.next++
	num, buf := w.next, w.buf
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.sem }()
		defer w.putBuf(buf)
		if err := w.t.UploadPart(w.ctx, num, *buf); err != nil {
			w.fail(err)
		}
	}()
	w.buf = w.getBuf()
	return nil
}

// SizeHint tells the writer how many bytes are coming, when the caller
// knows (an existing file). When they are more than one part, a Target
// that is a Preparer starts getting ready at once, in the background (an
// S3 multipart upload is created while the first part fills instead of
// after). A wrong hint costs at most that preparation.
func (w *Writer) SizeHint(size int64) {
	p, ok := w.t.(Preparer)
	if !ok || w.prepared || w.state != stateOpen || w.next > 0 || size <= w.o.PartSize {
		return
	}
	w.prepared = true
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		p.Prepare(w.ctx)
	}()
}

// Seal ends the bytes of the write: when parts have gone out already, what
// is buffered goes out now as the last part, in the background, so that a
// caller with other work to finish before the Commit (a check of what it
// wrote) has the last part's upload overlap that work; Commit then only
// waits for the parts and completes. An object still within one part stays
// buffered for Commit's single Put. Write and ReadFrom fail after Seal
// (ErrSealed); Abort discards the write as before. Like flush, it blocks
// while Concurrency parts are in flight.
func (w *Writer) Seal() error {
	if w.state != stateOpen {
		return w.stateError()
	}
	if err := w.failed(); err != nil {
		w.cleanup()
		return err
	}
	if w.sealed {
		return nil
	}
	w.sealed = true
	if w.next > 0 && len(*w.buf) > 0 {
		if err := w.flush(); err != nil {
			w.cleanup()
			return err
		}
	}
	return nil
}

// Commit uploads what is buffered and makes the object visible: one Put
// for an object smaller than a part, else the last part and Complete. On
// any failure the write is aborted.
func (w *Writer) Commit() (store.Attrs, error) {
	switch w.state {
	case stateCommitted:
		return store.Attrs{}, w.stateError()
	case stateAborted:
		if err := w.failed(); err != nil {
			return store.Attrs{}, err // the failure that aborted the write
		}
		return store.Attrs{}, w.stateError()
	}
	a, err := w.commit()
	if err != nil {
		w.cleanup()
		return store.Attrs{}, err
	}
	w.state = stateCommitted
	w.t.Finish(true)
	w.cancel()
	w.releaseBufs()
	return a, nil
}

func (w *Writer) commit() (store.Attrs, error) {
	if err := w.failed(); err != nil {
		return store.Attrs{}, err
	}
	if err := w.parent.Err(); err != nil {
		return store.Attrs{}, w.errorf("%w", err)
	}
	if w.next == 0 {
		w.wg.Wait() // a Prepare in flight: Finish discards what it made
		return w.t.Put(w.ctx, *w.buf)
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
		return store.Attrs{}, w.errorf("%w", err)
	}
	return w.t.Complete(w.ctx, w.next, w.size)
}

// Abort discards the write: it stops the part uploads, waits for them and
// lets the Target discard what they sent. A no-op after Commit or a
// previous Abort.
func (w *Writer) Abort() error {
	return w.cleanup()
}

// cleanup moves the writer to the aborted state.
func (w *Writer) cleanup() error {
	if w.state != stateOpen {
		return nil
	}
	w.state = stateAborted
	w.cancel()
	w.wg.Wait()
	w.releaseBufs()
	return w.t.Finish(false)
}

var (
	_ store.Writer  = (*Writer)(nil)
	_ io.ReaderFrom = (*Writer)(nil)
)
