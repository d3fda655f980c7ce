package pqscan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// verifyReadingAll is VerifyPageChecksumsOf as it was before it skipped
// the bodies of pages without a CRC: it reads every byte of every column
// chunk. The reference of TestVerifyPageChecksumsSkipsUnread.
func verifyReadingAll(r io.ReaderAt, size int64, md *metadata.FileMetaData, headers map[int64]bool) (checked int, err error) {
	var page []byte
	br := bufio.NewReaderSize(nil, 64<<10)
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		if rg.NumColumns() != md.Schema.NumColumns() {
			return checked, fmt.Errorf("%w: row group %d has %d columns, the schema %d", ErrCorrupt, g, rg.NumColumns(), md.Schema.NumColumns())
		}
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return checked, fmt.Errorf("%w: row group %d column %d: %v", ErrCorrupt, g, c, err)
			}
			if cc.CryptoMetadata() != nil || cc.NumValues() == 0 {
				continue
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
			total := cc.TotalCompressedSize()
			if start < 0 || total < 0 || start+total > size {
				continue
			}
			cr := &countingReader{r: br}
			br.Reset(io.NewSectionReader(r, start, total))
			dec := thrift.NewDecoder((&thrift.CompactProtocol{}).NewReader(cr))
			for cr.n < total {
				headers[start+cr.n] = true
				var h format.PageHeader
				if err := dec.Decode(&h); err != nil {
					break
				}
				n := int64(h.CompressedPageSize)
				if n < 0 || cr.n+n > total {
					break
				}
				if h.CRC == 0 {
					if _, err := br.Discard(int(n)); err != nil {
						break
					}
					cr.n += n
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
					return checked, ErrPageChecksum
				}
				checked++
			}
		}
	}
	return checked, nil
}

// TestVerifyPageChecksumsSkipsUnread: skipping the bodies of pages without
// a CRC (instead of reading them) checks the same pages and finds the same
// damage as reading every byte did, for every Parquet file of staging's
// corpora, with and without a flipped bit at several places; also with a
// read buffer smaller than every page, where every skip is a new read.
func TestVerifyPageChecksumsSkipsUnread(t *testing.T) {
	for _, buf := range []int{crcReadBuffer, 64} {
		t.Run(fmt.Sprint(buf), func(t *testing.T) {
			defer func(was int) { crcReadBuffer = was }(crcReadBuffer)
			crcReadBuffer = buf
			verifyCorpus(t)
		})
	}
}

func verifyCorpus(t *testing.T) {
	var files []string
	for _, dir := range []string{"corpus", "parquet-testing"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "staging", "testdata", dir, "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d corpus files", len(files))
	}
	checkedAny, skippedAny := false, false
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			continue // not this pass's concern: the footer does not read
		}
		md := pr.MetaData()
		variants := [][]byte{b}
		for _, at := range []int{len(b) / 8, len(b) / 4, len(b) / 2, len(b) * 2 / 3} {
			bad := bytes.Clone(b)
			bad[at] ^= 0x10
			variants = append(variants, bad)
		}
		for i, v := range variants {
			headers := map[int64]bool{}
			want, wantErr := verifyReadingAll(bytes.NewReader(v), int64(len(v)), md, headers)
			rec := &readLog{r: bytes.NewReader(v)}
			got, gotErr := VerifyPageChecksumsOf(rec, int64(len(v)), md)
			// Every read starts where the one before ended or at a page
			// header: a skip lands on the next header.
			for j, rd := range rec.reads {
				if !headers[rd[0]] && (j == 0 || rd[0] != rec.reads[j-1][1]) {
					t.Errorf("%s variant %d: read at %d, neither a page header nor after the read before (%v)", filepath.Base(path), i, rd[0], rec.reads[max(j-1, 0)])
					break
				}
			}
			if got != want || errors.Is(gotErr, ErrPageChecksum) != errors.Is(wantErr, ErrPageChecksum) || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("%s variant %d: %d pages checked, error %v; reading every byte: %d, %v", filepath.Base(path), i, got, gotErr, want, wantErr)
			}
			checkedAny = checkedAny || want > 0
			skippedAny = skippedAny || (i == 0 && want == 0)
		}
		pr.Close()
	}
	if !checkedAny || !skippedAny {
		t.Fatalf("the corpus has files with page CRCs: %v, without: %v; want both", checkedAny, skippedAny)
	}
}

// readLog records the [start, end) of every read.
type readLog struct {
	r     io.ReaderAt
	reads [][2]int64
}

func (l *readLog) ReadAt(p []byte, off int64) (int, error) {
	n, err := l.r.ReadAt(p, off)
	l.reads = append(l.reads, [2]int64{off, off + int64(n)})
	return n, err
}
