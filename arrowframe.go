package pswap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The Arrow IPC stream's framing, read here rather than by the decoder's
// own message reader for two reasons: the decoder treats a stream that
// just stops like one that ends with the end-of-stream marker (a producer
// killed between two batches would commit a shorter table), and it sizes
// slices by counts read from a message's flatbuffer metadata without
// checking them against the message's size (a few damaged bytes asked
// for 124 GB and killed the process). Each message's metadata is checked
// first: every vector the decoder allocates by fits in the metadata.

const (
	// maxArrowMetadata bounds one message's flatbuffer metadata; a schema
	// of thousands of columns is far below it.
	maxArrowMetadata = 64 << 20
	// maxArrowBody bounds one message's body; a producer's batch is far
	// below it (pyarrow writes a Table chunk by chunk).
	maxArrowBody    = 16 << 30
	ipcContinuation = 0xFFFFFFFF
)

// errNoEOS: the stream stopped at a message boundary without the
// end-of-stream marker.
var errNoEOS = errors.New("the stream ended without the Arrow end-of-stream marker (the producer stopped before closing its writer?)")

// frameReader is an ipc.MessageReader over an Arrow IPC stream.
type frameReader struct {
	r      io.Reader
	mem    memory.Allocator
	msg    *ipc.Message // the last one, released on the next read
	sawEOS bool
}

func (f *frameReader) Retain() {}

func (f *frameReader) Release() {
	if f.msg != nil {
		f.msg.Release()
		f.msg = nil
	}
}

// Message returns the next message, bare io.EOF at the end-of-stream
// marker, errNoEOS at an end without it, or another error.
func (f *frameReader) Message() (*ipc.Message, error) {
	f.Release()
	var b [4]byte
	if _, err := io.ReadFull(f.r, b[:]); err != nil {
		if err == io.EOF { //nolint:errorlint // ReadFull returns the bare io.EOF when nothing was read
			return nil, errNoEOS
		}
		return nil, fmt.Errorf("message prefix: %w", err)
	}
	n := binary.LittleEndian.Uint32(b[:])
	if n == ipcContinuation {
		if _, err := io.ReadFull(f.r, b[:]); err != nil {
			return nil, fmt.Errorf("message length: %w", noEOF(err))
		}
		n = binary.LittleEndian.Uint32(b[:])
	} // else the format before Arrow 0.15: the length alone
	if n == 0 {
		f.sawEOS = true
		return nil, io.EOF
	}
	if n > maxArrowMetadata {
		return nil, fmt.Errorf("a message's metadata of %d bytes (the limit is %d): the stream is damaged", n, maxArrowMetadata)
	}
	meta := make([]byte, n)
	if _, err := io.ReadFull(f.r, meta); err != nil {
		return nil, fmt.Errorf("message metadata: %w", noEOF(err))
	}
	bodyLen, err := checkMessage(meta)
	if err != nil {
		return nil, fmt.Errorf("message metadata: %w", err)
	}
	if bodyLen < 0 || bodyLen > maxArrowBody {
		return nil, fmt.Errorf("a message body of %d bytes (the limit is %d): the stream is damaged", bodyLen, int64(maxArrowBody))
	}
	body := memory.NewResizableBuffer(f.mem)
	defer body.Release()
	body.Resize(int(bodyLen))
	if _, err := io.ReadFull(f.r, body.Bytes()); err != nil {
		return nil, fmt.Errorf("message body: %w", noEOF(err))
	}
	mb := memory.NewBufferBytes(meta)
	f.msg = ipc.NewMessage(mb, body)
	return f.msg, nil
}

// noEOF turns the end of input in the middle of a message into
// io.ErrUnexpectedEOF: the decoder takes any io.EOF for the stream's end.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// fb reads a flatbuffer with bounds checks; every accessor reports a
// position outside the buffer as an error instead of panicking.
type fb struct {
	b   []byte
	err error
}

var errFlatbuffer = errors.New("damaged flatbuffer")

func (f *fb) u32(pos int) int {
	if f.err != nil || pos < 0 || pos+4 > len(f.b) {
		f.err = errFlatbuffer
		return 0
	}
	return int(binary.LittleEndian.Uint32(f.b[pos:]))
}

func (f *fb) i64(pos int) int64 {
	if f.err != nil || pos < 0 || pos+8 > len(f.b) {
		f.err = errFlatbuffer
		return 0
	}
	return int64(binary.LittleEndian.Uint64(f.b[pos:]))
}

// field returns the position of a table's field of the given slot (0 for
// the first), or -1 when absent.
func (f *fb) field(table, slot int) int {
	if f.err != nil || table < 0 || table+4 > len(f.b) {
		f.err = errFlatbuffer
		return -1
	}
	vt := table - int(int32(binary.LittleEndian.Uint32(f.b[table:])))
	if vt < 0 || vt+4 > len(f.b) {
		f.err = errFlatbuffer
		return -1
	}
	vtSize := int(binary.LittleEndian.Uint16(f.b[vt:]))
	at := 4 + 2*slot
	if at+2 > vtSize || vt+at+2 > len(f.b) {
		return -1
	}
	o := int(binary.LittleEndian.Uint16(f.b[vt+at:]))
	if o == 0 {
		return -1
	}
	return table + o
}

// ref follows the offset of a table, vector or string field; -1 when absent.
func (f *fb) ref(table, slot int) int {
	p := f.field(table, slot)
	if p < 0 || f.err != nil {
		return -1
	}
	return p + f.u32(p)
}

// vector checks that the vector at slot of table holds its count of elem
// bytes inside the buffer, and returns its element positions' start and
// count (0 when absent).
func (f *fb) vector(table, slot, elem int) (start, n int) {
	v := f.ref(table, slot)
	if v < 0 || f.err != nil {
		return 0, 0
	}
	n = f.u32(v)
	if f.err == nil && (n > (len(f.b)-v-4)/elem) {
		f.err = fmt.Errorf("%w: a vector of %d elements in %d bytes", errFlatbuffer, n, len(f.b))
	}
	return v + 4, n
}

// tables checks a vector of tables and calls each for every element.
func (f *fb) tables(table, slot int, each func(t int)) {
	start, n := f.vector(table, slot, 4)
	for i := 0; i < n && f.err == nil; i++ {
		p := start + 4*i
		each(p + f.u32(p))
	}
}

// Flatbuffer slots of Arrow's Message.fbs and Schema.fbs.
const (
	slotMessageHeaderType = 1
	slotMessageHeader     = 2
	slotMessageBodyLength = 3
	slotMessageMetadata   = 4
	slotSchemaFields      = 1
	slotSchemaMetadata    = 2
	slotSchemaFeatures    = 3
	slotFieldTypeType     = 2
	slotFieldType         = 3
	slotFieldChildren     = 5
	slotFieldMetadata     = 6
	slotBatchNodes        = 1
	slotBatchBuffers      = 2
	slotBatchVariadic     = 4
	slotDictData          = 1
	slotUnionTypeIDs      = 1
	headerSchema          = 1
	headerDictionary      = 2
	headerRecordBatch     = 3
	typeUnion             = 14
	maxArrowNesting       = 64
)

// checkMessage checks that every count the decoder sizes a slice by fits
// in the message's metadata, and returns the body's length.
func checkMessage(meta []byte) (int64, error) {
	f := &fb{b: meta}
	root := f.u32(0)
	f.tables(root, slotMessageMetadata, func(int) {})
	var bodyLen int64
	if p := f.field(root, slotMessageBodyLength); p >= 0 {
		bodyLen = f.i64(p)
	}
	kind := -1
	if p := f.field(root, slotMessageHeaderType); p >= 0 && p < len(meta) {
		kind = int(meta[p])
	}
	header := f.ref(root, slotMessageHeader)
	if header >= 0 {
		switch kind {
		case headerSchema:
			f.tables(header, slotSchemaFields, func(t int) { f.checkField(t, 0) })
			f.tables(header, slotSchemaMetadata, func(int) {})
			f.vector(header, slotSchemaFeatures, 8)
		case headerDictionary:
			if d := f.ref(header, slotDictData); d >= 0 {
				f.checkBatch(d)
			}
		case headerRecordBatch:
			f.checkBatch(header)
		}
	}
	return bodyLen, f.err
}

func (f *fb) checkField(t, depth int) {
	if depth > maxArrowNesting {
		f.err = fmt.Errorf("%w: fields nested more than %d deep", errFlatbuffer, maxArrowNesting)
		return
	}
	f.tables(t, slotFieldMetadata, func(int) {})
	if p := f.field(t, slotFieldTypeType); p >= 0 && p < len(f.b) && f.b[p] == typeUnion {
		if u := f.ref(t, slotFieldType); u >= 0 {
			f.vector(u, slotUnionTypeIDs, 4)
		}
	}
	f.tables(t, slotFieldChildren, func(c int) { f.checkField(c, depth+1) })
}

func (f *fb) checkBatch(t int) {
	f.vector(t, slotBatchNodes, 16)   // FieldNode: length, null_count
	f.vector(t, slotBatchBuffers, 16) // Buffer: offset, length
	f.vector(t, slotBatchVariadic, 8)
}
