package partupload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/pswap/pswap/store"
)

// fake is a Target that keeps its parts in memory and counts its calls.
type fake struct {
	mu        sync.Mutex
	parts     map[int][]byte
	inFlight  int
	maxFlight int
	puts      int
	completes int
	finished  []bool
	failPart  int           // UploadPart of this part fails
	block     chan struct{} // when set, UploadPart waits on it (or ctx)
	obj       []byte
}

var errPart = errors.New("part refused")

func (f *fake) UploadPart(ctx context.Context, num int, data []byte) error {
	f.mu.Lock()
	f.inFlight++
	f.maxFlight = max(f.maxFlight, f.inFlight)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if num == f.failPart {
		return fmt.Errorf("part %d: %w", num, errPart)
	}
	f.mu.Lock()
	f.parts[num] = bytes.Clone(data)
	f.mu.Unlock()
	return nil
}

func (f *fake) Put(_ context.Context, data []byte) (store.Attrs, error) {
	f.puts++
	f.obj = bytes.Clone(data)
	return store.Attrs{Size: int64(len(data))}, nil
}

func (f *fake) Complete(_ context.Context, n int, size int64) (store.Attrs, error) {
	f.completes++
	for i := 1; i <= n; i++ {
		f.obj = append(f.obj, f.parts[i]...)
	}
	return store.Attrs{Size: size}, nil
}

func (f *fake) Finish(committed bool) error {
	f.finished = append(f.finished, committed)
	return nil
}

func newFake() *fake { return &fake{parts: map[int][]byte{}} }

func data(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestObjectSizes: the object read back is what was written, in one Put
// up to exactly one part, and in ceil(n/part) parts above it, written in
// writes of odd sizes.
func TestObjectSizes(t *testing.T) {
	const part = 64
	for _, n := range []int{0, 1, part - 1, part, part + 1, 3 * part, 10*part + 5} {
		f := newFake()
		w := New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: part, Concurrency: 3})
		in := data(n)
		for rest := in; len(rest) > 0; {
			k := min(len(rest), 13)
			if _, err := w.Write(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		a, err := w.Commit()
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(f.obj, in) || a.Size != int64(n) {
			t.Errorf("%d bytes: object of %d bytes (attrs %d), want what was written", n, len(f.obj), a.Size)
		}
		wantPuts, wantParts := 1, 0
		if n > part {
			wantPuts, wantParts = 0, (n+part-1)/part
		}
		if f.puts != wantPuts || len(f.parts) != wantParts || f.maxFlight > 3 {
			t.Errorf("%d bytes: %d puts, %d parts, %d in flight at most; want %d, %d, <= 3", n, f.puts, len(f.parts), f.maxFlight, wantPuts, wantParts)
		}
		if !slices.Equal(f.finished, []bool{true}) {
			t.Errorf("%d bytes: Finish calls %v, want [true]", n, f.finished)
		}
		if _, err := w.Write([]byte("x")); !errors.Is(err, ErrCommitted) {
			t.Errorf("Write after Commit: %v, want ErrCommitted", err)
		}
		if _, err := w.Commit(); !errors.Is(err, ErrCommitted) {
			t.Errorf("second Commit: %v, want ErrCommitted", err)
		}
	}
}

// TestPartFailureAborts: a failed part fails the write with its error,
// stops the others, and the Target discards the write once.
func TestPartFailureAborts(t *testing.T) {
	f := newFake()
	f.failPart = 2
	w := New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: 8, Concurrency: 2})
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = w.Write(data(8))
	}
	if err == nil {
		_, err = w.Commit()
	}
	if !errors.Is(err, errPart) {
		t.Fatalf("write with a failing part: %v, want the part's error", err)
	}
	if _, cerr := w.Commit(); !errors.Is(cerr, errPart) {
		t.Errorf("Commit after the failure: %v, want the part's error", cerr)
	}
	if f.completes != 0 || f.puts != 0 || !slices.Equal(f.finished, []bool{false}) {
		t.Errorf("%d completes, %d puts, Finish %v; want 0, 0, [false]", f.completes, f.puts, f.finished)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after the failure: %v", err)
	}
}

// TestCancelStopsParts: cancelling the write's context stops the parts in
// flight, and the next Write says so; Abort discards the write once.
func TestCancelStopsParts(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	w := New(ctx, f, Options{Name: "test", URI: "mem://k", PartSize: 4, Concurrency: 1})
	if _, err := w.Write(data(5)); err != nil { // one part in flight, one byte buffered
		t.Fatal(err)
	}
	cancel()
	if _, err := w.Write(data(4)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write after cancel: %v, want context.Canceled", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.finished, []bool{false}) || f.completes != 0 {
		t.Errorf("Finish %v, %d completes; want [false], 0", f.finished, f.completes)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrAborted) {
		t.Errorf("Write after Abort: %v, want ErrAborted", err)
	}
}

// TestMaxParts: the part past the store's limit fails the write, naming the unit.
func TestMaxParts(t *testing.T) {
	f := newFake()
	w := New(t.Context(), f, Options{Name: "test", URI: "mem://k", Unit: "block", PartSize: 4, Concurrency: 2, MaxParts: 2})
	_, err := w.Write(data(13))
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("more than 2 blocks of 4 bytes")) {
		t.Fatalf("Write of 4 parts with a limit of 2: %v", err)
	}
}

// chunkReader returns its bytes at most k at a time, and EOF with the
// last ones when eofWithData is set (both forms are allowed of a Reader).
type chunkReader struct {
	b           []byte
	k           int
	eofWithData bool
	err         error // returned instead of EOF when set
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.k)], r.b)
	r.b = r.b[n:]
	if len(r.b) == 0 && r.eofWithData && r.err == nil {
		return n, io.EOF
	}
	return n, nil
}

// TestReadFromSizes: ReadFrom makes the same object, in the same requests,
// as Write: one Put up to exactly one part (the full part is held until a
// byte follows it), ceil(n/part) parts above it, after bytes written first.
func TestReadFromSizes(t *testing.T) {
	const part = 64
	for _, n := range []int{0, 1, part - 1, part, part + 1, 2 * part, 3*part + 7, 10*part + 5} {
		for _, k := range []int{1, 13, part, 1000} {
			for _, eofWithData := range []bool{false, true} {
				for _, pre := range []int{0, 5} {
					if pre > n {
						continue
					}
					f := newFake()
					w := New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: part, Concurrency: 2})
					in := data(n)
					if _, err := w.Write(in[:pre]); err != nil {
						t.Fatal(err)
					}
					got, err := w.ReadFrom(&chunkReader{b: in[pre:], k: k, eofWithData: eofWithData})
					if err != nil || got != int64(n-pre) {
						t.Fatalf("n=%d k=%d: ReadFrom = %d, %v; want %d", n, k, got, err, n-pre)
					}
					a, err := w.Commit()
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(f.obj, in) || a.Size != int64(n) {
						t.Errorf("n=%d k=%d: object of %d bytes (attrs %d), want what was read", n, k, len(f.obj), a.Size)
					}
					wantPuts, wantParts := 1, 0
					if n > part {
						wantPuts, wantParts = 0, (n+part-1)/part
					}
					if f.puts != wantPuts || len(f.parts) != wantParts || f.maxFlight > 2 {
						t.Errorf("n=%d k=%d: %d puts, %d parts, %d in flight; want %d, %d, <= 2", n, k, f.puts, len(f.parts), f.maxFlight, wantPuts, wantParts)
					}
				}
			}
		}
	}
}

// TestReadFromErrors: a reader's error comes back as it is and leaves the
// write open (the caller aborts it); a failed part aborts the write; a
// committed write refuses ReadFrom.
func TestReadFromErrors(t *testing.T) {
	errRead := errors.New("disk gone")
	f := newFake()
	w := New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: 8, Concurrency: 2})
	if _, err := w.ReadFrom(&chunkReader{b: data(20), k: 3, err: errRead}); !errors.Is(err, errRead) {
		t.Fatalf("ReadFrom of a failing reader: %v, want its error", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.finished, []bool{false}) || f.completes != 0 {
		t.Errorf("Finish %v, %d completes; want [false], 0", f.finished, f.completes)
	}

	f = newFake()
	f.failPart = 2
	w = New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: 8, Concurrency: 1})
	_, err := w.ReadFrom(&chunkReader{b: data(800), k: 8})
	if err == nil {
		_, err = w.Commit()
	}
	if !errors.Is(err, errPart) {
		t.Fatalf("ReadFrom with a failing part: %v, want the part's error", err)
	}
	if f.completes != 0 || !slices.Equal(f.finished, []bool{false}) {
		t.Errorf("%d completes, Finish %v; want 0, [false]", f.completes, f.finished)
	}

	f = newFake()
	w = New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: 8})
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ReadFrom(&chunkReader{b: data(3), k: 3}); !errors.Is(err, ErrCommitted) {
		t.Errorf("ReadFrom after Commit: %v, want ErrCommitted", err)
	}
}

// TestSeal: after Seal every part of a multipart object has gone out
// before Commit (the last one too), Commit only completes, and the object
// is the same; an object within one part stays for Commit's Put; bytes
// after Seal are refused; a sealed write can still be aborted.
func TestSeal(t *testing.T) {
	const part = 64
	for _, n := range []int{1, part, part + 1, 3*part + 7} {
		synctest.Test(t, func(t *testing.T) {
			f := newFake()
			w := New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: part, Concurrency: 2})
			in := data(n)
			if _, err := w.ReadFrom(bytes.NewReader(in)); err != nil {
				t.Fatal(err)
			}
			if err := w.Seal(); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			wantParts := 0
			if n > part {
				wantParts = (n + part - 1) / part
			}
			f.mu.Lock()
			sent := len(f.parts)
			f.mu.Unlock()
			if sent != wantParts {
				t.Errorf("n=%d: %d parts sent after Seal, want %d", n, sent, wantParts)
			}
			if _, err := w.Write([]byte("x")); !errors.Is(err, ErrSealed) {
				t.Errorf("Write after Seal: %v, want ErrSealed", err)
			}
			if _, err := w.ReadFrom(bytes.NewReader([]byte("x"))); !errors.Is(err, ErrSealed) {
				t.Errorf("ReadFrom after Seal: %v, want ErrSealed", err)
			}
			if _, err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.obj, in) || len(f.parts) != wantParts || f.completes+f.puts != 1 {
				t.Errorf("n=%d: object of %d bytes, %d parts, %d completes, %d puts", n, len(f.obj), len(f.parts), f.completes, f.puts)
			}
		})
	}
	f := newFake()
	w := New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: part, Concurrency: 2})
	if _, err := w.Write(data(3 * part)); err != nil {
		t.Fatal(err)
	}
	if err := w.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.finished, []bool{false}) || f.completes != 0 {
		t.Errorf("abort after Seal: Finish %v, %d completes; want [false], 0", f.finished, f.completes)
	}
}

// preparing is a fake Target that is a Preparer.
type preparing struct {
	*fake
	prepared int
}

func (p *preparing) Prepare(context.Context) {
	p.mu.Lock()
	p.prepared++
	p.mu.Unlock()
}

// TestSizeHint: a hint of more than one part prepares the Target once, in
// the background, and Commit waits for it even when the object ends as one
// Put; a hint within one part, or a Target that is no Preparer, prepares
// nothing.
func TestSizeHint(t *testing.T) {
	const part = 64
	for _, c := range []struct{ hint, size, want int }{
		{3 * part, 3 * part, 1},
		{3 * part, 10, 1},
		{part, part, 0},
	} {
		synctest.Test(t, func(t *testing.T) {
			p := &preparing{fake: newFake()}
			w := New(t.Context(), p, Options{Name: "test", URI: "mem://k", PartSize: part, Concurrency: 2})
			w.SizeHint(int64(c.hint))
			w.SizeHint(int64(c.hint))
			in := data(c.size)
			if _, err := w.Write(in); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if p.prepared != c.want || !bytes.Equal(p.obj, in) {
				t.Errorf("hint %d, %d bytes: prepared %d times, want %d; object of %d bytes", c.hint, c.size, p.prepared, c.want, len(p.obj))
			}
		})
	}
	f := newFake()
	w := New(t.Context(), f, Options{Name: "test", URI: "mem://k", PartSize: part})
	w.SizeHint(10 * part) // not a Preparer: nothing to do
	if _, err := w.Write(data(3 * part)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil || !bytes.Equal(f.obj, data(3*part)) {
		t.Fatalf("commit: %v", err)
	}
}

// bufTarget records which part buffers a write handed to its uploads, and
// collects garbage in each upload, which empties the sync.Pool of part
// buffers.
type bufTarget struct {
	fake
	bufMu sync.Mutex
	bufs  map[*byte]bool
}

func (t *bufTarget) UploadPart(ctx context.Context, num int, data []byte) error {
	t.bufMu.Lock()
	t.bufs[&data[:1][0]] = true
	t.bufMu.Unlock()
	runtime.GC()
	runtime.GC()
	return t.fake.UploadPart(ctx, num, data)
}

// TestWriterReusesItsBuffers: a write of many parts uses at most
// Concurrency+1 part buffers, whatever the garbage collector does to the
// pool, so that a long file is not read into fresh memory part after part.
func TestWriterReusesItsBuffers(t *testing.T) {
	for _, conc := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(conc), func(t *testing.T) {
			tg := &bufTarget{fake: *newFake(), bufs: map[*byte]bool{}}
			w := New(context.Background(), tg, Options{Name: "test", URI: "mem://x", PartSize: 64 << 10, Concurrency: conc})
			body := data(20 << 16)
			if _, err := w.ReadFrom(bytes.NewReader(body)); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tg.obj, body) {
				t.Fatal("object differs from the bytes written")
			}
			if n := len(tg.bufs); n > conc+1 {
				t.Errorf("%d part buffers for %d parts at concurrency %d, want at most %d", n, len(tg.parts), conc, conc+1)
			}
		})
	}
}
