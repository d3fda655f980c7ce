package pqscan

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// scanBatch is the number of rows the existing-file scan decodes per
// record batch: larger batches than the writers' amortise the per-batch
// work of every column reader.
const scanBatch = 64 << 10

// poolAllocator is the Arrow allocator of the existing-file scan. The
// buffers of a decoded batch are freed (by Arrow's reference counts) when
// the next batch is read, and come back here instead of to the garbage
// collector, so that a scan decodes into the same few buffers over and
// over: fresh memory for every batch (zeroed by the runtime, then scanned
// and collected) cost a fifth of the scan. Buffers are zeroed when handed
// out, as Arrow's allocators do, unless noZero is set. Sizes round up to
// powers of two from 64 bytes, which Go allocates 64-byte aligned, as Arrow
// wants.
type poolAllocator struct {
	pools [64]sync.Pool // by log2 of the capacity
	// noZero hands buffers out as they were last used. Only for readers
	// that overwrite every byte they use: the fast scan's page reader,
	// whose buffers are read into whole (io.ReadFull) or decompressed into
	// whole (Arrow checks the decompressed length against the page header).
	noZero bool
}

// scanAllocator serves Arrow's record reader (its arrays rely on zeroed
// memory); pageAllocator serves the fast scan's page reader, where zeroing
// each page's buffers before they are overwritten was 5% of a commit's CPU.
var (
	scanAllocator memory.Allocator = &poolAllocator{}
	pageAllocator memory.Allocator = &poolAllocator{noZero: true}
)

func (a *poolAllocator) Allocate(size int) []byte {
	if size <= 0 {
		return make([]byte, 0, 64)
	}
	c := max(bits.Len(uint(size-1)), 6)
	if v, ok := a.pools[c].Get().(*[]byte); ok {
		b := (*v)[:size]
		if !a.noZero {
			clear(b)
		}
		return b
	}
	return make([]byte, size, 1<<c)
}

func (a *poolAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		nb := b[:size]
		if size > len(b) && !a.noZero {
			clear(nb[len(b):])
		}
		return nb
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c < 64 || c&(c-1) != 0 {
		return // not one of ours
	}
	b = b[:0]
	a.pools[bits.TrailingZeros(uint(c))].Put(&b)
}

// scanProps are the Arrow read properties of the scan of a file: string
// and binary columns whose first row group is dictionary encoded are read
// as Arrow dictionaries, so that their values are neither copied out of
// the dictionary per row nor hashed more than once per dictionary.
func scanProps(pr *file.Reader) pqarrow.ArrowReadProperties {
	props := pqarrow.ArrowReadProperties{BatchSize: scanBatch}
	md := pr.MetaData()
	if md.NumRowGroups() == 0 {
		return props
	}
	rg := md.RowGroup(0)
	sc := md.Schema
	for j := 0; j < sc.NumColumns(); j++ {
		col := sc.Column(j)
		if col.PhysicalType() != parquet.Types.ByteArray || col.MaxRepetitionLevel() != 0 || len(col.ColumnPath()) != 1 {
			continue
		}
		if cc, err := rg.ColumnChunk(j); err == nil && cc.HasDictionaryPage() {
			props.SetReadDict(j, true)
		}
	}
	return props
}
