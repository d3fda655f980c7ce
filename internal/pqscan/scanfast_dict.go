package pqscan

import "fmt"

// The fast scan's dictionary encoding (PLAIN_DICTIONARY, RLE_DICTIONARY):
// indices into the dictionary page's value hashes.

// dictIndices writes the value hashes of the len(out) values of a
// dictionary-encoded page: a bit width, then RLE/bit-packed indices into
// the dictionary page's hashes.
func (c *fastCol) dictIndices(out []uint64, data []byte) error {
	if len(out) == 0 {
		return nil
	}
	if err := c.dictIndexes(len(out), data); err != nil {
		return err
	}
	dict := c.dict
	for i, k := range c.idx[:len(out)] {
		if int(k) >= len(dict) {
			return fmt.Errorf("%w: dictionary index %d out of range", errNotFast, k)
		}
		out[i] = dict[k]
	}
	return nil
}

// dictIndexes decodes the n indices of a dictionary-encoded page (a bit
// width, then RLE/bit-packed runs) into c.idx[:n]; the caller checks them
// against the dictionary as it looks them up.
func (c *fastCol) dictIndexes(n int, data []byte) error {
	if !c.hasDict {
		return fmt.Errorf("%w: dictionary-encoded page without a dictionary", errNotFast)
	}
	if len(data) < 1 || data[0] > 32 {
		return fmt.Errorf("%w: dictionary index width", errNotFast)
	}
	if cap(c.idx) < n+8 {
		c.idx = make([]uint32, n+8)
	}
	return c.s.rleIndices(c.idx[:n], data[1:], uint(data[0]))
}
