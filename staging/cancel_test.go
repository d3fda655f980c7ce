package staging

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/memstore"
)

// cancelStore cancels a context once more than limit bytes were written
// through its writers, simulating a cancellation in the middle of an upload.
type cancelStore struct {
	store.Store
	mu      sync.Mutex
	written int64
	limit   int64
	cancel  context.CancelFunc
	ctx     context.Context
	aborted int
}

func (c *cancelStore) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	w, err := c.Store.NewWriter(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return &cancelWriter{Writer: w, s: c}, nil
}

type cancelWriter struct {
	store.Writer
	s *cancelStore
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	w.s.written += int64(len(p))
	if w.s.written > w.s.limit {
		w.s.cancel()
	}
	w.s.mu.Unlock()
	if err := w.s.ctx.Err(); err != nil {
		return 0, err
	}
	return w.Writer.Write(p)
}

func (w *cancelWriter) Abort() error {
	w.s.mu.Lock()
	w.s.aborted++
	w.s.mu.Unlock()
	return w.Writer.Abort()
}

// TestCancelMidWrite: cancelling while files are being uploaded fails the
// Stager, aborts the upload in flight and deletes the files already
// written.
func TestCancelMidWrite(t *testing.T) {
	rows := makeRows(30000, 21)
	for name, write := range map[string]func(*Stager) error{
		"structs": func(s *Stager) error { return Write(s, rows...) },
		"arrow": func(s *Stager) error {
			rec := toRecord(rows)
			defer rec.Release()
			return s.WriteRecord(rec)
		},
		"csv": func(s *Stager) error {
			var b strings.Builder
			b.WriteString("a,b\n")
			for i := range 100000 {
				fmt.Fprintf(&b, "%d,text number %d\n", i*7919, i)
			}
			return s.AddCSV(context.Background(), strings.NewReader(b.String()), "big.csv", CSVOptions{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			mem := memstore.New()
			cs := &cancelStore{Store: mem, limit: 300 << 10, cancel: cancel, ctx: ctx}
			s := New(ctx, cs, testPrefix, Options{TargetFileSize: 100 << 10, Compression: Uncompressed})
			err := write(s)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if cs.written <= cs.limit {
				t.Fatalf("only %d bytes written before the error; the test did not cancel mid-write", cs.written)
			}
			if keys := keysUnder(t, mem, ""); len(keys) != 0 {
				t.Errorf("left %v", keys)
			}
			if cs.aborted == 0 {
				t.Error("the upload in flight was not aborted")
			}
			if _, err := s.Finish(context.Background()); !errors.Is(err, context.Canceled) {
				t.Errorf("Finish after cancel: %v", err)
			}
		})
	}
}

func TestAbort(t *testing.T) {
	ctx := context.Background()
	// Enough chunks of 1,024 rows that some files are committed before
	// Write returns, and others are still being encoded.
	st, s := newMem(t, Options{TargetFileSize: 32 << 10})
	if err := Write(s, makeRows(20000, 22)...); err != nil {
		t.Fatal(err)
	}
	if n := len(keysUnder(t, st, testPrefix)); n < 2 {
		t.Fatalf("%d files committed before Abort, want several", n)
	}
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if keys := keysUnder(t, st, ""); len(keys) != 0 {
		t.Errorf("left %v", keys)
	}
	if err := Write(s, makeRows(1, 1)...); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Abort: %v", err)
	}
	if err := s.Abort(ctx); err != nil {
		t.Errorf("second Abort: %v", err)
	}

	// Abort after Finish keeps the files: they are the caller's now.
	st, s = newMem(t, Options{})
	if err := Write(s, makeRows(10, 23)...); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	checkContent(t, st, c, 10)
	if _, err := s.Finish(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("second Finish: %v", err)
	}
}

func TestNewValidatesPrefix(t *testing.T) {
	for _, p := range []string{"", "/abs/", "a/../b/", "a//b/"} {
		_, err := New(context.Background(), memstore.New(), p, Options{}).Finish(context.Background())
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("prefix %q: %v", p, err)
		}
	}
	// A missing trailing slash is added.
	st := memstore.New()
	s := New(context.Background(), st, "gen/1", Options{})
	if err := Write(s, makeRows(3, 1)...); err != nil {
		t.Fatal(err)
	}
	finish(t, s)
	if keys := keysUnder(t, st, ""); len(keys) != 1 || keys[0] != "gen/1/part-00000.parquet" {
		t.Errorf("keys %v", keys)
	}
}

// TestEmptyGeneration: no rows, no files, a valid checksum that still
// depends on the schema.
func TestEmptyGeneration(t *testing.T) {
	_, s := newMem(t, Options{})
	empty := finish(t, s)
	if len(empty.Files) != 0 || empty.Rows != 0 || empty.Schema != "" {
		t.Errorf("%+v", empty)
	}
	_, s = newMem(t, Options{})
	if err := Write[row](s); err != nil {
		t.Fatal(err)
	}
	typed := finish(t, s)
	if typed.Schema == "" || typed.ContentChecksum == empty.ContentChecksum || len(typed.Files) != 0 {
		t.Errorf("%+v", typed)
	}
}

// TestNullDistinctFromZero checks the canonical encoding on single rows.
func TestNullDistinctFromZero(t *testing.T) {
	type r struct {
		A *int64  `parquet:"a,optional"`
		B *string `parquet:"b,optional"`
	}
	zero, empty := int64(0), ""
	seen := map[string]int{}
	for i, x := range []r{{}, {A: &zero}, {B: &empty}, {A: &zero, B: &empty}} {
		_, s := newMem(t, Options{})
		if err := Write(s, x); err != nil {
			t.Fatal(err)
		}
		c := finish(t, s)
		if j, dup := seen[c.ContentChecksum]; dup {
			t.Errorf("rows %d and %d have the same checksum", i, j)
		}
		seen[c.ContentChecksum] = i
	}
	// Two rows swapping values between columns differ from the original.
	one, two := "1", "2"
	a1, a2 := int64(1), int64(2)
	sum := func(rows ...r) string {
		_, s := newMem(t, Options{})
		if err := Write(s, rows...); err != nil {
			t.Fatal(err)
		}
		return finish(t, s).ContentChecksum
	}
	if sum(r{&a1, &one}, r{&a2, &two}) == sum(r{&a1, &two}, r{&a2, &one}) {
		t.Error("swapping values across rows kept the checksum")
	}
}

// TestCancelBetweenCalls: a context cancelled between calls fails the next
// call and removes what was written.
func TestCancelBetweenCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	mem := memstore.New()
	// Files of 16 KiB, one per chunk of 1,024 rows: more chunks than
	// encoders, so files are committed before Write returns.
	s := New(ctx, mem, testPrefix, Options{TargetFileSize: 16 << 10})
	if err := Write(s, makeRows(10000, 24)...); err != nil {
		t.Fatal(err)
	}
	if len(keysUnder(t, mem, "")) == 0 {
		t.Fatal("nothing written before the cancel")
	}
	cancel()
	if _, err := s.Finish(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Finish: %v", err)
	}
	if keys := keysUnder(t, mem, ""); len(keys) != 0 {
		t.Errorf("left %v", keys)
	}
}

func TestWritePointerRows(t *testing.T) {
	rows := makeRows(50, 25)
	ptrs := make([]*row, len(rows))
	for i := range rows {
		ptrs[i] = &rows[i]
	}
	_, s := newMem(t, Options{})
	if err := Write(s, ptrs...); err != nil {
		t.Fatalf("pointer rows: %v", err)
	}
	if err := Write(s, ptrs[0], nil); !errors.Is(err, ErrBadInput) {
		t.Errorf("nil row: %v", err)
	}
	st, s := newMem(t, Options{})
	if err := Write(s, ptrs...); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)
	checkContent(t, st, c, 50)
	_, want := stageStructs(t, Options{}, rows)
	if c.ContentChecksum != want.ContentChecksum {
		t.Errorf("pointer rows checksum %s, value rows %s", c.ContentChecksum, want.ContentChecksum)
	}
}
