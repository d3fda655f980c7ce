package pqscan

import (
	"github.com/pswap/pswap/internal/checksum"

	"encoding/binary"
	"fmt"

	"github.com/parquet-go/bitpack"
)

// The fast scan's RLE/bit-packed hybrid: definition levels, dictionary
// indices and RLE booleans.

// rleBools writes the value hashes of len(out) RLE-encoded booleans (a
// 4-byte length, then an RLE/bit-packed run of bit width 1).
func (c *fastCol) rleBools(out []uint64, data []byte) error {
	if c.kind != fkBool || len(data) < 4 {
		return fmt.Errorf("%w: RLE outside booleans", errNotFast)
	}
	n := int(binary.LittleEndian.Uint32(data))
	if n < 0 || n > len(data)-4 {
		return fmt.Errorf("%w: RLE length overruns the page", errNotFast)
	}
	s := c.s
	if cap(s.bools) < len(out) {
		s.bools = make([]uint8, len(out))
	}
	bs := s.bools[:len(out)]
	if err := rleLevels(bs, data[4:4+n]); err != nil {
		return err
	}
	h0, h1 := checksum.FixedHash(0, c.seed), checksum.FixedHash(1, c.seed)
	for i, b := range bs {
		out[i] = h0
		if b != 0 {
			out[i] = h1
		}
	}
	return nil
}

// allDefined: the definition levels (bit width 1) of a page of n values
// begin with one run of n or more 1s: every value is present (what
// writers that mark every column optional write for columns without
// nulls).
func allDefined(src []byte, n int) bool {
	h, k := binary.Uvarint(src)
	return k > 0 && h&1 == 0 && h>>1 >= uint64(n) && len(src) > k && src[k] == 1
}

// rleLevels decodes len(dst) values of bit width 1 (definition levels,
// booleans) of the RLE/bit-packed hybrid encoding.
func rleLevels(dst []uint8, src []byte) error {
	for len(dst) > 0 {
		h, n := binary.Uvarint(src)
		if n <= 0 {
			return fmt.Errorf("%w: levels end early", errNotFast)
		}
		src = src[n:]
		if h&1 == 0 { // a run of one value
			cnt := h >> 1
			if len(src) < 1 {
				return fmt.Errorf("%w: levels end early", errNotFast)
			}
			v := src[0]
			src = src[1:]
			if v > 1 {
				return fmt.Errorf("%w: level %d", errNotFast, v)
			}
			k := int(min(cnt, uint64(len(dst))))
			d := dst[:k]
			if k > 0 {
				d[0] = v
				for f := 1; f < k; f *= 2 {
					copy(d[f:], d[:f])
				}
			}
			dst = dst[k:]
			continue
		}
		groups := h >> 1 // of 8 values, one byte each
		if groups > uint64(len(src)) {
			groups = uint64(len(src)) // what is there; the loop fails if too few
			if groups == 0 {
				return fmt.Errorf("%w: levels end early", errNotFast)
			}
		}
		for _, b := range src[:groups] {
			if len(dst) >= 8 {
				d := dst[:8]
				d[0], d[1], d[2], d[3] = b&1, b>>1&1, b>>2&1, b>>3&1
				d[4], d[5], d[6], d[7] = b>>4&1, b>>5&1, b>>6&1, b>>7
				dst = dst[8:]
				continue
			}
			for i := range dst {
				dst[i] = b >> i & 1
			}
			dst = dst[:0]
			break
		}
		src = src[groups:]
	}
	return nil
}

// rleIndices decodes len(dst) values of bit width w (0 to 32) of the
// RLE/bit-packed hybrid encoding (dictionary indices); cap(dst) must leave
// 8 values of room for a last group.
func (s *fastScanner) rleIndices(dst []uint32, src []byte, w uint) error {
	bytesPerGroup := int(w) // 8 values of w bits
	for len(dst) > 0 {
		h, n := binary.Uvarint(src)
		if n <= 0 {
			return fmt.Errorf("%w: indices end early", errNotFast)
		}
		src = src[n:]
		if h&1 == 0 {
			cnt := h >> 1
			vb := int(w+7) / 8
			if len(src) < vb {
				return fmt.Errorf("%w: indices end early", errNotFast)
			}
			var v uint32
			for i := 0; i < vb; i++ {
				v |= uint32(src[i]) << (8 * i)
			}
			src = src[vb:]
			k := int(min(cnt, uint64(len(dst))))
			d := dst[:k]
			for i := range d {
				d[i] = v
			}
			dst = dst[k:]
			continue
		}
		groups := int(min(h>>1, uint64(len(dst)+7)/8))
		if w == 0 {
			k := min(8*groups, len(dst))
			clear(dst[:k])
			dst = dst[k:]
			continue
		}
		nb := groups * bytesPerGroup
		if nb > len(src) {
			return fmt.Errorf("%w: indices end early", errNotFast)
		}
		var in []byte
		if len(src)-nb < bitpack.PaddingInt32 {
			if cap(s.pad) < nb+bitpack.PaddingInt32 {
				s.pad = make([]byte, nb+bitpack.PaddingInt32)
			}
			in = s.pad[:nb+bitpack.PaddingInt32]
			copy(in, src[:nb])
			clear(in[nb:])
		} else {
			in = src[:nb+bitpack.PaddingInt32]
		}
		// The padding is part of the input's length: the assembly
		// unpackers read it past the end, the purego one (-tags purego,
		// other architectures) only within the slice, and panicked at
		// the last value of a run whose bits cross into it.
		bitpack.Unpack(dst[:8*groups], in, w)
		// skip the run: the header said h>>1 groups; any beyond what is
		// needed are not read.
		skip := int(h>>1) * bytesPerGroup
		if skip > len(src) || skip < 0 {
			skip = nb
		}
		src = src[skip:]
		dst = dst[min(8*groups, len(dst)):]
	}
	return nil
}
