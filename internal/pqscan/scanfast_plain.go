package pqscan

import (
	"github.com/pswap/pswap/internal/checksum"

	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// The fast scan's PLAIN encoding: data pages and dictionary pages.

// decodeDict hashes the n entries of a PLAIN dictionary page.
func (c *fastCol) decodeDict(data []byte, n int) error {
	per := c.width() // bytes an entry takes at least: n is bounded by the page
	switch c.kind {
	case fkBytes:
		per = 4
	case fkBool:
		per = 1 // (8 entries a byte; 1 keeps the bound simple)
	}
	if n < 0 || n > len(data)/per+8 {
		return fmt.Errorf("%w: dictionary of %d entries", errNotFast, n)
	}
	c.dict = checksum.GrowU64(c.dict, n)
	return c.plain(c.dict, data)
}

// plain writes the value hashes of len(out) PLAIN values.
func (c *fastCol) plain(out []uint64, data []byte) error {
	seed := c.seed
	switch c.kind {
	case fkBool:
		if len(data)*8 < len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		h0, h1 := checksum.FixedHash(0, seed), checksum.FixedHash(1, seed)
		for i := range out {
			out[i] = h0
			if data[i>>3]>>(i&7)&1 != 0 {
				out[i] = h1
			}
		}
	case fkInt64:
		if len(data) < 8*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		checksum.FixedHashes64(out, data, seed)
	case fkDouble:
		if len(data) < 8*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		checksum.DoubleHashes64(out, data, seed)
	case fkInt32:
		if len(data) < 4*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		checksum.FixedHashes32(out, data, seed)
	case fkDec32:
		if len(data) < 4*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = c.decHash(int64(int32(binary.LittleEndian.Uint32(data[4*i:]))))
		}
	case fkDec64:
		if len(data) < 8*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = c.decHash(int64(binary.LittleEndian.Uint64(data[8*i:])))
		}
	case fkInt96:
		if len(data)/12 < len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = checksum.FixedHash(uint64(int96Micros(data[12*i:12*i+12])), seed)
		}
	case fkDecFixed, fkFixed:
		w := c.flen
		if len(data)/w < len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = c.fixedBytesHash(data[w*i : w*i+w])
		}
	case fkBytes:
		p := 0
		for i := range out {
			if len(data)-p < 4 {
				return fmt.Errorf("%w: page too short", errNotFast)
			}
			n := int(binary.LittleEndian.Uint32(data[p:]))
			p += 4
			if n < 0 || n > len(data)-p {
				return fmt.Errorf("%w: page too short", errNotFast)
			}
			out[i] = xxh3.HashSeed(data[p:p+n], seed)
			p += n
		}
	default: // the other 32-bit kinds
		if len(data) < 4*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		k := c.kind
		for i := range out {
			out[i] = checksum.FixedHash(k.canon32(binary.LittleEndian.Uint32(data[4*i:])), seed)
		}
	}
	return nil
}
