package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"cloud.google.com/go/storage"

	"github.com/pswap/pswap/store"
)

// NewWriter starts a streaming write: a resumable upload that sends one
// chunk of opts.PartSize bytes (default: the store's, 16 MiB) at a time,
// so that memory is bounded by one chunk; opts.Concurrency does not apply
// (a resumable upload's chunks go in order). An object smaller than a
// chunk is sent in a single request at Commit. The preconditions of
// opts.PutOptions apply at the end of the upload: nothing is visible, and
// no precondition decided, before Commit.
func (s *Store) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	k, err := s.fullKey("write", key)
	if err != nil {
		return nil, err
	}
	cond, has, err := s.conditions("write", key, opts.PutOptions)
	if err != nil {
		return nil, err
	}
	obj := s.bkt.Object(k)
	if has {
		obj = obj.If(cond)
	}
	obj, sent := s.boundUploads(obj)
	part := s.partSize
	if opts.PartSize > 0 {
		part = chunkSize(opts.PartSize)
	}
	wctx, cancel := context.WithCancel(ctx)
	w := obj.NewWriter(wctx)
	w.ChunkSize = int(part)
	w.ContentType = opts.ContentType
	w.ForceEmptyContentType = opts.ContentType == ""
	w.ProgressFunc = sent
	return &writer{s: s, ctx: ctx, cancel: cancel, w: w, key: key, o: putOp(opWrite, opts.PutOptions)}, nil
}

type writer struct {
	s      *Store
	ctx    context.Context
	cancel context.CancelFunc
	w      *storage.Writer
	key    string
	o      op

	mu   sync.Mutex
	done bool // committed or aborted
}

var errWriterDone = errors.New("writer already committed or aborted")

// Write hands p to the SDK's upload, which sends a chunk whenever one is full.
func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	done := w.done
	w.mu.Unlock()
	if done {
		return 0, fmt.Errorf("gcsstore: write %s: %w", w.s.URI(w.key), errWriterDone)
	}
	n, err := w.w.Write(p)
	if err != nil {
		return n, w.s.mapError(w.ctx, w.o, w.key, err)
	}
	return n, nil
}

// Commit sends the last chunk and finishes the upload: the object appears
// atomically, or not at all.
func (w *writer) Commit() (store.Attrs, error) {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return store.Attrs{}, fmt.Errorf("gcsstore: commit %s: %w", w.s.URI(w.key), errWriterDone)
	}
	w.done = true
	w.mu.Unlock()
	defer w.cancel()
	if err := w.ctx.Err(); err != nil {
		w.cancel()
		w.w.Close()
		return store.Attrs{}, fmt.Errorf("gcsstore: write %s: %w", w.s.URI(w.key), err)
	}
	if err := w.w.Close(); err != nil {
		return store.Attrs{}, w.s.writeError(w.ctx, w.o, w.key, err)
	}
	return attrsOf(w.key, w.w.Attrs()), nil
}

// Abort cancels the upload: no object is created. A no-op after Commit.
func (w *writer) Abort() error {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return nil
	}
	w.done = true
	w.mu.Unlock()
	w.cancel()
	w.w.Close() // returns the cancellation; the upload is abandoned
	return nil
}
