package bench

import (
	"encoding/binary"
	"io"
	"math"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/zeebo/xxh3"
)

// BenchmarkRowHash isolates the cost of the per-row content checksum of
// the struct path, next to the Parquet encoding it accompanies, per
// 8192-row batch:
//
//   - deconstruct: what staging does per row: parquet-go's reflective
//     Schema.Deconstruct, a canonical encoding of the values, xxh3-128;
//   - direct: the same canonical bytes appended straight from the struct
//     fields (what a per-type compiled encoder could do), xxh3-128;
//   - xxh3-only: the hash of pre-encoded rows alone;
//   - parquet-write: parquet-go's GenericWriter writing the rows (snappy)
//     to io.Discard, i.e. the Parquet encoding itself.
func BenchmarkRowHash(b *testing.B) {
	rows := Sales(make([]Sale, batchRows), 0)
	schema := pq.SchemaOf(Sale{})
	b.Run("deconstruct", func(b *testing.B) {
		var row pq.Row
		var buf []byte
		var sum uint64
		for b.Loop() {
			for i := range rows {
				row = schema.Deconstruct(row[:0], &rows[i])
				buf = buf[:0]
				for _, v := range row {
					buf = appendValue(buf, v)
				}
				sum += xxh3.Hash128(buf).Lo
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
		_ = sum
	})
	b.Run("direct", func(b *testing.B) {
		var buf []byte
		var sum uint64
		for b.Loop() {
			for i := range rows {
				buf = appendSale(buf[:0], &rows[i])
				sum += xxh3.Hash128(buf).Lo
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
		_ = sum
	})
	b.Run("xxh3-only", func(b *testing.B) {
		enc := make([][]byte, len(rows))
		for i := range rows {
			enc[i] = appendSale(nil, &rows[i])
		}
		var sum uint64
		for b.Loop() {
			for _, e := range enc {
				sum += xxh3.Hash128(e).Lo
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
		_ = sum
	})
	b.Run("parquet-write", func(b *testing.B) {
		w := pq.NewGenericWriter[Sale](io.Discard, pq.Compression(&snappy.Codec{}))
		for b.Loop() {
			if _, err := w.Write(rows); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
	})
}

// appendValue is a stand-in for staging's canonical encoding of one
// parquet-go value (same work: a tag and the value's bytes).
func appendValue(b []byte, v pq.Value) []byte {
	switch v.Kind() {
	case pq.Int32:
		return binary.LittleEndian.AppendUint64(append(b, 2), uint64(v.Int32()))
	case pq.Int64:
		return binary.LittleEndian.AppendUint64(append(b, 2), uint64(v.Int64()))
	case pq.Double:
		return binary.LittleEndian.AppendUint64(append(b, 5), math.Float64bits(v.Double()))
	case pq.ByteArray:
		b = binary.AppendUvarint(append(b, 6), uint64(len(v.ByteArray())))
		return append(b, v.ByteArray()...)
	}
	return append(b, 0)
}

// appendSale appends the same canonical bytes straight from the fields.
func appendSale(b []byte, s *Sale) []byte {
	b = binary.LittleEndian.AppendUint64(append(b, 2), uint64(s.ID))
	b = binary.LittleEndian.AppendUint64(append(b, 10), uint64(s.TS.UnixMicro()))
	b = binary.AppendUvarint(append(b, 6), uint64(len(s.City)))
	b = append(b, s.City...)
	b = binary.LittleEndian.AppendUint64(append(b, 5), math.Float64bits(s.Amount))
	b = binary.LittleEndian.AppendUint64(append(b, 2), uint64(s.Quantity))
	if s.Note == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(append(b, 6), uint64(len(*s.Note)))
	return append(b, *s.Note...)
}
