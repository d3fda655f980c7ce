package staging

import (
	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/pqscan"

	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pq "github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/retry"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store"
)

// cleanupTimeout bounds the best-effort deletion of written files after a
// failure whose context was cancelled.
const cleanupTimeout = time.Minute

// Stager writes the data files of one generation under a prefix of a
// store and returns the manifest Content that describes them.
//
// A Stager is safe for use by several goroutines, but calls are
// serialized. Any error is final: the Stager aborts the upload in flight,
// deletes the files it already wrote (best effort, bounded in time even
// when the context was cancelled), and returns the same error from every
// later call. Abort after a successful Finish does nothing, so
// `defer s.Abort(ctx)` is the idiom.
type Stager struct {
	mu     sync.Mutex
	ctx    context.Context
	st     store.Store
	prefix string
	opts   Options

	arrowProps *parquet.WriterProperties
	pqOpts     []pq.WriterOption

	err      error // sticky
	finished bool
	aborted  bool

	schema *pqscan.Schema // nil until the first input
	cur    *part          // file being written, or nil
	pipe   pipe           // rows of Go structs written but not committed yet, or nil
	next   int            // number of the next file
	files  []manifest.File
	keys   []string // keys written (committed) so far
	rows   int64
	sum    checksum.Sums
	// unread: a file was added with CheckFooter; the content checksum is
	// files-sha256.
	unread bool

	// The write buffer of the last file closed, reused by the next one.
	spareBuf *bufio.Writer

	structs map[reflect.Type]*structInfo
	arrows  map[string]*pqscan.Schema // by arrow.Schema fingerprint
	buf     []byte                    // scratch row encoding
	colh    checksum.ColHasher        // the Arrow path's content checksum

	conformed  map[string]*conversion // Options.Conform's answers, by canonical schema text
	converting bool                   // writing converted data: no second conversion
}

// New returns a Stager that writes files named part-00000.parquet,
// part-00001.parquet, ... under prefix (a folder: a trailing "/" is added
// when missing). ctx governs every upload of the Stager: cancelling it
// fails the Stager. Invalid options or prefix are reported by the first
// call.
func New(ctx context.Context, st store.Store, prefix string, opts Options) *Stager {
	RegisterCodecs()
	s := &Stager{
		ctx:     ctx,
		st:      st,
		opts:    opts.withDefaults(),
		structs: map[reflect.Type]*structInfo{},
		arrows:  map[string]*pqscan.Schema{},
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	s.prefix = prefix
	if err := store.ValidatePrefix(prefix); err != nil || prefix == "" {
		if err == nil {
			err = fmt.Errorf("%w: empty prefix", store.ErrInvalidKey)
		}
		s.err = fmt.Errorf("staging: prefix: %w", err)
		return s
	}
	var err error
	if s.arrowProps, err = s.opts.arrowProps(); err != nil {
		s.err = err
		return s
	}
	if s.pqOpts, err = s.opts.parquetGoOptions(); err != nil {
		s.err = err
		return s
	}
	if opts.Schema != nil {
		c, err := pqscan.SchemaOfArrow(opts.Schema, s.arrowProps)
		if err != nil {
			s.err = fmt.Errorf("staging: Options.Schema: %w", err)
			return s
		}
		s.schema = c
	}
	return s
}

// check reports whether the Stager accepts more input; a cancelled
// context fails it. Callers hold mu.
func (s *Stager) check() error {
	switch {
	case s.err != nil:
		return s.err
	case s.finished, s.aborted:
		return ErrClosed
	}
	if err := s.ctx.Err(); err != nil {
		return s.fail(err)
	}
	return nil
}

// fail makes err final: it aborts the upload in flight and deletes the
// files already written. Callers hold mu.
func (s *Stager) fail(err error) error {
	if s.err != nil {
		return s.err
	}
	if cerr := s.ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%w)", err, cerr)
	}
	s.err = err
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), cleanupTimeout)
	defer cancel()
	_ = s.discard(ctx)
	return err
}

// discard aborts the current file and deletes written ones.
func (s *Stager) discard(ctx context.Context) error {
	s.colh.Release()
	var errs []error
	if s.pipe != nil {
		s.pipe.abandon()
		s.pipe = nil
	}
	if s.cur != nil {
		errs = append(errs, s.cur.abort())
		s.cur = nil
	}
	if len(s.keys) > 0 {
		if err := store.DeleteAll(ctx, s.st, s.keys); err != nil {
			errs = append(errs, fmt.Errorf("staging: delete written files: %w", err))
		} else {
			s.keys = nil
		}
	}
	return errors.Join(errs...)
}

// setSchema establishes the generation's schema or checks c against it.
func (s *Stager) setSchema(input string, c *pqscan.Schema) error {
	if cv, err := s.conform(input, c); err != nil || cv != nil {
		if err != nil {
			return err
		}
		return cv // the caller converts (see promote.go), or fails
	}
	if s.schema == nil {
		s.schema = c
		return nil
	}
	if !s.schema.Equal(c) {
		return pqscan.Mismatch(input, c, s.schema)
	}
	return nil
}

// Finish closes the last file and returns the description of everything
// written. The caller commits it (writes the manifest and swaps the
// pointer). A generation with no rows has no files; its Schema is empty
// unless a schema was given or an input established one.
func (s *Stager) Finish(ctx context.Context) (manifest.Content, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return manifest.Content{}, err
	}
	if err := ctx.Err(); err != nil {
		return manifest.Content{}, s.fail(err)
	}
	if err := s.closePart(); err != nil {
		return manifest.Content{}, s.fail(err)
	}
	s.finished = true
	s.colh.Release()
	var c manifest.Content
	for _, f := range s.files {
		c.Add(f)
	}
	c.LimitStats(manifest.StatsBudget)
	if s.schema != nil {
		c.Schema = s.schema.Text
	}
	c.ContentChecksum = checksum.ColSumOf(c.Schema, s.rows, s.sum.Col)
	if s.unread {
		c.ContentChecksum = checksum.OfFiles(c.Files)
	} else if s.opts.LegacyChecksum {
		c.Equivalent = []string{checksum.RowSumOf(c.Schema, s.rows, s.sum.Row)}
	}
	return c, nil
}

// Rows returns the number of rows written so far (all inputs, the file
// being written included).
func (s *Stager) Rows() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.rows
	if s.cur != nil {
		n += s.cur.rows
	}
	if s.pipe != nil {
		n += s.pipe.pending()
	}
	return n
}

// Abort discards the generation: it aborts the upload in flight and
// deletes the files already written under the prefix. After a successful
// Finish it does nothing (the files belong to the caller then). It is safe
// to call more than once.
func (s *Stager) Abort(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return nil
	}
	s.aborted = true
	return s.discard(ctx)
}

// part is one data file being written.
type part struct {
	name string // file name within the prefix
	key  string
	w    store.Writer
	sink *hashSink
	buf  *bufio.Writer
	enc  encoder
	rows int64
	sum  checksum.Sums
}

// encoder is the Parquet writer of a part.
type encoder interface {
	// close writes the footer.
	close() error
	// size estimates the bytes of the file so far, given the bytes the
	// encoder has written to the part so far.
	size(written int64) int64
}

// footerEncoder is an encoder that hands out the footer it wrote (after
// close): its column statistics go into the manifest (File.Columns).
type footerEncoder interface {
	footer() *metadata.FileMetaData
}

// hashSink counts and hashes the bytes on their way to the store, and
// keeps the last ones once asked to (keepTail: the footer of an encoder
// that does not hand it out).
type hashSink struct {
	w    io.Writer
	h    hash.Hash
	n    int64
	tail []byte // with keepTail: the last bytes written, at least maxTail of them when there were
	keep bool
}

// maxTail bounds the footer staging reads back from the bytes it wrote:
// a longer one is left for the publisher to read (manifest statistics
// not recorded).
const maxTail = 1 << 20

func (h *hashSink) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	if h.keep {
		if n >= maxTail {
			h.tail = append(h.tail[:0], p[n-maxTail:n]...)
		} else {
			h.tail = append(h.tail, p[:n]...)
			if len(h.tail) > 2*maxTail {
				h.tail = append(h.tail[:0], h.tail[len(h.tail)-maxTail:]...)
			}
		}
	}
	return n, err
}

// ReadFrom reads r until EOF into the store's writer, hashing and counting
// the bytes as Write does: straight into its part buffers when the writer
// reads for itself (io.ReaderFrom: one copy less for an existing file),
// through Write otherwise. Not for a sink that keeps its tail.
func (h *hashSink) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := h.w.(io.ReaderFrom); ok && !h.keep {
		n, err := rf.ReadFrom(io.TeeReader(r, h.h))
		h.n += n
		return n, err
	}
	return io.Copy(struct{ io.Writer }{h}, r)
}

// columnStats are the statistics of a closed part's columns, from its
// encoder's footer or the bytes it ended with; nil when unknown.
func (p *part) columnStats() []manifest.ColumnStats {
	if fe, ok := p.enc.(footerEncoder); ok {
		if md := fe.footer(); md != nil {
			return pqscan.ColumnStats(md)
		}
		return nil
	}
	return pqscan.ColumnStatsOfTail(p.sink.tail)
}

// partBufferSize is the write buffer between an encoder and the store.
const partBufferSize = 1 << 20

// openPart starts a new file whose encoder newEnc builds, after committing
// the rows of Go structs still pending and closing their file.
func (s *Stager) openPart(newEnc func(w io.Writer) (encoder, error)) error {
	if s.pipe != nil {
		if err := s.closePart(); err != nil {
			return err
		}
	}
	return s.openFile(newEnc)
}

// openFile starts a new file whose encoder newEnc builds.
func (s *Stager) openFile(newEnc func(w io.Writer) (encoder, error)) error {
	name := fmt.Sprintf("part-%05d.parquet", s.next)
	key := s.prefix + name
	w, err := s.st.NewWriter(s.ctx, key, s.opts.Writer)
	if err != nil {
		return fmt.Errorf("staging: create %s: %w", key, err)
	}
	s.next++
	p := &part{name: name, key: key, w: w, sink: &hashSink{w: w, h: sha256.New()}}
	if p.buf = s.spareBuf; p.buf != nil {
		s.spareBuf = nil
		p.buf.Reset(p.sink)
	} else {
		p.buf = bufio.NewWriterSize(p.sink, partBufferSize)
	}
	if p.enc, err = newEnc(p.buf); err != nil {
		_ = w.Abort()
		return err
	}
	s.cur = p
	return nil
}

// closePart commits the rows of Go structs still pending (which may roll
// over to new files), then finishes the current file, if any, and records
// it.
func (s *Stager) closePart() error {
	if p := s.pipe; p != nil {
		s.pipe = nil
		if err := p.drain(); err != nil {
			p.abandon()
			return err
		}
	}
	return s.closeFile()
}

// closeFile finishes the current file, if any, and records it.
func (s *Stager) closeFile() error {
	p := s.cur
	if p == nil {
		return nil
	}
	if _, ok := p.enc.(footerEncoder); !ok {
		p.sink.keep = true // the footer goes out now: keep it for its statistics
	}
	if err := p.enc.close(); err != nil {
		return fmt.Errorf("staging: close %s: %w", p.key, err)
	}
	if err := p.buf.Flush(); err != nil {
		return fmt.Errorf("staging: write %s: %w", p.key, err)
	}
	s.spareBuf = p.buf
	sum := p.sink.h.Sum(nil)
	attrs, err := p.w.Commit()
	if err != nil {
		// The key is unique to this generation, so an object already there
		// (412 after the client retried a PUT whose reply was lost) or an
		// unknown outcome can only be this very write: accept it when the
		// store holds exactly the bytes written.
		if !errors.Is(err, store.ErrPrecondition) && !errors.Is(err, store.ErrTransient) {
			return fmt.Errorf("staging: commit %s: %w", p.key, err)
		}
		if ok, verr := s.holds(p.key, p.sink.n, sum); !ok {
			if verr != nil {
				err = fmt.Errorf("%w (reading it back: %v)", err, verr)
			}
			return fmt.Errorf("staging: commit %s: %w", p.key, err)
		}
		attrs = store.Attrs{Size: p.sink.n}
	}
	s.cur = nil
	s.keys = append(s.keys, p.key)
	if attrs.Size != 0 && attrs.Size != p.sink.n {
		return fmt.Errorf("staging: %s: store reports %d bytes, wrote %d", p.key, attrs.Size, p.sink.n)
	}
	s.files = append(s.files, manifest.File{
		Path:     p.name,
		Size:     p.sink.n,
		Rows:     p.rows,
		Checksum: manifest.SHA256Checksum(sum),
		Columns:  p.columnStats(),
	})
	s.rows += p.rows
	s.sum.Add(p.sum)
	return nil
}

// written is the number of bytes the encoder has written to the part.
func (p *part) written() int64 { return p.sink.n + int64(p.buf.Buffered()) }

// holds reports whether the store has key with exactly size bytes whose
// SHA-256 is sum. The read-back is a read like any other: transient
// failures are retried with backoff (a missing object is an answer).
func (s *Stager) holds(key string, size int64, sum []byte) (bool, error) {
	var ok bool
	p := retry.Policy{MaxAttempts: 8, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second}
	err := p.Do(s.ctx, store.IsRetryable, func(int) error {
		var err error
		ok, err = s.holdsOnce(key, size, sum)
		return err
	})
	return ok, err
}

func (s *Stager) holdsOnce(key string, size int64, sum []byte) (bool, error) {
	rc, attrs, err := s.st.Get(s.ctx, key)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	if attrs.Size != size {
		return false, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		return false, err
	}
	return n == size && bytes.Equal(h.Sum(nil), sum), nil
}

func (p *part) abort() error {
	if err := p.w.Abort(); err != nil {
		return fmt.Errorf("staging: abort %s: %w", p.key, err)
	}
	return nil
}

// maybeRoll closes the current file once it reached the target size.
func (s *Stager) maybeRoll() error {
	if s.cur != nil && s.cur.enc.size(s.cur.written()) >= s.opts.TargetFileSize {
		return s.closePart()
	}
	return nil
}
