package checksum

import (
	"encoding/binary"
	"math/bits"
)

// Bulk forms of colsum128's primitives, for the scanners that hash a page
// or a batch of rows at a time. Each computes exactly what its one-value
// primitive computes for every element (FixedHash, FoldValue, AddFold);
// on amd64 with AVX-512 they run eight values at once (bulk_amd64.s), on
// anything else as the loops below. TestBulkMatchesScalar and FuzzBulk
// compare both forms with the primitives.

// canonNaN64 is the canonical float64 NaN of a value hash (any NaN hashes
// as this one).
const canonNaN64 = 0x7ff8000000000000

// FixedHashes64 writes into out[i] the value hash FixedHash(x, seed) of the
// i-th little-endian 64-bit value x of data (a PLAIN page of INT64 values).
// data must hold at least 8*len(out) bytes.
func FixedHashes64(out []uint64, data []byte, seed uint64) {
	_ = data[:8*len(out)]
	n := bulkFixed64(out, data, seed)
	for i := n; i < len(out); i++ {
		out[i] = FixedHash(binary.LittleEndian.Uint64(data[8*i:]), seed)
	}
}

// DoubleHashes64 is FixedHashes64 of float64 values, every NaN hashed as
// the canonical NaN.
func DoubleHashes64(out []uint64, data []byte, seed uint64) {
	_ = data[:8*len(out)]
	n := bulkDouble64(out, data, seed)
	for i := n; i < len(out); i++ {
		out[i] = FixedHash(canonDouble(binary.LittleEndian.Uint64(data[8*i:])), seed)
	}
}

// FixedHashes32 writes into out[i] the value hash of the i-th
// little-endian int32 of data, sign-extended (a PLAIN page of INT32
// values). data must hold at least 4*len(out) bytes.
func FixedHashes32(out []uint64, data []byte, seed uint64) {
	_ = data[:4*len(out)]
	n := bulkInt32(out, data, seed)
	for i := n; i < len(out); i++ {
		out[i] = FixedHash(uint64(int64(int32(binary.LittleEndian.Uint32(data[4*i:])))), seed)
	}
}

// canonDouble is the canonical 64 bits of a float64: itself, or the
// canonical NaN.
func canonDouble(x uint64) uint64 {
	if x&^(1<<63) > 0x7ff0000000000000 {
		return canonNaN64
	}
	return x
}

// FoldValues folds hs[i] into acc[i] (FoldValue) for every i < len(acc);
// hs must be at least as long.
func FoldValues(acc, hs []uint64) {
	hs = hs[:len(acc)]
	n := bulkFold(acc, hs)
	for i := n; i < len(acc); i++ {
		acc[i] = FoldValue(acc[i], hs[i])
	}
}

// AddFolds adds every row accumulator of acc to the sum (AddFold of
// each).
func (s *Sum) AddFolds(acc []uint64) {
	n := bulkAddFolds(s, acc)
	for _, a := range acc[n:] {
		s.AddFold(a)
	}
}

// addLanes adds eight 128-bit lane sums (lo[i], hi[i]) to s.
func (s *Sum) addLanes(l *[16]uint64) {
	for i := range 8 {
		var c uint64
		s.lo, c = bits.Add64(s.lo, l[i], 0)
		s.hi, _ = bits.Add64(s.hi, l[8+i], c)
	}
}
