package pswap

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FormatArrow is an Arrow IPC stream (the streaming format, not the
// random-access file format): a schema message, record batches, and the
// end-of-stream marker. Writer.AddReader stages it batch by batch as
// Writer.WriteRecord does, so memory is bounded by one batch, not by the
// stream. A stream that ends without its end-of-stream marker is refused
// (ErrBadInput): a producer killed between two batches leaves a stream that
// would otherwise read as a shorter, valid one. It is never guessed from a
// file name (Format.For): name it with --input-format arrow.
const FormatArrow Format = "arrow"

// addArrowStream stages an Arrow IPC stream read from r.
func (w *Writer) addArrowStream(ctx context.Context, r io.Reader, name string) error {
	return readArrowStream(ctx, r, name, w.WriteRecord)
}

// readArrowStream decodes an Arrow IPC stream and hands each record batch
// to write (which must not retain it). A stream of a schema and no batch
// hands write one empty batch, so that the schema is still recorded. Every
// decoding problem is ErrBadInput naming name; write's errors are returned
// as they are.
func readArrowStream(ctx context.Context, r io.Reader, name string, write func(arrow.RecordBatch) error) (err error) {
	bad := func(err error) error {
		return fmt.Errorf("%w: %s: not a complete Arrow IPC stream: %w", ErrBadInput, name, err)
	}
	defer func() {
		// The decoder recovers its own panics on most paths; a damaged
		// stream must never take the process down on the others.
		if p := recover(); p != nil {
			err = bad(fmt.Errorf("%v", p))
		}
	}()
	mr := &frameReader{r: r, mem: memory.DefaultAllocator} // arrowframe.go
	rd, err := ipc.NewReaderFromMessageReader(mr)
	if err != nil {
		if errors.Is(err, errNoEOS) || mr.sawEOS || errors.Is(err, io.EOF) {
			return bad(errors.New("no schema message (empty input?)"))
		}
		return bad(err)
	}
	defer rd.Release()
	batches := 0
	for rd.Next() {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if err := write(rd.RecordBatch()); err != nil {
			return err
		}
		batches++
	}
	if err := rd.Err(); err != nil {
		return bad(err)
	}
	if !mr.sawEOS {
		return bad(errNoEOS)
	}
	if batches == 0 {
		cols := emptyColumns(rd.Schema())
		empty := array.NewRecordBatch(rd.Schema(), cols, 0)
		for _, c := range cols {
			c.Release()
		}
		defer empty.Release()
		return write(empty)
	}
	return nil
}

// emptyColumns returns a zero-length array per field of sc.
func emptyColumns(sc *arrow.Schema) []arrow.Array {
	cols := make([]arrow.Array, sc.NumFields())
	for i, f := range sc.Fields() {
		cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
	}
	return cols
}
