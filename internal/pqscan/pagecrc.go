package pqscan

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// VerifyPageChecksums walks every page of every column chunk of the
// Parquet file r (size bytes) and checks the CRC-32 of each
// page that carries one (Parquet's optional PageHeader.crc: over the page
// bytes as stored, after compression). Pages without a CRC are skipped;
// encrypted columns are not checked. A mismatch is an error matching
// ErrPageChecksum (and ErrCorrupt) naming the column, the row group and
// the page's offset. The walk is no structural check: a column chunk whose
// page headers do not parse, or whose pages overrun it (some writers get
// sizes wrong in ways readers tolerate), is left to the decoder from that
// page on. It returns how many pages carried a CRC that matched.
// A footer that cannot be read fails with ErrCorrupt.
func VerifyPageChecksums(r io.ReaderAt, size int64) (checked int, err error) {
	pr, err := Open(r, size)
	if err != nil {
		return 0, err
	}
	defer pr.Close()
	return VerifyPageChecksumsOf(r, size, pr.MetaData())
}

// VerifyPageChecksumsOf is VerifyPageChecksums of a file whose footer md
// was read already.
func VerifyPageChecksumsOf(r io.ReaderAt, size int64, md *metadata.FileMetaData) (checked int, err error) {
	var page []byte
	br := bufio.NewReaderSize(nil, crcReadBuffer)
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		if rg.NumColumns() != md.Schema.NumColumns() { // Arrow's ColumnChunk would panic
			return checked, fmt.Errorf("%w: row group %d has %d columns, the schema %d", ErrCorrupt, g, rg.NumColumns(), md.Schema.NumColumns())
		}
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return checked, fmt.Errorf("%w: row group %d column %d: %v", ErrCorrupt, g, c, err)
			}
			if cc.CryptoMetadata() != nil {
				continue
			}
			if cc.NumValues() == 0 {
				continue // no pages (some writers leave garbage offsets)
			}
			col := cc.PathInSchema().String()
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
			total := cc.TotalCompressedSize()
			if start < 0 || total < 0 || start+total > size {
				continue // left to the decoder
			}
			cr := &countingReader{r: br}
			br.Reset(io.NewSectionReader(r, start, total))
			dec := thrift.NewDecoder((&thrift.CompactProtocol{}).NewReader(cr))
			for cr.n < total {
				at := start + cr.n
				var h format.PageHeader
				if err := dec.Decode(&h); err != nil {
					break // not a page header: left to the decoder
				}
				n := int64(h.CompressedPageSize)
				if n < 0 || cr.n+n > total {
					break // overruns the chunk: left to the decoder
				}
				if h.CRC == 0 { // no CRC (or, once in 2^32 pages, a CRC of 0: not checked)
					cr.n += n
					if n <= int64(br.Buffered()) {
						br.Discard(int(n)) // cannot fail: buffered
					} else {
						// Skip the body unread: the next header is read
						// from its offset (a file without CRCs, such as
						// DuckDB's, costs its headers, not its bytes).
						br.Reset(io.NewSectionReader(r, start+cr.n, total-cr.n))
					}
					continue
				}
				if int64(cap(page)) < n {
					page = make([]byte, n)
				}
				page = page[:n]
				if _, err := io.ReadFull(br, page); err != nil {
					break
				}
				cr.n += n
				if got := crc32.ChecksumIEEE(page); got != uint32(h.CRC) {
					return checked, fmt.Errorf("%w in column %s (row group %d, page at offset %d): crc %08x, page header says %08x",
						ErrPageChecksum, col, g, at, got, uint32(h.CRC))
				}
				checked++
			}
		}
	}
	return checked, nil
}

// crcReadBuffer is the read buffer of the CRC pass: a page header and
// more. Bodies of pages with a CRC longer than it are read into the page
// buffer directly (bufio reads large reads through), and those without one
// are not read at all.
var crcReadBuffer = 16 << 10

// countingReader counts the bytes the thrift decoder takes from r.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

var _ io.ByteReader = (*countingReader)(nil)
