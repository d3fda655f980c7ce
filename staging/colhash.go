package staging

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/zeebo/xxh3"

	"github.com/pswap/pswap/manifest"
)

// Content checksum algorithms (the part of Content.ContentChecksum before
// the colon; see doc.go).
const (
	// ChecksumColSum is the content checksum staging records: per row a
	// fold of per-column value hashes, computed a column at a time.
	ChecksumColSum = "colsum128"
	// ChecksumRowSum is the content checksum of generations staged before
	// colsum128: XXH3-128 of each row's canonical encoding. It is still
	// computed where an older generation is compared or verified.
	ChecksumRowSum = "rowsum128"
	// ChecksumFiles is the content checksum of a generation holding files
	// added with CheckFooter, whose rows were not read: SHA-256 over the
	// sorted lines "<size> <file checksum>\n" of all the generation's
	// files, paths left out. The same bytes under any file names have the
	// same checksum; the same rows in other bytes do not.
	ChecksumFiles = "files-sha256"
)

// ChecksumAlgo is the algorithm of a content checksum "<algo>:<hex>" (one
// of the Checksum constants for staging's own).
func ChecksumAlgo(sum string) string {
	algo, _, _ := strings.Cut(sum, ":")
	return algo
}

// filesChecksum is the ChecksumFiles checksum of files.
func filesChecksum(files []manifest.File) string {
	return ChecksumFiles + ":" + manifest.FilesDigest(files)
}

// Constants of colsum128 (doc.go).
const (
	// nullHash is the value hash of a null, in any column.
	nullHash uint64 = 0x6e756c6c5f763221
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

// colSeed is the seed of the value hashes of column c (0-based, schema
// order).
func colSeed(c int) uint64 { return fmix64(uint64(c) + 1) }

// fixedHash is the value hash of a fixed-width value given as its 64-bit
// canonical form: a bijection for each seed, so distinct values of one
// column never collide.
func fixedHash(x, seed uint64) uint64 { return fmix64(x ^ seed) }

// foldValue folds value hash h into a row's accumulator (0 before the first
// column).
func foldValue(acc, h uint64) uint64 { return (acc ^ h) * foldMul }

// addFold adds the 128-bit expansion of a row's accumulator to the sum.
func (s *rowSum) addFold(acc uint64) {
	lo, hi := fmix64(acc), fmix64(acc+expandHi)
	var c uint64
	s.lo, c = bits.Add64(s.lo, lo, 0)
	s.hi, _ = bits.Add64(s.hi, hi, c)
}

// colsumChecksum folds the schema, the row count and the sum of row hashes
// into the generation's colsum128 content checksum.
func colsumChecksum(schema string, rows int64, s rowSum) string {
	return foldChecksum(ChecksumColSum, "pswap/colsum128/v2", schema, rows, s)
}

// foldChecksum is a content checksum "<algo>:<hex>": XXH3-128 of the
// algorithm's tag, the schema, the row count and the row sum.
func foldChecksum(algo, tag, schema string, rows int64, s rowSum) string {
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

// sums are the two row sums a part or a generation keeps: colsum128's
// always, rowsum128's when asked for (Options.LegacyChecksum).
type sums struct{ col, row rowSum }

func (s *sums) add(o sums) {
	s.col.add(o.col)
	s.row.add(o.row)
}

// valueHash is the colsum128 value hash of one value given as its rowsum128
// (canonical) encoding enc, in a column of seed seed. Every input path
// that hashes values one at a time goes through it, so that all paths
// compute one function; the column-at-a-time Arrow hashers compute the
// same hashes directly (TestColumnHashMatchesEncoding).
func valueHash(enc []byte, seed uint64) uint64 {
	switch enc[0] {
	case tagNull:
		return nullHash
	case tagBool:
		return fixedHash(uint64(enc[1]), seed)
	case tagInt, tagUint, tagFloat64, tagTime, tagTimestamp:
		return fixedHash(binary.LittleEndian.Uint64(enc[1:]), seed)
	case tagFloat32:
		return fixedHash(uint64(binary.LittleEndian.Uint32(enc[1:])), seed)
	case tagDate:
		return fixedHash(uint64(int64(int32(binary.LittleEndian.Uint32(enc[1:])))), seed)
	case tagFloat16:
		return fixedHash(uint64(binary.LittleEndian.Uint16(enc[1:])), seed)
	case tagString, tagBinary:
		_, n := binary.Uvarint(enc[1:])
		return xxh3.HashSeed(enc[1+n:], seed)
	}
	// Decimals and nested values: their whole canonical encoding.
	return xxh3.HashSeed(enc, seed)
}

// colHasher computes colsum128 over Arrow record batches a column at a
// time, reusing its buffers between batches. The zero value is ready.
type colHasher struct {
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

func (d *dictHashes) release() {
	if d.data != nil {
		d.data.Release()
		d.data = nil
	}
}

// release drops the dictionaries held.
func (h *colHasher) release() {
	for i := range h.dicts {
		h.dicts[i].release()
	}
}

func growU64(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n)
	}
	return b[:n]
}

// addRecord adds the rows of rec, whose columns hold values of the
// canonical schema canon, to sum.
func (h *colHasher) addRecord(rec arrow.RecordBatch, canon *arrow.Schema, sum *rowSum) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	h.acc = growU64(h.acc, n)
	clear(h.acc)
	if len(h.dicts) < int(rec.NumCols()) {
		h.dicts = append(h.dicts, make([]dictHashes, int(rec.NumCols())-len(h.dicts))...)
	}
	for c, col := range rec.Columns() {
		h.hs = growU64(h.hs, n)
		if err := h.hashes(col, canon.Field(c).Type, colSeed(c), h.hs, &h.dicts[c]); err != nil {
			return fmt.Errorf("column %q: %w", rec.ColumnName(c), err)
		}
		acc := h.acc[:n]
		for i, v := range h.hs[:n] {
			acc[i] = foldValue(acc[i], v)
		}
	}
	for _, a := range h.acc[:n] {
		sum.addFold(a)
	}
	return nil
}

// hashes writes the value hash of each row of arr (of canonical type canon)
// into out[:arr.Len()].
func (h *colHasher) hashes(arr arrow.Array, canon arrow.DataType, seed uint64, out []uint64, dict *dictHashes) error {
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
			out[i] = fixedHash(v, seed)
		}
	case *array.Date32:
		fixedHashes(out, a.Date32Values(), seed, func(v arrow.Date32) uint64 { return uint64(int64(v)) })
	case *array.Timestamp:
		ct, ok := canon.(*arrow.TimestampType)
		if !ok {
			return unsupported(arr.DataType(), canon)
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
			hs = growU64(hs, d.Len())
			if err := h.hashes(d, canon, seed, hs, nil); err != nil {
				return err
			}
			if dict != nil {
				dict.release()
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
		enc, err := arrowEncoder(arr, canon)
		if err != nil {
			return err
		}
		for i := range out {
			h.enc = enc(h.enc[:0], i)
			out[i] = valueHash(h.enc, seed)
		}
		return nil
	}
	if arr.NullN() > 0 {
		for i := range out {
			if arr.IsNull(i) {
				out[i] = nullHash
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
		out[i] = fixedHash(canon(v), seed)
	}
}

// rowFolder computes colsum128 (and, when legacy, rowsum128) over rows
// encoded one value at a time: begin, then per column in schema order the
// canonical encoding of its value appended to buf followed by value, then
// end.
type rowFolder struct {
	legacy bool
	seeds  []uint64
	acc    uint64
	col    int
}

func newRowFolder(cols int, legacy bool) *rowFolder {
	f := &rowFolder{legacy: legacy, seeds: make([]uint64, cols)}
	for c := range f.seeds {
		f.seeds[c] = colSeed(c)
	}
	return f
}

func (f *rowFolder) begin() { f.acc, f.col = 0, 0 }

// value folds the value whose encoding is enc.
func (f *rowFolder) value(enc []byte) {
	f.acc = foldValue(f.acc, valueHash(enc, f.seeds[f.col]))
	f.col++
}

// end adds the row to s; row is the row's whole canonical encoding (used
// only when legacy).
func (f *rowFolder) end(s *sums, row []byte) {
	s.col.addFold(f.acc)
	if f.legacy {
		s.row.addRow(row)
	}
}
