package pqscan

import "fmt"

// The fast scan's BYTE_STREAM_SPLIT encoding.

// byteStreamSplit writes the value hashes of len(out) BYTE_STREAM_SPLIT
// values: byte k of every value in stream k.
func (c *fastCol) byteStreamSplit(out []uint64, data []byte) error {
	w := c.width()
	if w == 0 || w > 8 || len(out) == 0 {
		return fmt.Errorf("%w: BYTE_STREAM_SPLIT of this type", errNotFast)
	}
	if len(data)%w != 0 || len(data)/w < len(out) {
		return fmt.Errorf("%w: BYTE_STREAM_SPLIT size", errNotFast)
	}
	stride := len(data) / w
	for i := range out {
		var x uint64
		for b := 0; b < w; b++ {
			x |= uint64(data[b*stride+i]) << (8 * b)
		}
		out[i] = c.hash64(x)
	}
	return nil
}
