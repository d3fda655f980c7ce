package pqscan

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/pierrec/lz4/v4"
)

// TestLZ4Framings: Parquet's LZ4 codec decodes Hadoop's framing (one or
// several blocks), the LZ4 frame format and a bare block, and writes
// Hadoop's framing; garbage is an error, not a panic.
func TestLZ4Framings(t *testing.T) {
	RegisterCodecs()
	codec, err := compress.GetCodec(compress.Codecs.Lz4)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("pswap lz4 "), 500)
	block := make([]byte, lz4.CompressBlockBound(len(want)))
	n, err := lz4.CompressBlock(want, block, nil)
	if err != nil {
		t.Fatal(err)
	}
	block = block[:n]
	hadoop := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			blk := make([]byte, lz4.CompressBlockBound(len(p))+1)
			m, err := lz4.CompressBlock(p, blk, nil)
			if err != nil || m == 0 {
				t.Fatal(err)
			}
			b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
			b = binary.BigEndian.AppendUint32(b, uint32(m))
			b = append(b, blk[:m]...)
		}
		return b
	}
	var frame bytes.Buffer
	w := lz4.NewWriter(&frame)
	if _, err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"hadoop":         hadoop(want),
		"hadoop blocks":  hadoop(want[:1234], want[1234:]),
		"frame":          frame.Bytes(),
		"block":          block,
		"written":        codec.Encode(nil, want),
		"incompressible": codec.Encode(nil, []byte("abc")),
	} {
		dst := make([]byte, len(want))
		if name == "incompressible" {
			dst = dst[:3]
		}
		got, err := compress.Decode(codec, dst, in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if exp := want[:len(dst)]; name == "incompressible" && string(got) != "abc" || name != "incompressible" && !bytes.Equal(got, exp) {
			t.Errorf("%s: decoded %d bytes, want %d", name, len(got), len(dst))
		}
	}
	if _, err := compress.Decode(codec, make([]byte, 100), []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}); err == nil {
		t.Error("garbage decoded without an error")
	}
}

// TestEmptyCompressedInput: every codec decodes zero bytes to zero bytes
// (a DataPage v2 of nulls only has no compressed values).
func TestEmptyCompressedInput(t *testing.T) {
	RegisterCodecs()
	for _, c := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Brotli,
		compress.Codecs.Zstd, compress.Codecs.Lz4, compress.Codecs.Lz4Raw} {
		codec, err := compress.GetCodec(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := compress.Decode(codec, make([]byte, 0, 8), nil)
		if err != nil || len(got) != 0 {
			t.Errorf("%s: %d bytes, %v", c, len(got), err)
		}
		// Non-empty input still goes through the codec.
		in := bytes.Repeat([]byte{7}, 1000)
		got, err = compress.Decode(codec, make([]byte, len(in)), codec.Encode(nil, in))
		if err != nil || !bytes.Equal(got, in) {
			t.Errorf("%s: round trip: %v", c, err)
		}
		if _, ok := codec.(compress.StreamingCodec); c != compress.Codecs.Lz4 && c != compress.Codecs.Lz4Raw && !ok {
			t.Errorf("%s no longer streams", c)
		}
	}
}
