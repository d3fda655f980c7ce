package staging

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pswap/pswap/internal/testing/duckcheck"
	"github.com/pswap/pswap/store"
	"github.com/pswap/pswap/store/filestore"
)

// benchRow is the benchmark's row; DuckDB generates the same values in
// BenchmarkCompareDuckDB.
type benchRow struct {
	ID int64     `parquet:"id"`
	K  int32     `parquet:"k"`
	V  float64   `parquet:"v"`
	S  string    `parquet:"s"`
	T  time.Time `parquet:"t,timestamp(microsecond)"`
}

const benchBatch = 16 << 10

var benchStrings = func() []string {
	s := make([]string, 1000)
	for i := range s {
		s[i] = fmt.Sprintf("name-%d", i)
	}
	return s
}()

func fillBench(batch []benchRow, first int64) {
	for j := range batch {
		i := first + int64(j)
		batch[j] = benchRow{ID: i, K: int32(i % 1000), V: float64(i) * 0.5, S: benchStrings[i%1000],
			T: time.Unix(1_800_000_000+i, 0).UTC()}
	}
}

var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "k", Type: arrow.PrimitiveTypes.Int32},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64},
	{Name: "s", Type: arrow.BinaryTypes.String},
	{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}, nil)

func benchRecord(b *array.RecordBuilder, first int64, n int) arrow.RecordBatch {
	id := b.Field(0).(*array.Int64Builder)
	k := b.Field(1).(*array.Int32Builder)
	v := b.Field(2).(*array.Float64Builder)
	s := b.Field(3).(*array.StringBuilder)
	t := b.Field(4).(*array.TimestampBuilder)
	for j := 0; j < n; j++ {
		i := first + int64(j)
		id.Append(i)
		k.Append(int32(i % 1000))
		v.Append(float64(i) * 0.5)
		s.Append(benchStrings[i%1000])
		t.Append(arrow.Timestamp((1_800_000_000 + i) * 1_000_000))
	}
	return b.NewRecordBatch()
}

// discardStore is a store whose writers only count bytes, so benchmarks
// measure encoding and hashing rather than a backend.
type discardStore struct{ bytes atomic.Int64 }

type discardWriter struct {
	s *discardStore
	n int64
}

func (w *discardWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
func (w *discardWriter) Commit() (store.Attrs, error) {
	w.s.bytes.Add(w.n)
	return store.Attrs{Size: w.n}, nil
}
func (w *discardWriter) Abort() error { return nil }

func (d *discardStore) Get(context.Context, string) (io.ReadCloser, store.Attrs, error) {
	return nil, store.Attrs{}, store.ErrNotFound
}
func (d *discardStore) Stat(context.Context, string) (store.Attrs, error) {
	return store.Attrs{}, store.ErrNotFound
}
func (d *discardStore) Put(context.Context, string, []byte, store.PutOptions) (store.Attrs, error) {
	return store.Attrs{}, nil
}
func (d *discardStore) NewWriter(context.Context, string, store.WriterOptions) (store.Writer, error) {
	return &discardWriter{s: d}, nil
}
func (d *discardStore) Delete(context.Context, string) error { return nil }
func (d *discardStore) List(context.Context, string) iter.Seq2[store.Attrs, error] {
	return func(func(store.Attrs, error) bool) {}
}
func (d *discardStore) URI(key string) string { return "discard:///" + key }
func (d *discardStore) Close() error          { return nil }

func report(b *testing.B, rows, bytes int64, elapsed time.Duration) {
	b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(bytes)/1e6/elapsed.Seconds(), "MB/s")
	b.ReportMetric(float64(bytes)/float64(rows), "B/row")
}

// BenchmarkWriteStructs: Go structs through parquet-go, hashing included;
// MB/s counts Parquet bytes out.
func BenchmarkWriteStructs(b *testing.B) {
	ctx := context.Background()
	st := &discardStore{}
	s := New(ctx, st, "bench/", Options{})
	batch := make([]benchRow, benchBatch)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fillBench(batch, int64(i)*benchBatch)
		b.StartTimer()
		if err := Write(s, batch...); err != nil {
			b.Fatal(err)
		}
	}
	c, err := s.Finish(ctx)
	if err != nil {
		b.Fatal(err)
	}
	report(b, c.Rows, c.Bytes, b.Elapsed())
}

// BenchmarkWriteArrow: Arrow records through pqarrow, hashing included.
func BenchmarkWriteArrow(b *testing.B) {
	ctx := context.Background()
	st := &discardStore{}
	s := New(ctx, st, "bench/", Options{})
	rb := array.NewRecordBuilder(memory.DefaultAllocator, benchSchema)
	defer rb.Release()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		rec := benchRecord(rb, int64(i)*benchBatch, benchBatch)
		b.StartTimer()
		if err := s.WriteRecord(rec); err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
	c, err := s.Finish(ctx)
	if err != nil {
		b.Fatal(err)
	}
	report(b, c.Rows, c.Bytes, b.Elapsed())
}

// peakHeap samples the heap in use until stop is called and returns the
// maximum seen.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// BenchmarkPeakMemory writes a partition many times larger than the
// buffer budget (RowGroupBytes 8 MiB, files of 32 MiB) to a file store and
// reports the peak heap in use. Rows are generated batch by batch, so the
// input is never held in memory.
func BenchmarkPeakMemory(b *testing.B) {
	const rows = 8 << 20
	for _, kind := range []string{"structs", "arrow"} {
		b.Run(kind, func(b *testing.B) {
			for range b.N {
				ctx := context.Background()
				fs, err := filestore.New(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := peakHeap()
				start := time.Now()
				s := New(ctx, fs, "bench/", Options{RowGroupBytes: 8 << 20, TargetFileSize: 32 << 20})
				batch := make([]benchRow, benchBatch)
				rb := array.NewRecordBuilder(memory.DefaultAllocator, benchSchema)
				for first := int64(0); first < rows; first += benchBatch {
					if kind == "structs" {
						fillBench(batch, first)
						err = Write(s, batch...)
					} else {
						rec := benchRecord(rb, first, benchBatch)
						err = s.WriteRecord(rec)
						rec.Release()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				rb.Release()
				c, err := s.Finish(ctx)
				if err != nil {
					b.Fatal(err)
				}
				elapsed := time.Since(start)
				peak := stop()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				report(b, c.Rows, c.Bytes, elapsed)
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(c.Bytes)/(1<<20), "written-MiB")
				b.ReportMetric(float64(c.Rows*int64(8+4+8+8+8+8))/(1<<20), "input-MiB")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "alloc-MiB")
				b.ReportMetric(float64(len(c.Files)), "files")
			}
		})
	}
}

// BenchmarkCompareDuckDB writes the same rows with pswap (structs and
// Arrow, to a file store) and with DuckDB's COPY ... TO (timed inside
// DuckDB's process, without its start-up) and reports the ratio of the
// times: pswap-vs-duckdb > 1 means pswap is slower.
func BenchmarkCompareDuckDB(b *testing.B) {
	duckcheck.SkipIfUnavailable(b)
	const rows = 2 << 20
	ctx := context.Background()
	dir := b.TempDir()
	for range b.N {
		out := filepath.Join(dir, "duck.parquet")
		r, err := duckcheck.Run(ctx,
			"SET threads TO 2",
			"COPY (SELECT range AS id, (range % 1000)::INTEGER AS k, range * 0.5 AS v, 'name-' || (range % 1000) AS s, "+
				fmt.Sprintf("to_timestamp(1800000000 + range) AS t FROM range(%d)) TO %s (FORMAT parquet, COMPRESSION snappy)", rows, duckcheck.Quote(out)),
			"SELECT count(*) AS n FROM read_parquet("+duckcheck.Quote(out)+")")
		if err != nil {
			b.Fatal(err)
		}
		duck := r.Durations[1]
		if r.Rows[0]["n"] != fmt.Sprint(rows) {
			b.Fatalf("DuckDB wrote %v rows", r.Rows[0]["n"])
		}
		fi, err := os.Stat(out)
		if err != nil {
			b.Fatal(err)
		}
		for _, kind := range []string{"structs", "arrow"} {
			fs, err := filestore.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			s := New(ctx, fs, "bench/", Options{})
			batch := make([]benchRow, benchBatch)
			rb := array.NewRecordBuilder(memory.DefaultAllocator, benchSchema)
			for first := int64(0); first < rows; first += benchBatch {
				if kind == "structs" {
					fillBench(batch, first)
					err = Write(s, batch...)
				} else {
					rec := benchRecord(rb, first, benchBatch)
					err = s.WriteRecord(rec)
					rec.Release()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			rb.Release()
			c, err := s.Finish(ctx)
			if err != nil {
				b.Fatal(err)
			}
			ours := time.Since(start)
			b.ReportMetric(ours.Seconds()/duck.Seconds(), kind+"-vs-duckdb")
			b.ReportMetric(float64(c.Rows)/ours.Seconds(), kind+"-rows/s")
			b.Logf("%d rows: pswap %s %v (%d bytes), DuckDB COPY %v (%d bytes): time ratio %.2f", rows, kind, ours.Round(time.Millisecond),
				c.Bytes, duck.Round(time.Millisecond), fi.Size(), ours.Seconds()/duck.Seconds())
		}
		b.ReportMetric(float64(rows)/duck.Seconds(), "duckdb-rows/s")
	}
}
