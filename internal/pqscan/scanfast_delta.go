package pqscan

import (
	"github.com/pswap/pswap/internal/checksum"

	"encoding/binary"
	"fmt"
	"math"

	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/zeebo/xxh3"
)

// The fast scan's DELTA encodings: DELTA_BINARY_PACKED integers,
// DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY byte arrays.

// deltaLengthByteArray writes the value hashes of len(out)
// DELTA_LENGTH_BYTE_ARRAY values: the lengths, DELTA_BINARY_PACKED, then
// the bytes.
func (c *fastCol) deltaLengthByteArray(out []uint64, data []byte) error {
	if c.kind != fkBytes || !deltaHeaderFits(data) {
		return fmt.Errorf("%w: DELTA_LENGTH_BYTE_ARRAY", errNotFast)
	}
	s := c.s
	var err error
	s.bytes, s.offs, err = (&delta.LengthByteArrayEncoding{}).DecodeByteArray(s.bytes[:0], data, s.offs[:0])
	if err != nil {
		return fmt.Errorf("%w: %v", errNotFast, err)
	}
	if len(s.offs) < len(out)+1 {
		return fmt.Errorf("%w: page too short", errNotFast)
	}
	b, offs := s.bytes, s.offs
	for i := range out {
		out[i] = xxh3.HashSeed(b[offs[i]:offs[i+1]], c.seed)
	}
	return nil
}

// deltaInts writes the value hashes of len(out) DELTA_BINARY_PACKED
// integers.
func (c *fastCol) deltaInts(out []uint64, data []byte) error {
	w := c.width()
	switch c.kind {
	case fkBool, fkBytes, fkFloat, fkDouble, fkDecFixed, fkFixed, fkInt96:
		return fmt.Errorf("%w: DELTA_BINARY_PACKED of this type", errNotFast)
	}
	if !deltaHeaderFits(data) {
		return fmt.Errorf("%w: DELTA_BINARY_PACKED header", errNotFast)
	}
	var err error
	s := c.s
	if w == 8 {
		s.i64, err = (&delta.BinaryPackedEncoding{}).DecodeInt64(s.i64[:0], data)
		if err != nil {
			return fmt.Errorf("%w: %v", errNotFast, err)
		}
		if len(s.i64) < len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		if c.kind != fkInt64 {
			for i := range out {
				out[i] = c.hash64(uint64(s.i64[i]))
			}
			return nil
		}
		for i := range out {
			out[i] = checksum.FixedHash(uint64(s.i64[i]), c.seed)
		}
		return nil
	}
	s.i32, err = (&delta.BinaryPackedEncoding{}).DecodeInt32(s.i32[:0], data)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotFast, err)
	}
	if len(s.i32) < len(out) {
		return fmt.Errorf("%w: page too short", errNotFast)
	}
	for i := range out {
		out[i] = c.hash64(uint64(uint32(s.i32[i])))
	}
	return nil
}

// deltaHeaderFits: the header of DELTA_BINARY_PACKED data (block size,
// miniblocks per block, value count), which bounds what its decoder
// allocates, is within the fast scan's bounds.
func deltaHeaderFits(data []byte) bool {
	for p, i := 0, 0; i < 3; i++ {
		v, n := binary.Uvarint(data[p:])
		if n <= 0 || v > maxFastPageValues {
			return false
		}
		p += n
	}
	return true
}

// deltaByteArray writes the value hashes of len(out) DELTA_BYTE_ARRAY
// values: prefix lengths, suffix lengths (both DELTA_BINARY_PACKED), then
// the suffixes; each value is the previous one's prefix and its suffix,
// rebuilt in a buffer no larger than the page.
func (c *fastCol) deltaByteArray(out []uint64, data []byte) error {
	s := c.s
	var err error
	var rest []byte
	if s.prefixes, rest, err = deltaLengths(s.prefixes[:0], data); err != nil {
		return err
	}
	if s.suffixes, rest, err = deltaLengths(s.suffixes[:0], rest); err != nil {
		return err
	}
	if len(s.prefixes) != len(s.suffixes) || len(s.prefixes) < len(out) {
		return fmt.Errorf("%w: DELTA_BYTE_ARRAY lengths", errNotFast)
	}
	prev, cur := s.bytes[:0], s.bytes2[:0]
	for i := range out {
		p, n := s.prefixes[i], s.suffixes[i]
		if p > int64(len(prev)) || n > int64(len(rest)) {
			return fmt.Errorf("%w: DELTA_BYTE_ARRAY value overruns", errNotFast)
		}
		cur = append(append(cur[:0], prev[:p]...), rest[:n]...)
		rest = rest[n:]
		out[i] = xxh3.HashSeed(cur, c.seed)
		prev, cur = cur, prev
	}
	s.bytes, s.bytes2 = prev, cur
	return nil
}

// deltaLengths decodes DELTA_BINARY_PACKED lengths (each 0 to 2^31-1)
// into dst and returns the bytes after them.
func deltaLengths(dst []int64, src []byte) ([]int64, []byte, error) {
	bad := fmt.Errorf("%w: DELTA_BINARY_PACKED lengths", errNotFast)
	var hdr [3]uint64
	for i := range hdr {
		v, n := binary.Uvarint(src)
		if n <= 0 || v > maxFastPageValues {
			return dst, nil, bad
		}
		hdr[i], src = v, src[n:]
	}
	blockSize, miniblocks, total := int(hdr[0]), int(hdr[1]), int(hdr[2])
	if blockSize == 0 || miniblocks == 0 || blockSize%miniblocks != 0 || (blockSize/miniblocks)%8 != 0 {
		return dst, nil, bad
	}
	first, n := binary.Varint(src)
	if n <= 0 {
		return dst, nil, bad
	}
	src = src[n:]
	if total == 0 {
		return dst, src, nil
	}
	per := blockSize / miniblocks
	v := first
	dst = append(dst, v)
	for len(dst) < total {
		minDelta, n := binary.Varint(src)
		if n <= 0 || len(src) < n+miniblocks {
			return dst, nil, bad
		}
		widths := src[n : n+miniblocks]
		src = src[n+miniblocks:]
		for _, w := range widths {
			if len(dst) >= total {
				break // unused miniblocks have no bytes
			}
			if w > 32 {
				return dst, nil, bad
			}
			size := per * int(w) / 8
			if len(src) < size {
				return dst, nil, bad
			}
			mb := src[:size]
			src = src[size:]
			var acc uint64
			var have uint
			pos := 0
			for k := 0; k < per && len(dst) < total; k++ {
				for have < uint(w) {
					acc |= uint64(mb[pos]) << have
					pos++
					have += 8
				}
				d := acc & (1<<w - 1)
				acc >>= w
				have -= uint(w)
				v += minDelta + int64(d)
				if v < 0 || v > math.MaxInt32 {
					return dst, nil, bad
				}
				dst = append(dst, v)
			}
		}
	}
	if first < 0 || first > math.MaxInt32 {
		return dst, nil, bad
	}
	return dst, src, nil
}
