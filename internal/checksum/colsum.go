package checksum

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/zeebo/xxh3"
)

// Constants of colsum128 (see staging's doc.go, "Content checksum").
const (
	// NullHash is the value hash of a null, in any column.
	NullHash uint64 = 0x6e756c6c5f763221
	// foldMul folds a value hash into its row's accumulator.
	foldMul uint64 = 0x9e3779b97f4a7c15
	// expandHi offsets the accumulator for the high 64 bits of a row's
	// 128-bit hash.
	expandHi uint64 = 0xc2b2ae3d27d4eb4f
)

// fmix64 is MurmurHash3's 64-bit finalizer: a bijection of uint64.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// ColSeed is the seed of the value hashes of column c (0-based, schema
// order).
func ColSeed(c int) uint64 { return fmix64(uint64(c) + 1) }

// FixedHash is the value hash of a fixed-width value given as its 64-bit
// canonical form: a bijection for each seed, so distinct values of one
// column never collide.
func FixedHash(x, seed uint64) uint64 { return fmix64(x ^ seed) }

// FoldValue folds value hash h into a row's accumulator (0 before the first
// column).
func FoldValue(acc, h uint64) uint64 { return (acc ^ h) * foldMul }

// addFold adds the 128-bit expansion of a row's accumulator to the sum.
func (s *Sum) AddFold(acc uint64) {
	lo, hi := fmix64(acc), fmix64(acc+expandHi)
	var c uint64
	s.lo, c = bits.Add64(s.lo, lo, 0)
	s.hi, _ = bits.Add64(s.hi, hi, c)
}

// ColSumOf folds the schema, the row count and the sum of row hashes
// into the generation's colsum128 content checksum.
func ColSumOf(schema string, rows int64, s Sum) string {
	return foldChecksum(ColSum, "pswap/colsum128/v2", schema, rows, s)
}

// foldChecksum is a content checksum "<algo>:<hex>": XXH3-128 of the
// algorithm's tag, the schema, the row count and the row sum.
func foldChecksum(algo, tag, schema string, rows int64, s Sum) string {
	b := make([]byte, 0, len(tag)+len(schema)+64)
	b = append(b, tag...)
	b = append(b, 0)
	b = append(b, schema...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(rows))
	b = binary.BigEndian.AppendUint64(b, s.hi)
	b = binary.BigEndian.AppendUint64(b, s.lo)
	h := xxh3.Hash128(b)
	return fmt.Sprintf("%s:%016x%016x", algo, h.Hi, h.Lo)
}

// Sums are the two row sums a part or a generation keeps: colsum128's
// always, rowsum128's when asked for (Options.LegacyChecksum).
type Sums struct{ Col, Row Sum }

// Add adds o's sums to s's.
func (s *Sums) Add(o Sums) {
	s.Col.Add(o.Col)
	s.Row.Add(o.Row)
}

// ValueHash is the colsum128 value hash of one value given as its rowsum128
// (canonical) encoding enc, in a column of seed seed. Every input path
// that hashes values one at a time goes through it, so that all paths
// compute one function; the column-at-a-time Arrow hashers compute the
// same hashes directly (TestColumnHashMatchesEncoding).
func ValueHash(enc []byte, seed uint64) uint64 {
	switch enc[0] {
	case TagNull:
		return NullHash
	case TagBool:
		return FixedHash(uint64(enc[1]), seed)
	case TagInt, TagUint, TagFloat64, TagTime, TagTimestamp:
		return FixedHash(binary.LittleEndian.Uint64(enc[1:]), seed)
	case TagFloat32:
		return FixedHash(uint64(binary.LittleEndian.Uint32(enc[1:])), seed)
	case TagDate:
		return FixedHash(uint64(int64(int32(binary.LittleEndian.Uint32(enc[1:])))), seed)
	case TagFloat16:
		return FixedHash(uint64(binary.LittleEndian.Uint16(enc[1:])), seed)
	case TagString, TagBinary:
		_, n := binary.Uvarint(enc[1:])
		return xxh3.HashSeed(enc[1+n:], seed)
	}
	// Decimals and nested values: their whole canonical encoding.
	return xxh3.HashSeed(enc, seed)
}

// ColHasher computes colsum128 over Arrow record batches a column at a
// time, reusing its buffers between batches. The zero value is ready.
type ColHasher struct {
	acc   []uint64 // per row of the batch
	hs    []uint64 // value hashes of one column
	dicts []dictHashes
	enc   []byte
}

// dictHashes are the value hashes of the last dictionary a column had,
// kept (retained) so that the same dictionary is hashed once.
type dictHashes struct {
	data *array.Data
	hs   []uint64
}

func (d *dictHashes) Release() {
	if d.data != nil {
		d.data.Release()
		d.data = nil
	}
}

// release drops the dictionaries held.
func (h *ColHasher) Release() {
	for i := range h.dicts {
		h.dicts[i].Release()
	}
}

// GrowU64 returns b resized to n, reallocated only when too small.
func GrowU64(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n)
	}
	return b[:n]
}

// addRecord adds the rows of rec, whose columns hold values of the
// canonical schema canon, to sum.
func (h *ColHasher) AddRecord(rec arrow.RecordBatch, canon *arrow.Schema, sum *Sum) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	h.acc = GrowU64(h.acc, n)
	clear(h.acc)
	if len(h.dicts) < int(rec.NumCols()) {
		h.dicts = append(h.dicts, make([]dictHashes, int(rec.NumCols())-len(h.dicts))...)
	}
	for c, col := range rec.Columns() {
		h.hs = GrowU64(h.hs, n)
		if err := h.hashes(col, canon.Field(c).Type, ColSeed(c), h.hs, &h.dicts[c]); err != nil {
			return fmt.Errorf("column %q: %w", rec.ColumnName(c), err)
		}
		FoldValues(h.acc[:n], h.hs[:n])
	}
	sum.AddFolds(h.acc[:n])
	return nil
}

// hashes writes the value hash of each row of arr (of canonical type canon)
// into out[:arr.Len()].
func (h *ColHasher) hashes(arr arrow.Array, canon arrow.DataType, seed uint64, out []uint64, dict *dictHashes) error {
	n := arr.Len()
	out = out[:n]
	switch a := arr.(type) {
	case *array.Int8:
		fixedHashes(out, a.Int8Values(), seed, func(v int8) uint64 { return uint64(int64(v)) })
	case *array.Int16:
		fixedHashes(out, a.Int16Values(), seed, func(v int16) uint64 { return uint64(int64(v)) })
	case *array.Int32:
		fixedHashes(out, a.Int32Values(), seed, func(v int32) uint64 { return uint64(int64(v)) })
	case *array.Int64:
		fixedHashes(out, a.Int64Values(), seed, func(v int64) uint64 { return uint64(v) })
	case *array.Uint8:
		fixedHashes(out, a.Uint8Values(), seed, func(v uint8) uint64 { return uint64(v) })
	case *array.Uint16:
		fixedHashes(out, a.Uint16Values(), seed, func(v uint16) uint64 { return uint64(v) })
	case *array.Uint32:
		fixedHashes(out, a.Uint32Values(), seed, func(v uint32) uint64 { return uint64(v) })
	case *array.Uint64:
		fixedHashes(out, a.Uint64Values(), seed, func(v uint64) uint64 { return v })
	case *array.Float32:
		fixedHashes(out, a.Float32Values(), seed, func(v float32) uint64 {
			if v != v {
				return 0x7fc00000
			}
			return uint64(math.Float32bits(v))
		})
	case *array.Float64:
		fixedHashes(out, a.Float64Values(), seed, func(v float64) uint64 {
			if v != v {
				return 0x7ff8000000000000
			}
			return math.Float64bits(v)
		})
	case *array.Boolean:
		for i := range out {
			var v uint64
			if a.Value(i) {
				v = 1
			}
			out[i] = FixedHash(v, seed)
		}
	case *array.Date32:
		fixedHashes(out, a.Date32Values(), seed, func(v arrow.Date32) uint64 { return uint64(int64(v)) })
	case *array.Timestamp:
		ct, ok := canon.(*arrow.TimestampType)
		if !ok {
			return Unsupported(arr.DataType(), canon)
		}
		mul, div := unitFactor(a.DataType().(*arrow.TimestampType).Unit, ct.Unit)
		if mul == 1 && div == 1 {
			fixedHashes(out, a.TimestampValues(), seed, func(v arrow.Timestamp) uint64 { return uint64(v) })
		} else {
			fixedHashes(out, a.TimestampValues(), seed, func(v arrow.Timestamp) uint64 {
				return uint64(convertUnit(int64(v), mul, div))
			})
		}
	case *array.String:
		for i := range out {
			out[i] = xxh3.HashStringSeed(a.Value(i), seed)
		}
	case *array.LargeString:
		for i := range out {
			out[i] = xxh3.HashStringSeed(a.Value(i), seed)
		}
	case *array.Binary:
		for i := range out {
			out[i] = xxh3.HashSeed(a.Value(i), seed)
		}
	case *array.LargeBinary:
		for i := range out {
			out[i] = xxh3.HashSeed(a.Value(i), seed)
		}
	case *array.Dictionary:
		d := a.Dictionary()
		if dd := d.Data().(*array.Data); dict == nil || dict.data != dd {
			var hs []uint64
			if dict != nil {
				hs = dict.hs
			}
			hs = GrowU64(hs, d.Len())
			if err := h.hashes(d, canon, seed, hs, nil); err != nil {
				return err
			}
			if dict != nil {
				dict.Release()
				dd.Retain()
				dict.data, dict.hs = dd, hs
			} else {
				// A dictionary of dictionaries does not occur; hash it anyway.
				dict = &dictHashes{hs: hs}
			}
		}
		dh := dict.hs
		switch idx := a.Indices().(type) {
		case *array.Int32: // what Arrow's Parquet reader produces
			dictLookup(out, idx.Int32Values(), dh, a)
		case *array.Int16:
			dictLookup(out, idx.Int16Values(), dh, a)
		case *array.Int8:
			dictLookup(out, idx.Int8Values(), dh, a)
		default:
			for i := range out {
				if a.IsValid(i) {
					out[i] = dh[a.GetValueIndex(i)]
				}
			}
		}
	default:
		// Everything else (dates in milliseconds, times, decimals, fixed
		// binary, float16, nested values) through its canonical encoding.
		enc, err := ArrowEncoder(arr, canon)
		if err != nil {
			return err
		}
		for i := range out {
			h.enc = enc(h.enc[:0], i)
			out[i] = ValueHash(h.enc, seed)
		}
		return nil
	}
	if arr.NullN() > 0 {
		for i := range out {
			if arr.IsNull(i) {
				out[i] = NullHash
			}
		}
	}
	return nil
}

// dictLookup sets out[i] to the hash of the dictionary entry row i of a
// names (nulls are set by the caller).
func dictLookup[T int8 | int16 | int32](out []uint64, idx []T, dh []uint64, a *array.Dictionary) {
	idx = idx[:len(out)]
	if a.NullN() == 0 {
		for i, k := range idx {
			out[i] = dh[k]
		}
		return
	}
	for i, k := range idx {
		if a.IsValid(i) {
			out[i] = dh[k]
		}
	}
}

// fixedHashes hashes fixed-width values given their 64-bit canonical form.
func fixedHashes[T any](out []uint64, vals []T, seed uint64, canon func(T) uint64) {
	vals = vals[:len(out)]
	for i, v := range vals {
		out[i] = FixedHash(canon(v), seed)
	}
}

// RowFolder computes colsum128 (and, when legacy, rowsum128) over rows
// encoded one value at a time: begin, then per column in schema order the
// canonical encoding of its value appended to buf followed by value, then
// end.
type RowFolder struct {
	Legacy bool
	seeds  []uint64
	acc    uint64
	col    int
}

// NewRowFolder returns a RowFolder of rows of cols columns; legacy adds
// rowsum128 to colsum128.
func NewRowFolder(cols int, legacy bool) *RowFolder {
	f := &RowFolder{Legacy: legacy, seeds: make([]uint64, cols)}
	for c := range f.seeds {
		f.seeds[c] = ColSeed(c)
	}
	return f
}

// Begin starts a row.
func (f *RowFolder) Begin() { f.acc, f.col = 0, 0 }

// value folds the value whose encoding is enc.
func (f *RowFolder) Value(enc []byte) {
	f.acc = FoldValue(f.acc, ValueHash(enc, f.seeds[f.col]))
	f.col++
}

// end adds the row to s; row is the row's whole canonical encoding (used
// only when legacy).
func (f *RowFolder) End(s *Sums, row []byte) {
	s.Col.AddFold(f.acc)
	if f.Legacy {
		s.Row.AddRow(row)
	}
}
