package pswap

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrowStream encodes batches of n rows each (id int64, name string) as an
// Arrow IPC stream; eos false leaves the end-of-stream marker out.
func arrowStream(t testing.TB, eos bool, batches ...int) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sc))
	id := int64(0)
	for _, n := range batches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range n {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append("row")
			id++
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	// No batch: Close writes the schema message alone, then the marker.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !eos {
		return buf.Bytes()[:buf.Len()-8] // the marker: 0xFFFFFFFF, then length 0
	}
	return buf.Bytes()
}

func countRows(t *testing.T, stream []byte) (rows int64, batches int, err error) {
	t.Helper()
	err = readArrowStream(context.Background(), bytes.NewReader(stream), "stdin", func(rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		batches++
		return nil
	})
	return rows, batches, err
}

func TestReadArrowStream(t *testing.T) {
	rows, batches, err := countRows(t, arrowStream(t, true, 3, 0, 5))
	if err != nil || rows != 8 || batches != 3 {
		t.Fatalf("3 batches of 3, 0, 5 rows: %d rows in %d batches, %v", rows, batches, err)
	}
	// A stream of its schema alone hands one empty batch (the schema).
	rows, batches, err = countRows(t, arrowStream(t, true))
	if err != nil || rows != 0 || batches != 1 {
		t.Fatalf("schema only: %d rows in %d batches, %v", rows, batches, err)
	}
}

// A stream cut anywhere, even between two batches, is refused as bad
// input: a producer killed mid-stream must not commit a shorter table.
func TestReadArrowStreamTruncated(t *testing.T) {
	full := arrowStream(t, true, 3, 5)
	for _, cut := range []int{0, 4, 8, 100, len(full) - 8, len(full) - 4, len(full) - 1} {
		_, _, err := countRows(t, full[:cut])
		if !errors.Is(err, ErrBadInput) {
			t.Errorf("cut at %d of %d: err %v, want ErrBadInput", cut, len(full), err)
		}
	}
	if _, _, err := countRows(t, arrowStream(t, false, 3, 5)); !errors.Is(err, ErrBadInput) || !errors.Is(err, errNoEOS) {
		t.Errorf("no end-of-stream marker: %v", err)
	}
	if _, _, err := countRows(t, []byte("id,name\n1,a\n")); !errors.Is(err, ErrBadInput) {
		t.Errorf("CSV as Arrow: %v", err)
	}
}

// The writer's own error is returned unwrapped, not as bad input.
func TestReadArrowStreamWriteError(t *testing.T) {
	boom := errors.New("boom")
	err := readArrowStream(context.Background(), bytes.NewReader(arrowStream(t, true, 2)), "stdin",
		func(arrow.RecordBatch) error { return boom })
	if !errors.Is(err, boom) || errors.Is(err, ErrBadInput) {
		t.Fatalf("err %v", err)
	}
}

// FuzzArrowStream: any bytes decode to batches or to ErrBadInput, never a
// panic or a hang.
func FuzzArrowStream(f *testing.F) {
	f.Add(arrowStream(f, true, 3, 5))
	f.Add(arrowStream(f, false, 2))
	f.Add(arrowStream(f, true))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Add([]byte("PAR1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		err := readArrowStream(context.Background(), bytes.NewReader(b), "stdin", func(rec arrow.RecordBatch) error {
			for i := range rec.NumCols() {
				_ = rec.Column(int(i)).Len()
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrBadInput) {
			t.Fatalf("err %v is not ErrBadInput", err)
		}
	})
}
