package textconv

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap/internal/checksum"
	"github.com/pswap/pswap/internal/errkind"
)

// Sentinel errors, checked with errors.Is (package staging's own).
var (
	// ErrBadInput: a malformed or ill-typed row; the message names the
	// input and the line.
	ErrBadInput = errkind.ErrBadInput
	// ErrUnsupported: a column type that text inputs cannot hold.
	ErrUnsupported = checksum.ErrUnsupported
)

// DefaultInferRows is the number of rows read to infer a CSV or JSON Lines
// schema when none is given.
const DefaultInferRows = 1000

// textBatch is the number of CSV or JSON Lines rows per Arrow record.
const textBatch = 16 << 10

// Options say how a text input is read. The zero value infers the schema
// and reads comma-separated values with a header line, empty fields as
// nulls.
type Options struct {
	// Schema is the schema the input is read with; nil: inferred.
	Schema *arrow.Schema
	// Tentative: Schema is the table's, read with when it fits: a CSV
	// header that names other columns has its types inferred instead, so
	// that the sink names the difference.
	Tentative bool
	// Types are the types of inferred columns of these names.
	Types map[string]arrow.DataType

	// InferRows is the number of CSV rows read to infer a schema (default
	// DefaultInferRows; JSON Lines always read that many).
	InferRows int
	// Comma is the CSV field delimiter (default ',').
	Comma rune
	// NoHeader: the CSV input has no header line; its columns are the
	// schema's fields in order (a schema must then be given).
	NoHeader bool
	// NullValues are the CSV field values read as null (default: the
	// empty string). Set []string{} to have none.
	NullValues []string
}

// declared applies Types to an inferred column.
func (o Options) declared(f arrow.Field) arrow.Field {
	if t, ok := o.Types[f.Name]; ok {
		f.Type = t
	}
	return f
}

// Sink takes what an input converts to.
type Sink interface {
	// Schema is called once with the schema of the records, before the
	// first one; an error stops the conversion before any row is
	// converted.
	Schema(sc *arrow.Schema) error
	// Write takes a record of textBatch rows or fewer; it is released
	// after Write returns.
	Write(rec arrow.RecordBatch) error
}

// batcher collects converted rows in Arrow columns and writes them to the
// sink as records of textBatch rows.
type batcher struct {
	sink   Sink
	schema *arrow.Schema
	cols   []*column
	rows   int
}

// newBatcher hands schema to the sink and builds its columns.
func newBatcher(schema *arrow.Schema, sink Sink) (*batcher, error) {
	if err := sink.Schema(schema); err != nil {
		return nil, err
	}
	cols, err := newColumns(memory.DefaultAllocator, schema)
	if err != nil {
		return nil, err
	}
	return &batcher{sink: sink, schema: schema, cols: cols}, nil
}

// added counts one complete row, writing the batch once it is full.
func (b *batcher) added() error {
	b.rows++
	if b.rows >= textBatch {
		return b.flush()
	}
	return nil
}

// flush writes the rows collected so far, if any.
func (b *batcher) flush() error {
	if b.rows == 0 {
		return nil
	}
	rec := buildRecord(b.schema, b.cols)
	defer rec.Release()
	b.rows = 0
	return b.sink.Write(rec)
}

func (b *batcher) release() { releaseColumns(b.cols) }
