package staging

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Go structs are encoded a row group at a time. With one encoder (the
// default) Write encodes them into the part directly (writeDirect). With
// several (Options.Encoders), several row groups at once, committed to the
// file in row order:
//
//   - Write copies the caller's rows into a chunk (a []T the Stager owns,
//     so the caller may reuse its slice as soon as Write returns).
//   - A full chunk is encoded on its own goroutine by a new parquet-go
//     GenericWriter into a Parquet file in memory: the same writer, the
//     same options and the same calls as if the chunk were written
//     directly, so the pages are the pages a single writer gives.
//   - The chunks are committed in order on the Stager's goroutine: each
//     row group of the chunk's file is copied into the part with
//     GenericWriter.WriteRowGroup, whose verbatim copy moves the compressed
//     pages, statistics and page index without decoding them. A chunk whose
//     pages cannot be copied verbatim (a dictionary that fell back to PLAIN
//     mixes encodings within a column) is written into the part from its
//     rows instead, which gives the same bytes.
//
// Nothing in the bytes depends on the number of encoders or on scheduling:
// a chunk is a fixed run of rows (chunkRows, counted from the start of the
// file, whatever the Write calls), its pages depend on its rows alone, and
// the file rolls over between chunks, when the part has reached the target
// size after a chunk's commit, in commit order.
//
// (parquet-go's ConcurrentRowGroupWriter, the other way to encode row
// groups in parallel, takes rows only as []parquet.Row values: building
// those costs more than the encoding saves, and its typed write path is
// reserved to GenericWriter's own current row group.)

// maxAutoEncoders caps the default number of encoders: each holds a row
// group (its rows and its encoding) in memory.
const maxAutoEncoders = 4

// encoders is the number of chunks encoded at once; 1 is the direct path.
// The default leaves one core to the row hash and the upload: GOMAXPROCS-1
// encoders, at most maxAutoEncoders, so one on 2 cores. There, 2 encoders
// made a write 0.64x as long on an idle machine but up to 1.65x as long on
// a loaded one (other processes on both cores: an encoder descheduled
// holds up the row groups after it, which commit in order), where the
// direct path degrades evenly (BENCHMARKS.md, section 3).
func (o Options) encoders() int {
	procs := runtime.GOMAXPROCS(0)
	n := o.Encoders
	if n <= 0 {
		n = min(procs-1, maxAutoEncoders)
	}
	if n > 1 && procs > 1 {
		return n
	}
	return 1
}

// chunkRowsFor is the number of rows of T in one chunk: RowGroupRows, or
// fewer when the chunk's copy of the rows would exceed RowGroupBytes or
// TargetFileSize (a multiple of structBatch, at least one batch). Files
// roll over between chunks: the second bound keeps them near the target
// (encoded rows are rarely larger than the structs they come from).
func chunkRowsFor[T any](o Options) int {
	n := o.RowGroupRows
	if size := int64(unsafe.Sizeof(*new(T))); size > 0 {
		limit := min(o.RowGroupBytes, o.TargetFileSize)
		if byBytes := limit / size / structBatch * structBatch; byBytes < n {
			n = max(byBytes, structBatch)
		}
	}
	return int(n)
}

// pipe is the pending rows of one struct type: the Stager holds at most
// one.
type pipe interface {
	// drain encodes and commits every row written.
	drain() error
	// abandon waits for the encoders and drops every pending row.
	abandon()
	// pending is the number of rows written but not committed yet.
	pending() int64
}

// structChunk is one chunk of rows and its encoding.
type structChunk[T any] struct {
	rows []T
	file *bytes.Buffer // the chunk encoded as a Parquet file
	pf   *pq.File
	err  error
	done chan struct{} // closed once encoded
}

// rowPipe is the pipe of rows of type T.
type rowPipe[T any] struct {
	s         *Stager
	si        *structInfo
	chunkRows int
	encoders  int
	sem       chan struct{} // one token per encoder running
	// direct: no encoder goroutines (one encoder): Write encodes the rows
	// into the part itself, in the same batches and with the same row
	// group ends as an encoder would (see writeDirect), which gives the
	// same bytes.
	direct    bool
	inChunk   int  // direct: rows of the current chunk written to the part
	chunkDone bool // direct: a chunk ended; the part may have to roll over
	pend      []T  // direct: rows copied, not written yet (less than a batch)

	fill  []T               // the chunk being filled, or nil
	queue []*structChunk[T] // dispatched, in row order
	rows  int64             // rows in fill and queue

	freeRows [][]T
	freeBufs []*bytes.Buffer
}

func newRowPipe[T any](s *Stager, si *structInfo) *rowPipe[T] {
	n := s.opts.encoders()
	return &rowPipe[T]{s: s, si: si, chunkRows: chunkRowsFor[T](s.opts), encoders: n, sem: make(chan struct{}, n),
		direct: n == 1}
}

func (p *rowPipe[T]) pending() int64 { return p.rows }

// write copies rows into chunks and starts encoding the full ones. It does
// not touch the Stager's current part (the row hash may be using it), but
// for the direct path's writes to the part's encoder.
func (p *rowPipe[T]) write(rows []T) error {
	p.rows += int64(len(rows))
	if p.direct {
		return p.writeDirect(rows)
	}
	for len(rows) > 0 {
		if p.fill == nil {
			if k := len(p.freeRows); k > 0 {
				p.fill, p.freeRows = p.freeRows[k-1][:0], p.freeRows[:k-1]
			} else {
				p.fill = make([]T, 0, p.chunkRows)
			}
		}
		k := min(len(rows), p.chunkRows-len(p.fill))
		p.fill = append(p.fill, rows[:k]...)
		rows = rows[k:]
		if len(p.fill) == p.chunkRows {
			p.dispatch()
		}
	}
	return nil
}

// writeDirect writes rows into the part's encoder in batches of
// structBatch rows counted from the start of the chunk, ending the row
// group where writeChunk does. Rows after the end of a chunk are kept (in
// pend) until commitReady has decided whether the part rolls over, and so
// are the rows of a batch not yet complete.
func (p *rowPipe[T]) writeDirect(rows []T) error {
	for len(rows) > 0 {
		need := min(structBatch, p.chunkRows-p.inChunk)
		if p.chunkDone || len(p.pend) > 0 || len(rows) < need {
			k := len(rows)
			if !p.chunkDone {
				k = min(k, need-len(p.pend))
			}
			p.pend = append(p.pend, rows[:k]...)
			rows = rows[k:]
			if !p.chunkDone && len(p.pend) == need {
				if err := p.writeBatch(p.pend); err != nil {
					return err
				}
				p.pend = p.pend[:0]
			}
			continue
		}
		if err := p.writeBatch(rows[:need]); err != nil {
			return err
		}
		rows = rows[need:]
	}
	return nil
}

// writeBatch writes one batch of the current chunk into the part.
func (p *rowPipe[T]) writeBatch(b []T) error {
	s := p.s
	enc := s.cur.enc.(*structEncoder[T])
	if _, err := enc.w.Write(b); err != nil {
		return fmt.Errorf("staging: write %s: %w", s.cur.key, err)
	}
	s.cur.rows += int64(len(b))
	p.rows -= int64(len(b))
	p.inChunk += len(b)
	end := p.inChunk == p.chunkRows
	if end || enc.w.Size()-s.cur.written() >= s.opts.RowGroupBytes {
		if err := enc.w.Flush(); err != nil {
			return fmt.Errorf("staging: write %s: %w", s.cur.key, err)
		}
	}
	if end {
		p.inChunk, p.chunkDone = 0, true
	}
	return nil
}

// settleDirect rolls the part over after a chunk ended, if it reached the
// target size, and writes the complete batches kept meanwhile.
func (p *rowPipe[T]) settleDirect() error {
	s := p.s
	if p.chunkDone {
		p.chunkDone = false
		if s.cur.enc.size(0) >= s.opts.TargetFileSize {
			if err := s.closeFile(); err != nil {
				return err
			}
		}
	}
	if len(p.pend) >= min(structBatch, p.chunkRows-p.inChunk) {
		if s.cur == nil {
			if err := s.openFile(newStructEncoder[T](p.si, s.pqOpts)); err != nil {
				return err
			}
		}
		need := min(structBatch, p.chunkRows-p.inChunk)
		if err := p.writeBatch(p.pend[:need]); err != nil {
			return err
		}
		p.pend = p.pend[:copy(p.pend, p.pend[need:])]
	}
	return nil
}

// dispatch starts encoding the chunk being filled.
func (p *rowPipe[T]) dispatch() {
	c := &structChunk[T]{rows: p.fill, done: make(chan struct{})}
	p.fill = nil
	if p.direct {
		close(c.done)
		p.queue = append(p.queue, c)
		return
	}
	if k := len(p.freeBufs); k > 0 {
		c.file, p.freeBufs = p.freeBufs[k-1], p.freeBufs[:k-1]
		c.file.Reset()
	} else {
		c.file = new(bytes.Buffer)
	}
	p.queue = append(p.queue, c)
	go p.encode(c)
}

// encode writes c's rows to its in-memory file; it runs on its own
// goroutine and touches nothing but c.
func (p *rowPipe[T]) encode(c *structChunk[T]) {
	defer close(c.done)
	p.sem <- struct{}{}
	defer func() { <-p.sem }()
	defer func() {
		// parquet-go panics on some values it cannot encode; a panic on
		// this goroutine would end the process.
		if r := recover(); r != nil {
			c.err = fmt.Errorf("staging: encoding rows: %v", r)
		}
	}()
	w := pq.NewGenericWriter[T](c.file, p.si.writerOptions(p.s.pqOpts)...)
	if err := writeChunk(w, c.rows, func() int64 { return int64(c.file.Len()) }, p.s.opts.RowGroupBytes); err != nil {
		c.err = err
		return
	}
	if err := w.Close(); err != nil {
		c.err = err
		return
	}
	c.pf, c.err = pq.OpenFile(bytes.NewReader(c.file.Bytes()), int64(c.file.Len()), pq.SkipBloomFilters(true))
}

// writeChunk writes one chunk of rows to w, structBatch rows at a time,
// ending a row group once it buffers maxBytes (written reports the bytes w
// has written to its output) and at the end of the chunk.
func writeChunk[T any](w *pq.GenericWriter[T], rows []T, written func() int64, maxBytes int64) error {
	for len(rows) > 0 {
		n := min(len(rows), structBatch)
		if _, err := w.Write(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
		if len(rows) > 0 && w.Size()-written() >= maxBytes {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}

// commitReady commits the chunks already encoded at the head of the queue,
// and waits for the oldest ones while more than the encoders are queued,
// so that memory holds at most encoders+1 chunks and the one being filled.
func (p *rowPipe[T]) commitReady() error {
	if p.direct {
		return p.settleDirect()
	}
	for len(p.queue) > 0 {
		c := p.queue[0]
		if len(p.queue) <= p.encoders {
			select {
			case <-c.done:
			default:
				return nil
			}
		}
		if err := p.commitHead(); err != nil {
			return err
		}
	}
	return nil
}

// drain encodes the chunk being filled and commits every chunk.
func (p *rowPipe[T]) drain() error {
	if p.direct {
		if err := p.settleDirect(); err != nil {
			return err
		}
		if len(p.pend) == 0 && p.inChunk == 0 {
			return nil
		}
		if len(p.pend) > 0 { // the last, short, batch
			if p.s.cur == nil {
				if err := p.s.openFile(newStructEncoder[T](p.si, p.s.pqOpts)); err != nil {
					return err
				}
			}
			if err := p.writeBatch(p.pend); err != nil {
				return err
			}
			p.pend = p.pend[:0]
		}
		if p.inChunk > 0 { // the end of the last chunk
			enc := p.s.cur.enc.(*structEncoder[T])
			if err := enc.w.Flush(); err != nil {
				return fmt.Errorf("staging: write %s: %w", p.s.cur.key, err)
			}
			p.inChunk = 0
		}
		return nil
	}
	if len(p.fill) > 0 {
		p.dispatch()
	}
	for len(p.queue) > 0 {
		if err := p.commitHead(); err != nil {
			return err
		}
	}
	return nil
}

func (p *rowPipe[T]) abandon() {
	for _, c := range p.queue {
		<-c.done
	}
	p.queue, p.fill, p.freeRows, p.freeBufs, p.pend, p.rows = nil, nil, nil, nil, nil, 0
}

// commitHead waits for the oldest chunk, appends it to the current part
// (opening one if needed), and closes the part once it has reached the
// target size.
func (p *rowPipe[T]) commitHead() error {
	c := p.queue[0]
	<-c.done
	p.queue = p.queue[1:]
	if c.err != nil {
		return fmt.Errorf("staging: encode: %w", c.err)
	}
	s := p.s
	if s.cur == nil {
		if err := s.openFile(newStructEncoder[T](p.si, s.pqOpts)); err != nil {
			return err
		}
	}
	enc := s.cur.enc.(*structEncoder[T])
	if c.pf != nil && copyable(c.pf) {
		for _, rg := range c.pf.RowGroups() {
			if _, err := enc.w.WriteRowGroup(rg); err != nil {
				return fmt.Errorf("staging: write %s: %w", s.cur.key, err)
			}
		}
	} else if err := writeChunk(enc.w, c.rows, s.cur.written, s.opts.RowGroupBytes); err != nil {
		return fmt.Errorf("staging: write %s: %w", s.cur.key, err)
	}
	s.cur.rows += int64(len(c.rows))
	p.rows -= int64(len(c.rows))
	p.freeRows = append(p.freeRows, c.rows)
	if c.file != nil {
		p.freeBufs = append(p.freeBufs, c.file)
	}
	c.rows, c.file, c.pf = nil, nil, nil
	if enc.w.Size() >= s.opts.TargetFileSize {
		return s.closeFile()
	}
	return nil
}

// copyable reports whether GenericWriter.WriteRowGroup copies the row
// groups of f verbatim: every column chunk's data pages have one encoding,
// the dictionary encoding exactly when the chunk has a dictionary page, and
// the chunk has a page index. (The writer that wrote f has the options of
// the part's writer, so that encoding is the configured one.) Otherwise
// parquet-go would decode and re-encode the row group, which costs more
// than writing its rows again.
func copyable(f *pq.File) bool {
	for _, rg := range f.Metadata().RowGroups {
		for _, cc := range rg.Columns {
			if cc.ColumnIndexOffset == 0 || cc.OffsetIndexOffset == 0 {
				return false
			}
			dict, data := false, format.Encoding(-1)
			for _, st := range cc.MetaData.EncodingStats {
				switch st.PageType {
				case format.DictionaryPage:
					dict = true
				case format.DataPage, format.DataPageV2:
					if data != -1 && st.Encoding != data {
						return false
					}
					data = st.Encoding
				default:
					return false
				}
			}
			isDict := data == format.RLEDictionary // parquet-go writes no PLAIN_DICTIONARY
			if data == -1 || dict != isDict {
				return false
			}
		}
	}
	return true
}

// structEncoder writes one file of T rows with parquet-go.
type structEncoder[T any] struct {
	w *pq.GenericWriter[T]
}

func (e *structEncoder[T]) close() error     { return e.w.Close() }
func (e *structEncoder[T]) size(int64) int64 { return e.w.Size() }

// newStructEncoder builds a part's encoder. A new writer per file:
// parquet-go's GenericWriter.Reset (v0.32) does not give the bytes a new
// writer gives for the same rows (TestResetWriterBytes), and output must
// be deterministic.
func newStructEncoder[T any](si *structInfo, opts []pq.WriterOption) func(w io.Writer) (encoder, error) {
	return func(w io.Writer) (encoder, error) {
		return &structEncoder[T]{w: pq.NewGenericWriter[T](w, si.writerOptions(opts)...)}, nil
	}
}

// structPipeFor returns the current part's encoder and the pipe of rows of
// type T, first committing and closing what another input kind left.
func structPipeFor[T any](s *Stager, si *structInfo) (*rowPipe[T], error) {
	if p, ok := s.pipe.(*rowPipe[T]); ok {
		if s.cur == nil {
			// The last commit closed a full file: open the next one now, so
			// that the row hash has a part to add to.
			return p, s.openFile(newStructEncoder[T](si, s.pqOpts))
		}
		return p, nil
	}
	if s.pipe != nil || s.cur != nil {
		if err := s.closePart(); err != nil {
			return nil, err
		}
	}
	if err := s.openFile(newStructEncoder[T](si, s.pqOpts)); err != nil {
		return nil, err
	}
	p := newRowPipe[T](s, si)
	s.pipe = p
	return p, nil
}
