package azstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/pswap/pswap/internal/partupload"
	"github.com/pswap/pswap/store"
)

// target is a blob written as staged blocks (Put Block), committed at once
// by Put Block List: the [partupload.Target] of a streaming write, whose
// pipeline (bounded memory, parallel blocks, stop on error) is package
// partupload's; the requests, and their options, are here. Staged blocks
// are invisible until committed, and Azure discards uncommitted blocks
// after a week (or when another write of the blob commits), so an aborted
// write needs no cleanup request.
type target struct {
	s      *Store
	parent context.Context
	key    string
	full   string
	opts   store.PutOptions
	prefix string // this writer's block id prefix
}

// NewWriter starts a streaming write. No request is made until the first
// block is full (or Commit, for small blobs). The conditions in opts apply
// to the final Put Blob or Put Block List. Memory in use is about
// (Concurrency+1)*PartSize; block buffers are pooled across writers.
func (s *Store) NewWriter(ctx context.Context, key string, opts store.WriterOptions) (store.Writer, error) {
	full, err := s.fullKey("write", key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("azstore: write %s: %w", s.URI(key), err)
	}
	partSize := opts.PartSize
	if partSize <= 0 {
		partSize = s.partSize
	}
	partSize = min(partSize, MaxPartSize)
	conc := opts.Concurrency
	if conc <= 0 {
		conc = s.concurrency
	}
	var id [12]byte
	rand.Read(id[:])
	t := &target{s: s, parent: ctx, key: key, full: full, opts: opts.PutOptions, prefix: hex.EncodeToString(id[:])}
	return partupload.New(policy.WithRetryOptions(ctx, s.dataRetry), t, partupload.Options{
		Name: "azstore", URI: s.URI(key), Unit: "block",
		PartSize: partSize, Concurrency: conc, MaxParts: maxBlocks,
	}), nil
}

// blockID is the base64 id of block num: all of one blob's ids must have
// the same length, and each writer has its own, so that two writers of one
// blob never stage over each other's blocks.
func (t *target) blockID(num int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s-%06d", t.prefix, num-1))
}

// UploadPart stages one block.
func (t *target) UploadPart(ctx context.Context, num int, data []byte) error {
	_, err := t.s.block(t.full).StageBlock(ctx, t.blockID(num), streaming.NopCloser(bytes.NewReader(data)), nil)
	if err != nil {
		return t.s.mapError(t.parent, opStageBlock, t.key, err)
	}
	return nil
}

// Put sends a blob smaller than a block with one Put Blob.
func (t *target) Put(ctx context.Context, data []byte) (store.Attrs, error) {
	return t.s.put(ctx, t.key, t.full, data, t.opts)
}

// Complete sends Put Block List of blocks 1..n, with the write's conditions.
func (t *target) Complete(ctx context.Context, n int, size int64) (store.Attrs, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = t.blockID(i + 1)
	}
	out, err := t.s.block(t.full).CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{
		AccessConditions: accessConditions(t.opts),
		HTTPHeaders:      httpHeaders(t.opts),
	})
	if err != nil {
		return store.Attrs{}, t.s.writeError(t.parent, putOp(opCommitList, t.opts), t.key, t.full, t.opts, err)
	}
	return store.Attrs{Key: t.key, Size: size, ETag: etag(out.ETag), ModTime: utc(out.LastModified)}, nil
}

// Finish has nothing to clean up: staged blocks stay uncommitted,
// invisible, and are discarded by Azure.
func (t *target) Finish(bool) error { return nil }
