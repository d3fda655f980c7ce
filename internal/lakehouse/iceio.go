package lakehouse

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"slices"
	"time"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/pswap/pswap/store"
)

// IO returns an iceberg-go file system that reads the table through its
// pswap store, so that iceberg-go scans a published table on any pswap
// backend (s3://, file://, mem://) without its cloud SDK bindings. Files
// are read whole into memory: it suits metadata and moderate data files.
// Only locations inside the table are served; writes and removes fail.
func IO(ctx context.Context, st store.Store) iceio.IO {
	return &storeIO{ctx: ctx, p: newLoader(ctx, st, Options{})}
}

type storeIO struct {
	ctx context.Context
	p   *publisher
}

func (s *storeIO) Open(name string) (iceio.File, error) {
	data, err := s.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(data), name: name, size: int64(len(data))}, nil
}

func (s *storeIO) ReadFile(name string) ([]byte, error) {
	keys, err := s.p.keysOf(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	var data []byte
	for _, key := range keys {
		if data, _, err = store.ReadAll(s.ctx, s.p.st, key); !errors.Is(err, store.ErrNotFound) {
			break
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return data, nil
}

func (s *storeIO) Remove(name string) error {
	return &fs.PathError{Op: "remove", Path: name, Err: errors.ErrUnsupported}
}

type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Close() error               { return nil }
func (f *memFile) Stat() (fs.FileInfo, error) { return fileInfo{f}, nil }

type fileInfo struct{ f *memFile }

func (i fileInfo) Name() string       { return i.f.name }
func (i fileInfo) Size() int64        { return i.f.size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }

// canonicalAvro gives an Avro object container file written by iceberg-go
// (which offers no option for either) the sync marker marker, wherever the
// random one occurs (after the header and after every block), and its
// header's metadata in key order (iceberg-go writes it from a map). The
// file reads the same. Data it cannot parse is returned as it is.
func canonicalAvro(data []byte, marker [16]byte) []byte {
	h, ok := parseAvroHeader(data)
	if !ok {
		return data
	}
	out := h.encode()
	if len(out) != h.end {
		return data // a header in blocks of another size: the length would change
	}
	out = append(out, marker[:]...)
	return append(out, bytes.ReplaceAll(data[h.end+16:], data[h.end:h.end+16], marker[:])...)
}

// avroHeader is the header of an Avro object container file: its
// metadata, in key order, and where the sync marker after it starts.
type avroHeader struct {
	meta []avroMetaEntry
	end  int
}

type avroMetaEntry struct{ k, v []byte }

// parseAvroHeader reads the header of an Avro object container file; false
// when data is not one.
func parseAvroHeader(data []byte) (avroHeader, bool) {
	if !bytes.HasPrefix(data, []byte("Obj\x01")) {
		return avroHeader{}, false
	}
	off := 4
	varint := func() (int64, bool) {
		var u uint64
		for shift := uint(0); shift < 64 && off < len(data); shift += 7 {
			b := data[off]
			off++
			u |= uint64(b&0x7f) << shift
			if b < 0x80 {
				return int64(u>>1) ^ -int64(u&1), true
			}
		}
		return 0, false
	}
	str := func() ([]byte, bool) { // a string or bytes: length, then content
		n, ok := varint()
		if !ok || n < 0 || int64(off)+n > int64(len(data)) {
			return nil, false
		}
		off += int(n)
		return data[off-int(n) : off], true
	}
	var h avroHeader
	for { // the metadata map, in blocks
		n, ok := varint()
		if !ok {
			return avroHeader{}, false
		}
		if n == 0 {
			break
		}
		if n < 0 {
			n = -n
			if _, ok := varint(); !ok { // the block's size in bytes
				return avroHeader{}, false
			}
		}
		if n > int64(len(data)) {
			return avroHeader{}, false
		}
		for range n {
			k, ok1 := str()
			v, ok2 := str()
			if !ok1 || !ok2 {
				return avroHeader{}, false
			}
			h.meta = append(h.meta, avroMetaEntry{k, v})
		}
	}
	if off+16 > len(data) {
		return avroHeader{}, false
	}
	h.end = off
	slices.SortFunc(h.meta, func(a, b avroMetaEntry) int { return bytes.Compare(a.k, b.k) })
	return h, true
}

// value is the header's metadata value of key k, or nil.
func (h avroHeader) value(k string) []byte {
	for _, e := range h.meta {
		if string(e.k) == k {
			return e.v
		}
	}
	return nil
}

// encode is the header up to the sync marker: the magic and the
// metadata, in one block.
func (h avroHeader) encode() []byte {
	zigzag := func(b []byte, n int64) []byte { return binary.AppendUvarint(b, uint64(n<<1^n>>63)) }
	out := append(make([]byte, 0, h.end+64), "Obj\x01"...)
	if len(h.meta) > 0 {
		out = zigzag(out, int64(len(h.meta)))
		for _, e := range h.meta {
			out = append(zigzag(out, int64(len(e.k))), e.k...)
			out = append(zigzag(out, int64(len(e.v))), e.v...)
		}
	}
	return zigzag(out, 0)
}

// withAvroMeta returns the Avro file data with the header metadata key k
// set to v (the blocks after the header unchanged).
func withAvroMeta(data []byte, k string, v []byte) ([]byte, error) {
	h, ok := parseAvroHeader(data)
	if !ok {
		return nil, errors.New("not an Avro object container file")
	}
	h.meta = slices.DeleteFunc(h.meta, func(e avroMetaEntry) bool { return string(e.k) == k })
	h.meta = append(h.meta, avroMetaEntry{[]byte(k), v})
	slices.SortFunc(h.meta, func(a, b avroMetaEntry) int { return bytes.Compare(a.k, b.k) })
	return append(h.encode(), data[h.end:]...), nil
}
