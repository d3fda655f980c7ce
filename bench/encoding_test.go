package bench

import (
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/format"

	"github.com/klauspost/compress/s2"
)

// fastSnappy is Snappy block compression with s2's fastest
// Snappy-compatible encoder; parquet-go's own codec uses the slower
// "better" one (klauspost/compress/snappy.Encode is EncodeSnappyBetter).
type fastSnappy struct{ *snappy.Codec }

func (fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst[:cap(dst)], src), nil
}

var _ compress.Codec = fastSnappy{&snappy.Codec{}}

// saleDict is Sale with a dictionary-encoded city column.
type saleDict struct {
	ID       int64     `parquet:"id"`
	TS       time.Time `parquet:"ts,timestamp(microsecond)"`
	City     string    `parquet:"city,dict"`
	Amount   float64   `parquet:"amount"`
	Quantity int32     `parquet:"quantity"`
	Note     *string   `parquet:"note,optional"`
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkParquetOptions measures parquet-go writing 1M distinct sales
// rows (generated on the fly) to a byte counter with a few writer settings, reporting ns/row and bytes/row,
// so that the staging defaults can be picked on evidence.
func BenchmarkParquetOptions(b *testing.B) {
	const n = 1 << 20
	rows := Sales(make([]Sale, batchRows), 0)
	dict := make([]saleDict, len(rows))
	cases := []struct {
		name string
		opts []pq.WriterOption
		dict bool
	}{
		{"snappy-better(default)", []pq.WriterOption{pq.Compression(&snappy.Codec{})}, false},
		{"snappy-fast", []pq.WriterOption{pq.Compression(fastSnappy{&snappy.Codec{}})}, false},
		{"snappy-fast+dict-city", []pq.WriterOption{pq.Compression(fastSnappy{&snappy.Codec{}})}, true},
		{"snappy-better+dict-city", []pq.WriterOption{pq.Compression(&snappy.Codec{})}, true},
		{"snappy-fast+page-1MiB", []pq.WriterOption{pq.Compression(fastSnappy{&snappy.Codec{}}), pq.PageBufferSize(1 << 20)}, false},
		{"snappy-fast+rowgroup-128k", []pq.WriterOption{pq.Compression(fastSnappy{&snappy.Codec{}}), pq.MaxRowsPerRowGroup(128 << 10)}, false},
		{"uncompressed", []pq.WriterOption{pq.Compression(&uncompressedCodec{})}, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var size int64
			for b.Loop() {
				cw := &countWriter{}
				var err error
				if c.dict {
					w := pq.NewGenericWriter[saleDict](cw, c.opts...)
					for i := 0; i < n && err == nil; i += len(dict) {
						for k, r := range Sales(rows, int64(i)) {
							dict[k] = saleDict(r)
						}
						_, err = w.Write(dict)
					}
					err = firstErr(err, w.Close())
				} else {
					w := pq.NewGenericWriter[Sale](cw, c.opts...)
					for i := 0; i < n && err == nil; i += len(rows) {
						_, err = w.Write(Sales(rows, int64(i)))
					}
					err = firstErr(err, w.Close())
				}
				if err != nil {
					b.Fatal(err)
				}
				size = cw.n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			b.ReportMetric(float64(size)/n, "bytes/row")
		})
	}
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// uncompressedCodec stores pages as they are.
type uncompressedCodec struct{}

func (uncompressedCodec) String() string                            { return "UNCOMPRESSED" }
func (uncompressedCodec) CompressionCodec() format.CompressionCodec { return format.Uncompressed }
func (uncompressedCodec) Encode(dst, src []byte) ([]byte, error)    { return append(dst[:0], src...), nil }
func (uncompressedCodec) Decode(dst, src []byte) ([]byte, error)    { return append(dst[:0], src...), nil }
