// Package storetest is the conformance suite that every store.Store backend
// runs (memory, file, S3 on MinIO, GCS on fake-gcs-server), each supplying only a constructor, in the
// style of go-cloud's blob/drivertest. It also offers a request-counting
// wrapper used by tests and benchmarks of the layers above.
package storetest

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pswap/pswap/store"
)

// Options tune the suite for a backend. The zero value runs everything.
type Options struct {
	// PartSize for the multipart test (default 5 MiB, the S3 minimum).
	PartSize int64
	// ListKeys is the number of keys in the pagination test (default 1,050:
	// more than one S3 page of 1,000).
	ListKeys int
	// NewMissing, when set, opens a store whose bucket (or root) does not
	// exist, for the MissingBucket case: opening it or any request through
	// it must fail with an error matching store.ErrBucketNotFound. Nil skips
	// the case, for backends without one (memory; a file store creates its
	// root on the first write).
	NewMissing func(t *testing.T) (store.Store, error)
	// ContentMD5: the store reports store.Attrs.ContentMD5 for an object
	// written with Put, in Stat and List (GCS, Azure). Without it the
	// ContentMD5 case only checks that any value reported is right.
	ContentMD5 bool
}

// harness is what every case gets: the backend's constructor and the
// options with their defaults filled in.
type harness struct {
	newStore func(t *testing.T) store.Store
	opts     Options
}

// cases is the suite's index, in the order Run runs it. Each name is a
// subtest name, so "-run TestConformance/Name" picks one case.
var cases = []struct {
	name string
	fn   func(t *testing.T, h harness)
}{
	{"MissingKey", testMissingKey},
	{"RoundTrip", testRoundTrip},
	{"Overwrite", testOverwrite},
	{"CreateIfAbsent", testCreateIfAbsent},
	{"ReplaceIfMatch", testReplaceIfMatch},
	{"RacingReplace", testRacingReplace},
	{"Counter", testCounter},
	{"ListPagination", testListPagination},
	{"PrefixIsolation", testPrefixIsolation},
	{"DelimitedListing", testDelimitedListing},
	{"LexicalOrder", testLexicalOrder},
	{"UnicodeAndSpaces", testUnicodeAndSpaces},
	{"InvalidKeys", testInvalidKeys},
	{"CancelledContext", testCancelledContext},
	{"MultipartRoundTrip", testMultipartRoundTrip},
	{"WriterAbort", testWriterAbort},
	{"WriterCreateIfAbsent", testWriterCreateIfAbsent},
	{"WriterCancelled", testWriterCancelled},
	{"ModTimeOrder", testModTimeOrder},
	{"DeleteAll", testDeleteAll},
	{"RangeRead", testRangeRead},
	{"Copy", testCopy},
	{"MissingBucket", testMissingBucket},
	{"ContentMD5", testContentMD5},
}

// Run runs the conformance suite. newStore must return an empty store,
// isolated from every other call's.
func Run(t *testing.T, newStore func(t *testing.T) store.Store, opts ...Options) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.PartSize == 0 {
		o.PartSize = 5 << 20
	}
	if o.ListKeys == 0 {
		o.ListKeys = 1050
	}
	h := harness{newStore: newStore, opts: o}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, h) })
	}
}

func testMissingKey(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	if _, _, err := s.Get(ctx, "no/such/key"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get missing: got %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, "no/such/key"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Stat missing: got %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "no/such/key"); err != nil {
		t.Fatalf("Delete missing: %v", err)
	}
}

func testRoundTrip(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	data := []byte("hello, partition\n")
	a, err := s.Put(ctx, "dt=2026-11-29/a.txt", data, store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Size != int64(len(data)) || a.ETag == "" || a.Key != "dt=2026-11-29/a.txt" {
		t.Fatalf("Put attrs = %+v", a)
	}
	got, ga, err := store.ReadAll(ctx, s, "dt=2026-11-29/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, want %q", got, data)
	}
	st, err := s.Stat(ctx, "dt=2026-11-29/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if st.ETag != a.ETag || ga.ETag != a.ETag || st.Size != a.Size {
		t.Fatalf("etags differ: put %q get %q stat %q", a.ETag, ga.ETag, st.ETag)
	}
	if st.ModTime.IsZero() {
		t.Fatal("zero ModTime")
	}
	// An empty object is an object.
	if _, err := s.Put(ctx, "empty", nil, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _, err := store.ReadAll(ctx, s, "empty"); err != nil || len(b) != 0 {
		t.Fatalf("empty object: %q, %v", b, err)
	}
}

func testOverwrite(t *testing.T, h harness) {
	s := h.newStore(t)
	a1 := mustPut(t, s, "k", "one", store.PutOptions{})
	a2 := mustPut(t, s, "k", "two", store.PutOptions{})
	if a1.ETag == a2.ETag {
		t.Fatalf("etag unchanged by overwrite: %q", a1.ETag)
	}
	expectContent(t, s, "k", "two")
}

func testCreateIfAbsent(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	mustPut(t, s, "k", "first", store.PutOptions{IfNoneMatch: true})
	_, err := s.Put(ctx, "k", []byte("second"), store.PutOptions{IfNoneMatch: true})
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("create on existing key: got %v, want ErrPrecondition", err)
	}
	expectContent(t, s, "k", "first")
}

func testReplaceIfMatch(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	a1 := mustPut(t, s, "ptr", "v1", store.PutOptions{})
	a2 := mustPut(t, s, "ptr", "v2", store.PutOptions{IfMatch: a1.ETag})
	_, err := s.Put(ctx, "ptr", []byte("stale"), store.PutOptions{IfMatch: a1.ETag})
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("replace with stale version: got %v, want ErrPrecondition", err)
	}
	expectContent(t, s, "ptr", "v2")
	mustPut(t, s, "ptr", "v3", store.PutOptions{IfMatch: a2.ETag})
	expectContent(t, s, "ptr", "v3")
	_, err = s.Put(ctx, "missing", []byte("x"), store.PutOptions{IfMatch: a2.ETag})
	if !errors.Is(err, store.ErrPrecondition) || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("if-match on missing key: got %v, want ErrPrecondition and ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed if-match created the key: %v", err)
	}
}

func testRacingReplace(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	const workers, rounds = 16, 50
	cur := mustPut(t, s, "ptr", "round-0", store.PutOptions{})
	for r := 1; r <= rounds; r++ {
		var wins atomic.Int32
		var winner atomic.Value
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				body := fmt.Sprintf("round-%d-worker-%d", r, w)
				a, err := s.Put(ctx, "ptr", []byte(body), store.PutOptions{IfMatch: cur.ETag})
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(a)
				case errors.Is(err, store.ErrPrecondition):
				default:
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: unexpected error %v", r, err)
		}
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1", r, n)
		}
		cur = winner.Load().(store.Attrs)
		st, err := s.Stat(ctx, "ptr")
		if err != nil || st.ETag != cur.ETag {
			t.Fatalf("round %d: current etag %q (%v), winner wrote %q", r, st.ETag, err, cur.ETag)
		}
	}
	t.Logf("%d workers x %d rounds: exactly one winner per round", workers, rounds)
}

func testCounter(t *testing.T, h harness) {
	ctx := context.Background()
	// arrow-rs object_store's test: workers increment a counter by read +
	// conditional replace; no increment may be lost.
	s := h.newStore(t)
	mustPut(t, s, "counter", "0", store.PutOptions{IfNoneMatch: true})
	const workers, incs = 5, 10
	var wg sync.WaitGroup
	var conflicts atomic.Int64
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range incs {
				if err := Increment(ctx, s, "counter", &conflicts); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	expectContent(t, s, "counter", fmt.Sprint(workers*incs))
	t.Logf("%d increments, %d lost races retried", workers*incs, conflicts.Load())
}

func testListPagination(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	n := h.opts.ListKeys
	want := make([]string, n)
	var g errgroup.Group
	g.SetLimit(32)
	for i := range n {
		want[i] = fmt.Sprintf("many/k%05d", i)
		g.Go(func() error {
			_, err := s.Put(ctx, want[i], []byte(want[i]), store.PutOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "other/x", "x", store.PutOptions{})
	got := listKeys(t, s, "many/")
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d keys, want %d (first diff near %v)", len(got), len(want), firstDiff(got, want))
	}
	for a, err := range s.List(ctx, "many/k0000") {
		if err != nil {
			t.Fatal(err)
		}
		if a.Size != int64(len(a.Key)) || a.ModTime.IsZero() {
			t.Fatalf("list attrs %+v", a)
		}
	}
	// Delimited listings across page boundaries, objects and common
	// prefixes mixed: keys 1000 and up roll up into one prefix after
	// 1,000 objects, and the first 1,000 into one before the others.
	for _, c := range []struct {
		prefix, delim string
		entries       int
	}{{"many/", "k01", 1000 + 1}, {"many/", "k00", 1 + n - 1000}, {"", "/", 2}} {
		var model []string
		for e, err := range store.RollUp(s.List(ctx, c.prefix), c.prefix, c.delim) {
			if err != nil {
				t.Fatal(err)
			}
			model = append(model, entryName(e))
		}
		got := listDelimited(t, s, c.prefix, c.delim)
		if !slices.Equal(got, model) {
			t.Fatalf("ListDelimited(%q, %q): %d entries, the rolled-up List %d (first diff near %v)", c.prefix, c.delim, len(got), len(model), firstDiff(got, model))
		}
		if c.entries > 0 && len(got) != c.entries {
			t.Fatalf("ListDelimited(%q, %q): %d entries, want %d", c.prefix, c.delim, len(got), c.entries)
		}
	}
	// Stopping early must not hang or leak.
	count := 0
	for _, err := range s.List(ctx, "many/") {
		if err != nil {
			t.Fatal(err)
		}
		count++
		if count == 3 {
			break
		}
	}
}

func testPrefixIsolation(t *testing.T, h harness) {
	s := h.newStore(t)
	for _, k := range []string{"a/1", "a/2/x", "ab/1", "a1", "b/a/1"} {
		mustPut(t, s, k, k, store.PutOptions{})
	}
	check := func(prefix string, want ...string) {
		t.Helper()
		if got := listKeys(t, s, prefix); !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
	check("a/", "a/1", "a/2/x")
	check("a", "a/1", "a/2/x", "a1", "ab/1")
	check("a/2", "a/2/x")
	check("ab/", "ab/1")
	check("c/")
	check("", "a/1", "a/2/x", "a1", "ab/1", "b/a/1")
}

func testDelimitedListing(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	keys := []string{
		"t/_pswap/table.json", "t/dt=1/_pswap/pointer.json", "t/dt=1/_pswap/gen/g1/a.parquet",
		"t/dt=1/_pswap/manifests/g1.json", "t/dt=2/hr=1/_pswap/pointer.json", "t/dt=2/hr=1/_pswap/gen/g/x",
		"t/dt=2/hr=10/_pswap/pointer.json", "t/dt=2/loose.txt", "t/dt=3/x-y/z", "t/dt=3/x-a", "t/top",
	}
	for _, k := range keys {
		mustPut(t, s, k, k, store.PutOptions{})
	}
	// A write in flight is not an object yet, nor a common prefix.
	w, err := s.NewWriter(ctx, "w/a/b", store.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("not yet")); err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	_, native := s.(store.DelimiterLister)
	for _, c := range []struct {
		prefix, delim string
		want          []string // common prefixes end with the delimiter; "=" marks an object
	}{
		{"t/", "/", []string{"t/_pswap/", "t/dt=1/", "t/dt=2/", "t/dt=3/", "=t/top"}},
		{"t/", "/_pswap/", []string{"=t/_pswap/table.json", "t/dt=1/_pswap/", "t/dt=2/hr=1/_pswap/", "t/dt=2/hr=10/_pswap/",
			"=t/dt=2/loose.txt", "=t/dt=3/x-a", "=t/dt=3/x-y/z", "=t/top"}},
		{"", "/_pswap/", []string{"t/_pswap/", "t/dt=1/_pswap/", "t/dt=2/hr=1/_pswap/", "t/dt=2/hr=10/_pswap/",
			"=t/dt=2/loose.txt", "=t/dt=3/x-a", "=t/dt=3/x-y/z", "=t/top"}},
		{"t/dt=3/", "-", []string{"t/dt=3/x-"}},
		{"t/dt=", "/", []string{"t/dt=1/", "t/dt=2/", "t/dt=3/"}},
		{"t/dt=2/hr=1", "/", []string{"t/dt=2/hr=1/", "t/dt=2/hr=10/"}},
		{"t/dt=1/_pswap/", "/", []string{"t/dt=1/_pswap/gen/", "t/dt=1/_pswap/manifests/", "=t/dt=1/_pswap/pointer.json"}},
		{"", "/", []string{"t/"}},
		{"w/", "/", nil},
		{"nothing/", "/", nil},
	} {
		got := listDelimited(t, s, c.prefix, c.delim)
		if !slices.Equal(got, c.want) {
			t.Errorf("ListDelimited(%q, %q) = %q, want %q", c.prefix, c.delim, got, c.want)
		}
		if native {
			var model []string
			for e, err := range store.RollUp(s.List(ctx, c.prefix), c.prefix, c.delim) {
				if err != nil {
					t.Fatal(err)
				}
				model = append(model, entryName(e))
			}
			if !slices.Equal(got, model) {
				t.Errorf("ListDelimited(%q, %q) = %q, but the rolled-up List gives %q", c.prefix, c.delim, got, model)
			}
		}
	}
	for e, err := range store.ListDelimited(ctx, s, "t/dt=2/", "/") {
		if err != nil {
			t.Fatal(err)
		}
		if e.IsPrefix && (e.Size != 0 || !e.ModTime.IsZero()) || !e.IsPrefix && (e.Size != int64(len(e.Key)) || e.ModTime.IsZero()) {
			t.Errorf("entry %+v", e)
		}
	}
	if got := listDelimited(t, s, "t/", ""); len(got) != len(keys) {
		t.Errorf("ListDelimited with no delimiter gave %d entries, want %d objects", len(got), len(keys))
	}
	if err := store.ValidatePrefix("../x"); err == nil {
		t.Fatal("ValidatePrefix accepted ../x")
	}
	for _, err := range store.ListDelimited(ctx, s, "../x/", "/") {
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("ListDelimited(../x/): got %v, want ErrInvalidKey", err)
		}
	}
}

func testLexicalOrder(t *testing.T, h harness) {
	s := h.newStore(t)
	keys := []string{"p/b/x", "p/b.txt", "p/b-1", "p/a", "p/c/d/e"}
	for _, k := range keys {
		mustPut(t, s, k, "v", store.PutOptions{})
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	if got := listKeys(t, s, "p/"); !slices.Equal(got, want) {
		t.Fatalf("List order %q, want %q", got, want)
	}
}

func testUnicodeAndSpaces(t *testing.T, h harness) {
	s := h.newStore(t)
	keys := []string{"dir with space/file name.txt", "naïve/日本語/☃.parquet", "dt=2026-11-29/city=S%C3%A3o Paulo/x", "sym+bols/a&b=c;d@e"}
	for _, k := range keys {
		mustPut(t, s, k, "content of "+k, store.PutOptions{})
		expectContent(t, s, k, "content of "+k)
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	if got := listKeys(t, s, ""); !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
}

func testInvalidKeys(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	for _, k := range []string{"", "../escape", "a/../../b", "/abs", "a//b", "a/./b", "nul\x00byte", "new\nline", `back\slash`, "x/.y.pswap-tmp", "ends/"} {
		if _, err := s.Put(ctx, k, []byte("x"), store.PutOptions{}); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Put(%q): got %v, want ErrInvalidKey", k, err)
		}
		if _, _, err := s.Get(ctx, k); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Get(%q): got %v, want ErrInvalidKey", k, err)
		}
		if err := s.Delete(ctx, k); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Delete(%q): got %v, want ErrInvalidKey", k, err)
		}
	}
	if got := listKeys(t, s, ""); len(got) != 0 {
		t.Fatalf("invalid puts wrote %q", got)
	}
}

func testCancelledContext(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Put(cctx, "k", []byte("x"), store.PutOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with cancelled ctx: %v", err)
	}
	if _, _, err := s.Get(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with cancelled ctx: %v", err)
	}
	for _, err := range s.List(cctx, "") {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("List with cancelled ctx: %v", err)
		}
	}
	if _, err := s.Stat(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cancelled Put wrote the key: %v", err)
	}
}

func testMultipartRoundTrip(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	size := 3*h.opts.PartSize + h.opts.PartSize/2 + 12345 // more than 3 parts, odd tail
	data := make([]byte, size)
	rand.Read(data)
	w, err := s.NewWriter(ctx, "big/object.bin", store.WriterOptions{PartSize: h.opts.PartSize, Concurrency: 2, PutOptions: store.PutOptions{IfNoneMatch: true}})
	if err != nil {
		t.Fatal(err)
	}
	// Odd-sized writes that straddle part boundaries.
	for off, step := int64(0), int64(1); off < size; step = step*7 + 13 {
		n := min(step%(3<<20)+1, size-off)
		if _, err := w.Write(data[off : off+n]); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	if _, err := s.Stat(ctx, "big/object.bin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("object visible before Commit: %v", err)
	}
	a, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if a.Size != size {
		t.Fatalf("committed size %d, want %d", a.Size, size)
	}
	got, _, err := store.ReadAll(ctx, s, "big/object.bin")
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("multipart object differs: got %d bytes, want %d", len(got), len(data))
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Commit: %v", err)
	}
	if _, err := s.Stat(ctx, "big/object.bin"); err != nil {
		t.Fatalf("Abort after Commit removed the object: %v", err)
	}
}

func testWriterAbort(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	w, err := s.NewWriter(ctx, "gen/part-0.bin", store.WriterOptions{PartSize: h.opts.PartSize})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for range int(h.opts.PartSize>>20) + 2 { // past the first part
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, s, ""); len(got) != 0 {
		t.Fatalf("aborted write left %q", got)
	}
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
	if got := listKeys(t, s, ""); len(got) != 0 {
		t.Fatalf("Commit after Abort left %q", got)
	}
}

func testWriterCreateIfAbsent(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	mustPut(t, s, "k", "original", store.PutOptions{})
	w, err := s.NewWriter(ctx, "k", store.WriterOptions{PutOptions: store.PutOptions{IfNoneMatch: true}})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "replacement")
	if _, err := w.Commit(); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("writer create on existing key: got %v, want ErrPrecondition", err)
	}
	expectContent(t, s, "k", "original")
}

func testWriterCancelled(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	cctx, cancel := context.WithCancel(ctx)
	w, err := s.NewWriter(cctx, "gen/cancelled.bin", store.WriterOptions{PartSize: h.opts.PartSize})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for range int(h.opts.PartSize>>20) + 1 {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	w.Write(chunk) // may or may not fail; Commit must.
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit after cancel succeeded")
	}
	w.Abort()
	if got := listKeys(t, s, ""); len(got) != 0 {
		t.Fatalf("cancelled write left %q", got)
	}
}

func testModTimeOrder(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	a1 := mustPut(t, s, "t1", "x", store.PutOptions{})
	time.Sleep(10 * time.Millisecond)
	mustPut(t, s, "t2", "y", store.PutOptions{})
	s1, _ := s.Stat(ctx, "t1")
	s2, err := s.Stat(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	// Stores keep at least second precision: later writes never look older.
	if s2.ModTime.Before(s1.ModTime) {
		t.Fatalf("later write has older ModTime: %v < %v", s2.ModTime, s1.ModTime)
	}
	if c, ok := s.(store.Clock); ok {
		now, err := c.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if now.Add(2 * time.Second).Before(a1.ModTime) {
			t.Fatalf("store clock %v is before its own object's ModTime %v", now, s1.ModTime)
		}
	}
}

func testDeleteAll(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	var keys []string
	for i := range 1200 {
		keys = append(keys, fmt.Sprintf("del/%04d", i))
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for _, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.Put(ctx, k, []byte("x"), store.PutOptions{})
		}()
	}
	wg.Wait()
	mustPut(t, s, "keep", "x", store.PutOptions{})
	if err := store.DeleteAll(ctx, s, keys); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, s, ""); !slices.Equal(got, []string{"keep"}) {
		t.Fatalf("after DeleteAll: %d keys left (%q...)", len(got), got[:min(3, len(got))])
	}
}

// Increment adds one to a decimal counter object by read + conditional
// replace, retrying lost races. conflicts counts the retries.
func Increment(ctx context.Context, s store.Store, key string, conflicts *atomic.Int64) error {
	for attempt := 0; attempt < 10000; attempt++ {
		b, a, err := store.ReadAll(ctx, s, key)
		if err != nil {
			return err
		}
		var n int
		if _, err := fmt.Sscan(string(b), &n); err != nil {
			return fmt.Errorf("counter %q: %w", b, err)
		}
		_, err = s.Put(ctx, key, []byte(fmt.Sprint(n+1)), store.PutOptions{IfMatch: a.ETag})
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrPrecondition) && !store.IsRetryable(err) {
			return err
		}
		if conflicts != nil {
			conflicts.Add(1)
		}
	}
	return errors.New("increment: too many conflicts")
}

func mustPut(t *testing.T, s store.Store, key, body string, opts store.PutOptions) store.Attrs {
	t.Helper()
	a, err := s.Put(context.Background(), key, []byte(body), opts)
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return a
}

func expectContent(t *testing.T, s store.Store, key, want string) {
	t.Helper()
	got, _, err := store.ReadAll(context.Background(), s, key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if string(got) != want {
		t.Fatalf("Get(%q) = %q, want %q", key, got, want)
	}
}

// listDelimited lists through store.ListDelimited and names each entry:
// a common prefix as itself, an object as "=" + its key.
func listDelimited(t *testing.T, s store.Store, prefix, delim string) []string {
	t.Helper()
	var out []string
	for e, err := range store.ListDelimited(context.Background(), s, prefix, delim) {
		if err != nil {
			t.Fatalf("ListDelimited(%q, %q): %v", prefix, delim, err)
		}
		out = append(out, entryName(e))
	}
	return out
}

func entryName(e store.ListEntry) string {
	if e.IsPrefix {
		return e.Key
	}
	return "=" + e.Key
}

func listKeys(t *testing.T, s store.Store, prefix string) []string {
	t.Helper()
	var keys []string
	for a, err := range s.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		keys = append(keys, a.Key)
	}
	return keys
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("index %d: %q vs %q", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("length %d vs %d", len(a), len(b))
}

// testContentMD5: a ContentMD5 the store reports (Put, Stat, List) is the
// hex MD5 of the bytes, the same for the same bytes written again (a new
// version) and another for other bytes; with Options.ContentMD5 Stat and
// List must report it.
func testContentMD5(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.newStore(t)
	check := func(data []byte) {
		t.Helper()
		sum := md5.Sum(data)
		want := hex.EncodeToString(sum[:])
		pa, err := s.Put(ctx, "md5/obj", data, store.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sa, err := s.Stat(ctx, "md5/obj")
		if err != nil {
			t.Fatal(err)
		}
		var la store.Attrs
		for a, err := range s.List(ctx, "md5/") {
			if err != nil {
				t.Fatal(err)
			}
			la = a
		}
		for _, c := range []struct {
			op string
			a  store.Attrs
		}{{"put", pa}, {"stat", sa}, {"list", la}} {
			switch {
			case c.a.ContentMD5 != "" && c.a.ContentMD5 != want:
				t.Errorf("%s of %q: ContentMD5 %q, want %q (the bytes' MD5)", c.op, data, c.a.ContentMD5, want)
			case c.a.ContentMD5 == "" && h.opts.ContentMD5 && c.op != "put":
				t.Errorf("%s of %q: no ContentMD5, want %q", c.op, data, want)
			}
		}
	}
	check([]byte("same bytes"))
	check([]byte("same bytes")) // a new version of the same bytes
	check([]byte("other bytes"))
}
