package lakehouse

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
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
	key, err := s.p.keyOf(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	data, _, err := store.ReadAll(s.ctx, s.p.st, key)
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
