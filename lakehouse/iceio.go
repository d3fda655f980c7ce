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
	return &storeIO{ctx: ctx, p: newPublisher(st, Options{})}
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
	if !bytes.HasPrefix(data, []byte("Obj\x01")) {
		return data
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
	type entry struct{ k, v []byte }
	var meta []entry
	for { // the metadata map, in blocks
		n, ok := varint()
		if !ok {
			return data
		}
		if n == 0 {
			break
		}
		if n < 0 {
			n = -n
			if _, ok := varint(); !ok { // the block's size in bytes
				return data
			}
		}
		for range n {
			k, ok1 := str()
			v, ok2 := str()
			if !ok1 || !ok2 {
				return data
			}
			meta = append(meta, entry{k, v})
		}
	}
	if off+16 > len(data) {
		return data
	}
	slices.SortFunc(meta, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
	zigzag := func(b []byte, n int64) []byte { return binary.AppendUvarint(b, uint64(n<<1^n>>63)) }
	out := append(make([]byte, 0, len(data)+16), "Obj\x01"...)
	if len(meta) > 0 {
		out = zigzag(out, int64(len(meta)))
		for _, e := range meta {
			out = append(zigzag(out, int64(len(e.k))), e.k...)
			out = append(zigzag(out, int64(len(e.v))), e.v...)
		}
	}
	out = zigzag(out, 0)
	if len(out) != off {
		return data // a header in blocks of another size: the length would change
	}
	out = append(out, marker[:]...)
	return append(out, bytes.ReplaceAll(data[off+16:], data[off:off+16], marker[:])...)
}
