package pqscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/pierrec/lz4/v4"
)

// RegisterCodecs adds to arrow-go's process-wide codec registry what it
// lacks for reading the Parquet files other writers produce (see the
// package documentation, "Codecs and encodings"):
//   - LZ4 (the deprecated codec id 5), in each of its three framings:
//     Hadoop's (parquet-mr, Spark, Hive), the LZ4 frame format, and a bare
//     LZ4 block (older arrow-cpp); written with Hadoop's framing.
//   - An empty compressed input decodes to an empty output, whatever the
//     codec: a DataPage v2 whose values are all null holds no compressed
//     bytes (only its levels), and snappy, gzip or zstd would call zero
//     bytes corrupt.
//
// Importing the package changes nothing: the package calls RegisterCodecs
// itself before it opens a file (Open, and so ReadFooter,
// VerifyPageChecksums, Scan), and staging before it writes one. Call it
// (staging.RegisterCodecs) to read such files with
// arrow-go directly; where other goroutines may be using arrow-go's codecs
// already, call it first (at start-up), as arrow-go's registry has no lock.
// Calling it again does nothing.
func RegisterCodecs() { registerOnce.Do(registerCodecs) }

var registerOnce sync.Once

func registerCodecs() {
	for _, c := range []compress.Compression{
		compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Brotli,
		compress.Codecs.Zstd, compress.Codecs.Lz4Raw,
	} {
		inner, err := compress.GetCodec(c)
		if err != nil {
			continue
		}
		if s, ok := inner.(streamingCodec); ok {
			compress.RegisterCodec(c, emptyInputStreaming{s})
		} else {
			compress.RegisterCodec(c, emptyInput{inner})
		}
	}
	compress.RegisterCodec(compress.Codecs.Lz4, emptyInput{lz4Codec{}})
}

type streamingCodec interface {
	compress.Codec
	compress.StreamingCodec
}

// emptyInput decodes an empty input to an empty output and leaves
// everything else to the codec it wraps.
type emptyInput struct{ compress.Codec }

func (e emptyInput) Decode(dst, src []byte) []byte {
	out, err := e.DecodeWithError(dst, src)
	if err != nil {
		panic(err) // compress.Decode recovers it
	}
	return out
}

func (e emptyInput) DecodeWithError(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst[:0], nil
	}
	return compress.Decode(e.Codec, dst, src)
}

// emptyInputStreaming is emptyInput for codecs that also stream, so that
// Arrow keeps streaming large pages through them.
type emptyInputStreaming struct{ streamingCodec }

func (e emptyInputStreaming) Decode(dst, src []byte) []byte {
	return emptyInput{e.streamingCodec}.Decode(dst, src)
}

func (e emptyInputStreaming) DecodeWithError(dst, src []byte) ([]byte, error) {
	return emptyInput{e.streamingCodec}.DecodeWithError(dst, src)
}

// lz4Codec is Parquet's deprecated LZ4 codec.
type lz4Codec struct{}

var errLZ4 = errors.New("lz4: input is neither Hadoop-framed, an LZ4 frame, nor an LZ4 block")

func (lz4Codec) Decode(dst, src []byte) []byte {
	out, err := lz4Codec{}.DecodeWithError(dst, src)
	if err != nil {
		panic(err) // compress.Decode recovers it
	}
	return out
}

func (lz4Codec) DecodeWithError(dst, src []byte) ([]byte, error) {
	if out, ok := lz4Hadoop(dst, src); ok {
		return out, nil
	}
	if len(src) >= 4 && binary.LittleEndian.Uint32(src) == 0x184D2204 {
		var out bytes.Buffer
		out.Grow(len(dst))
		if _, err := io.Copy(&out, lz4.NewReader(bytes.NewReader(src))); err != nil {
			return nil, fmt.Errorf("lz4 frame: %w", err)
		}
		return append(dst[:0], out.Bytes()...), nil
	}
	n, err := lz4.UncompressBlock(src, dst[:cap(dst)])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errLZ4, err)
	}
	return dst[:n], nil
}

// lz4Hadoop decodes Hadoop's framing: blocks of a 4-byte big-endian
// decompressed size, a 4-byte big-endian compressed size, then the LZ4
// block. ok is false when src is not framed so.
func lz4Hadoop(dst, src []byte) ([]byte, bool) {
	out := dst[:0]
	for len(src) > 0 {
		if len(src) < 8 {
			return nil, false
		}
		dsize, csize := int(binary.BigEndian.Uint32(src)), int(binary.BigEndian.Uint32(src[4:]))
		src = src[8:]
		if csize > len(src) || dsize > cap(dst)-len(out) {
			return nil, false
		}
		n, err := lz4.UncompressBlock(src[:csize], out[len(out):len(out)+dsize])
		if err != nil || n != dsize {
			return nil, false
		}
		out, src = out[:len(out)+n], src[csize:]
	}
	return out, len(out) > 0 || len(dst) == 0
}

// Encode writes one Hadoop-framed block, the framing every reader of the
// LZ4 codec understands.
func (lz4Codec) Encode(dst, src []byte) []byte {
	bound := lz4.CompressBlockBound(len(src))
	if cap(dst) < 8+bound {
		dst = make([]byte, 8+bound)
	}
	dst = dst[:8+bound]
	var c lz4.Compressor
	n, err := c.CompressBlock(src, dst[8:])
	if err != nil || n == 0 { // incompressible: lz4 wants a literal-only block
		n = lz4LiteralBlock(dst[8:], src)
	}
	binary.BigEndian.PutUint32(dst, uint32(len(src)))
	binary.BigEndian.PutUint32(dst[4:], uint32(n))
	return dst[:8+n]
}

// lz4LiteralBlock writes src as one LZ4 sequence of literals only.
func lz4LiteralBlock(dst, src []byte) int {
	n := 0
	l := len(src)
	if l < 15 {
		dst[0] = byte(l << 4)
		n = 1
	} else {
		dst[0] = 0xf0
		n = 1
		for l -= 15; l >= 255; l -= 255 {
			dst[n] = 255
			n++
		}
		dst[n] = byte(l)
		n++
	}
	return n + copy(dst[n:], src)
}

func (lz4Codec) EncodeLevel(dst, src []byte, _ int) []byte { return lz4Codec{}.Encode(dst, src) }

func (lz4Codec) CompressBound(n int64) int64 { return 8 + int64(lz4.CompressBlockBound(int(n))) }
