package staging

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/store/filestore"
	"github.com/pswap/pswap/store/memstore"
)

// stagedFiles is what one staging run wrote: the content and each file's
// bytes.
type stagedFiles struct {
	c     manifest.Content
	bytes [][]byte
}

// stageSplit writes rows through Write calls of the given sizes (the rest
// in one call) and returns the files.
func stageSplit[T any](t *testing.T, opts Options, rows []T, calls []int) stagedFiles {
	t.Helper()
	st, s := newMem(t, opts)
	for _, n := range calls {
		n = min(n, len(rows))
		if err := Write(s, rows[:n]...); err != nil {
			t.Fatal(err)
		}
		rows = rows[n:]
	}
	if err := Write(s, rows...); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)
	out := stagedFiles{c: c}
	for _, f := range c.Files {
		out.bytes = append(out.bytes, fileBytes(t, st, f))
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want stagedFiles) {
	t.Helper()
	if len(got.bytes) != len(want.bytes) {
		t.Fatalf("%s: %d files, want %d", what, len(got.bytes), len(want.bytes))
	}
	for i := range got.bytes {
		if !bytes.Equal(got.bytes[i], want.bytes[i]) {
			t.Fatalf("%s: file %d differs (%d bytes, sha256 %x; want %d bytes, %x)", what, i,
				len(got.bytes[i]), sha256.Sum256(got.bytes[i]), len(want.bytes[i]), sha256.Sum256(want.bytes[i]))
		}
	}
	if got.c.ContentChecksum != want.c.ContentChecksum || got.c.Rows != want.c.Rows {
		t.Fatalf("%s: content %s (%d rows), want %s (%d rows)", what, got.c.ContentChecksum, got.c.Rows,
			want.c.ContentChecksum, want.c.Rows)
	}
}

// randomCalls splits n rows into Write calls of random sizes.
func randomCalls(n int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, 2))
	var calls []int
	for n > 0 {
		k := min(n, 1+r.IntN(5000))
		calls = append(calls, k)
		n -= k
	}
	return calls
}

// TestParallelEncodingDeterministic: the bytes of every file are the same
// whatever the number of encoders, GOMAXPROCS, and the sizes of the Write
// calls, over several files of many row groups each; and every column
// chunk keeps its statistics and page index.
func TestParallelEncodingDeterministic(t *testing.T) {
	rows := makeRows(24000, 41)
	base := Options{TargetFileSize: 80 << 10, RowGroupRows: 1200}
	want := stageSplit(t, Options{TargetFileSize: base.TargetFileSize, RowGroupRows: base.RowGroupRows, Encoders: 1}, rows, nil)
	if len(want.bytes) < 3 {
		t.Fatalf("%d files, want several", len(want.bytes))
	}
	var groups int
	for i, b := range want.bytes {
		f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		md := f.Metadata()
		groups += len(md.RowGroups)
		if len(md.RowGroups) < 3 {
			t.Fatalf("file %d has %d row groups, want several", i, len(md.RowGroups))
		}
		for _, rg := range md.RowGroups {
			if rg.NumRows > base.RowGroupRows {
				t.Fatalf("file %d: a row group of %d rows", i, rg.NumRows)
			}
			for _, cc := range rg.Columns {
				if cc.ColumnIndexOffset == 0 || cc.OffsetIndexOffset == 0 {
					t.Fatalf("file %d: column %v has no page index", i, cc.MetaData.PathInSchema)
				}
				if st := cc.MetaData.Statistics; st.MinValue == nil || st.MaxValue == nil {
					t.Fatalf("file %d: column %v has no min/max statistics", i, cc.MetaData.PathInSchema)
				}
			}
		}
	}
	t.Logf("%d files, %d row groups", len(want.bytes), groups)

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	encoders := []int{0, 8}
	if os.Getenv("PSWAP_STRESS") == "1" {
		encoders = []int{0, 1, 2, 3, 8}
	}
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		for _, enc := range encoders {
			opts := base
			opts.Encoders = enc
			what := fmt.Sprintf("GOMAXPROCS %d, %d encoders", procs, enc)
			sameFiles(t, what+", one call", stageSplit(t, opts, rows, nil), want)
			sameFiles(t, what+", random calls", stageSplit(t, opts, rows, randomCalls(len(rows), uint64(procs*10+enc))), want)
		}
	}
	runtime.GOMAXPROCS(2)
	sameFiles(t, "calls of one row", stageSplit(t, base, rows[:5000], repeat(1, 5000)),
		stageSplit(t, base, rows[:5000], nil))
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestParallelEncodingMatchesOneWriter: with the default options, the file
// is byte for byte the file of one parquet-go writer given the same rows
// (the row groups are copied verbatim, pages, statistics and page index).
func TestParallelEncodingMatchesOneWriter(t *testing.T) {
	rows := makeRows(DefaultRowGroupRows+7000, 42)
	got := stageSplit(t, Options{Encoders: 3}, rows, randomCalls(len(rows), 9))
	if len(got.bytes) != 1 {
		t.Fatalf("%d files, want 1", len(got.bytes))
	}
	s := New(context.Background(), memstore.New(), testPrefix, Options{})
	if s.err != nil {
		t.Fatal(s.err)
	}
	var buf bytes.Buffer
	w := pq.NewGenericWriter[row](&buf, append([]pq.WriterOption{pq.SchemaOf(row{})}, s.pqOpts...)...)
	for r := rows; len(r) > 0; {
		n := min(len(r), structBatch)
		if _, err := w.Write(r[:n]); err != nil {
			t.Fatal(err)
		}
		r = r[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.bytes[0], buf.Bytes()) {
		t.Fatalf("staged file (%d bytes) differs from one writer's (%d bytes)", len(got.bytes[0]), buf.Len())
	}
}

// uniq has a column of unique strings: its dictionary outgrows the limit
// in every row group and falls back to PLAIN, so row groups mix encodings
// and are not copied verbatim.
type uniq struct {
	ID int64  `parquet:"id"`
	S  string `parquet:"s"`
}

func uniqRows(n int) []uniq {
	rows := make([]uniq, n)
	for i := range rows {
		rows[i] = uniq{ID: int64(i), S: fmt.Sprintf("value %08d of a column that never repeats", i*7919%n)}
	}
	return rows
}

// TestParallelDictionaryFallback: chunks whose dictionary fell back to
// PLAIN are written from their rows, with the bytes of one writer
// whatever the encoders; DuckDB reads every value.
func TestParallelDictionaryFallback(t *testing.T) {
	// A dictionary falls back when a page is cut: row groups of more than
	// one page of indexes (65,536 rows). A multiple of 64 rows, so that one
	// writer cuts its pages where the chunks do.
	const groupRows = 80000
	rows := uniqRows(groupRows + 10000)
	s := New(context.Background(), memstore.New(), testPrefix, Options{RowGroupRows: groupRows, Encoders: 2})
	p := newRowPipe[uniq](s, &structInfo{schema: pq.SchemaOf(uniq{})})
	if p.direct {
		t.Skip("one CPU: no encoder goroutines")
	}
	if err := p.write(rows[:groupRows]); err != nil {
		t.Fatal(err)
	}
	c := p.queue[0]
	<-c.done
	if c.err != nil {
		t.Fatal(c.err)
	}
	if copyable(c.pf) {
		t.Fatal("a row group whose dictionary fell back to PLAIN is reported copyable")
	}
	p.abandon()

	want := stageSplit(t, Options{RowGroupRows: groupRows, Encoders: 1}, rows, nil)
	sameFiles(t, "4 encoders", stageSplit(t, Options{RowGroupRows: groupRows, Encoders: 4}, rows, randomCalls(len(rows), 3)), want)
	var buf bytes.Buffer
	w := pq.NewGenericWriter[uniq](&buf, append([]pq.WriterOption{pq.SchemaOf(uniq{})}, s.pqOpts...)...)
	for r := rows; len(r) > 0; r = r[min(len(r), structBatch):] {
		if _, err := w.Write(r[:min(len(r), structBatch)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(want.bytes) != 1 || !bytes.Equal(want.bytes[0], buf.Bytes()) {
		t.Fatalf("%d files; the staged file differs from one writer's", len(want.bytes))
	}

	duckcheck.SkipIfUnavailable(t)
	path := filepath.Join(t.TempDir(), "uniq.parquet")
	if err := os.WriteFile(path, want.bytes[0], 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := duckcheck.Query(context.Background(), `SELECT count(*) AS n, sum(id) AS sid, count(DISTINCT s) AS ds,
		sum(CAST(substr(s, 7, 8) AS BIGINT)) AS sv FROM read_parquet(`+duckcheck.Quote(path)+`)`)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(rows))
	wantSum := n * (n - 1) / 2 // ids 0..n-1; the values are a permutation of them
	if got := fmt.Sprint(res[0]["n"], " ", res[0]["sid"], " ", res[0]["ds"], " ", res[0]["sv"]); got != fmt.Sprint(n, " ", wantSum, " ", n, " ", wantSum) {
		t.Fatalf("DuckDB reads n, sum(id), distinct s, sum of values = %s", got)
	}
}

// TestParallelIndependentReaders: hyparquet and DuckDB read the files of a
// generation encoded by several encoders (several files, many row groups)
// and find the rows that one parquet-go writer's file holds.
func TestParallelIndependentReaders(t *testing.T) {
	duckcheck.SkipIfHyparquetUnavailable(t)
	duckcheck.SkipIfUnavailable(t)
	ctx := context.Background()
	rows := makeRows(6000, 43)
	dir := t.TempDir()
	fs, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := New(ctx, fs, testPrefix, Options{TargetFileSize: 30 << 10, RowGroupRows: 500, Encoders: 4})
	for _, n := range randomCalls(len(rows), 5) {
		if err := Write(s, rows[:n]...); err != nil {
			t.Fatal(err)
		}
		rows = rows[n:]
	}
	rows = makeRows(6000, 43)
	c, err := s.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) < 3 {
		t.Fatalf("%d files, want several", len(c.Files))
	}
	var buf bytes.Buffer
	w := pq.NewGenericWriter[row](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "reference.parquet")
	if err := os.WriteFile(ref, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range c.Files {
		paths = append(paths, filepath.Join(dir, filepath.FromSlash(testPrefix+f.Path)))
	}
	files, errs, err := duckcheck.ReadParquetFiles(ctx, append(paths, ref)...)
	if err != nil {
		t.Fatal(err)
	}
	var all duckcheck.ParquetFile
	for i, f := range files[:len(paths)] {
		if errs[i] != nil {
			t.Fatalf("hyparquet: %s: %v", paths[i], errs[i])
		}
		if f.NumRows != c.Files[i].Rows || int64(len(f.Rows)) != f.NumRows {
			t.Fatalf("hyparquet: %s: %d rows (footer %d), manifest %d", paths[i], len(f.Rows), f.NumRows, c.Files[i].Rows)
		}
		all.Rows = append(all.Rows, f.Rows...)
	}
	if errs[len(paths)] != nil {
		t.Fatal(errs[len(paths)])
	}
	if got, want := all.Checksum(), files[len(paths)].Checksum(); got != want {
		t.Fatalf("hyparquet reads %s from the staged files, %s from one writer's file", got, want)
	}
	for i, f := range files[:len(paths)] { // rows in order across files
		if id := fmt.Sprint(f.Rows[0]["id"]); i > 0 && id != fmt.Sprint(sumRows(c.Files[:i])) {
			t.Fatalf("file %d starts at id %s", i, id)
		}
	}

	src := "read_parquet(" + filesList(dir, c) + ")"
	ref = "read_parquet(" + duckcheck.Quote(ref) + ")"
	q := func(from string) string {
		return `SELECT count(*) AS n, sum(id) AS sid, sum(u) AS su, sum(price) AS sp, count(score) AS cs,
			count(name) AS cn, sum(epoch_us("at")) AS sat, sum(day - DATE '1970-01-01') AS sd FROM ` + from
	}
	res, err := duckcheck.Run(ctx, q(src), q(ref))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(res.All[0]), fmt.Sprint(res.All[1]); got != want {
		t.Fatalf("DuckDB: staged files %s, one writer's file %s", got, want)
	}
	if fmt.Sprint(res.All[0][0]["n"]) != fmt.Sprint(len(rows)) {
		t.Fatalf("DuckDB counts %v rows, want %d", res.All[0][0]["n"], len(rows))
	}
}

func sumRows(files []manifest.File) int64 {
	var n int64
	for _, f := range files {
		n += f.Rows
	}
	return n
}

// TestParallelCancel: cancelling while chunks are being encoded and files
// uploaded fails the Stager, leaves nothing in the store, and leaves no
// encoder goroutine behind.
func TestParallelCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	rows := makeRows(40000, 44)
	for _, limit := range []int64{1, 200 << 10, 600 << 10} {
		ctx, cancel := context.WithCancel(context.Background())
		mem := memstore.New()
		cs := &cancelStore{Store: mem, limit: limit, cancel: cancel, ctx: ctx}
		s := New(ctx, cs, testPrefix, Options{TargetFileSize: 64 << 10, Encoders: 4, Compression: Uncompressed})
		var err error
		for r := rows; len(r) > 0 && err == nil; r = r[min(len(r), 3000):] {
			err = Write(s, r[:min(len(r), 3000)]...)
		}
		if err == nil {
			_, err = s.Finish(context.Background())
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("limit %d: err = %v, want context.Canceled", limit, err)
		}
		if keys := keysUnder(t, mem, ""); len(keys) != 0 {
			t.Fatalf("limit %d: left %v", limit, keys)
		}
		if n := s.Rows(); n > int64(len(rows)) {
			t.Fatalf("limit %d: Rows() = %d", limit, n)
		}
		cancel()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestParallelAbortWhileEncoding: Abort while chunks are still being
// encoded waits for them and leaves nothing.
func TestParallelAbortWhileEncoding(t *testing.T) {
	st, s := newMem(t, Options{RowGroupRows: 4096, Encoders: 8})
	if err := Write(s, makeRows(8*4096, 45)...); err != nil {
		t.Fatal(err)
	}
	if n := s.Rows(); n != 8*4096 {
		t.Fatalf("Rows() = %d, want %d", n, 8*4096)
	}
	if err := s.Abort(context.Background()); err != nil {
		t.Fatal(err)
	}
	if keys := keysUnder(t, st, ""); len(keys) != 0 {
		t.Fatalf("left %v", keys)
	}
}

// TestParallelInputSwitch: structs of two types and Arrow records
// interleaved, each switch starting a file, with chunks in flight.
func TestParallelInputSwitch(t *testing.T) {
	rows := makeRows(20000, 46)
	st, s := newMem(t, Options{RowGroupRows: 2048, Encoders: 4})
	if err := Write(s, rows[:10000]...); err != nil {
		t.Fatal(err)
	}
	rec := toRecord(rows[10000:15000])
	if err := s.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	ptrs := make([]*row, 5000)
	for i := range ptrs {
		ptrs[i] = &rows[15000+i]
	}
	if err := Write(s, ptrs...); err != nil {
		t.Fatal(err)
	}
	c := finish(t, s)
	if len(c.Files) != 3 {
		t.Fatalf("%d files, want 3 (one per input kind)", len(c.Files))
	}
	checkContent(t, st, c, 20000)
	_, want := stageStructs(t, Options{}, rows)
	if c.ContentChecksum != want.ContentChecksum {
		t.Fatalf("checksum %s, want %s", c.ContentChecksum, want.ContentChecksum)
	}
}

// TestResetWriterBytes records whether parquet-go's GenericWriter.Reset
// gives the bytes of a new writer (v0.32: it does not, so staging does not
// reuse writers). Either way the reset writer's file must hold the rows.
func TestResetWriterBytes(t *testing.T) {
	s := New(context.Background(), memstore.New(), testPrefix, Options{})
	opts := append([]pq.WriterOption{pq.SchemaOf(row{})}, s.pqOpts...)
	a, b := makeRows(30000, 1), makeRows(30000, 2)
	var fresh, first, reused bytes.Buffer
	w := pq.NewGenericWriter[row](&fresh, opts...)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2 := pq.NewGenericWriter[row](&first, opts...)
	w2.Write(a)
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	w2.Reset(&reused)
	w2.Write(b)
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	got := readParquetGo[row](t, reused.Bytes())
	if len(got) != len(b) || got[len(b)-1].ID != b[len(b)-1].ID {
		t.Fatalf("reset writer's file has %d rows", len(got))
	}
	t.Logf("reset writer: %d bytes, new writer: %d bytes, identical: %v (staging reuses writers only if identical)",
		reused.Len(), fresh.Len(), bytes.Equal(fresh.Bytes(), reused.Bytes()))
}

// TestDefaultEncoders: by default one core is left to the row hash and the
// upload (at most maxAutoEncoders encoders); an explicit number is kept,
// and one CPU always means the direct path.
func TestDefaultEncoders(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ procs, opt, want int }{
		{1, 0, 1}, {2, 0, 1}, {3, 0, 2}, {4, 0, 3}, {16, 0, maxAutoEncoders},
		{2, 2, 2}, {4, 1, 1}, {1, 3, 1}, {8, 6, 6},
	} {
		runtime.GOMAXPROCS(c.procs)
		if got := (Options{Encoders: c.opt}).encoders(); got != c.want {
			t.Errorf("GOMAXPROCS %d, Encoders %d: %d encoders, want %d", c.procs, c.opt, got, c.want)
		}
	}
}
