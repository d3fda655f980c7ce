package pqscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/pswap/pswap/manifest"
)

// Footer is what a Parquet file's footer says, checked: the footer parses,
// its schema is one staging can hash, and its column chunks lie inside the
// file. See [ReadFooter].
type Footer struct {
	// Rows is the footer's row count.
	Rows int64
	// Schema is the canonical schema's text (what Content.Schema records).
	Schema string
	// RowGroups is the number of row groups.
	RowGroups int
	// Arrow is the canonical schema as Arrow's (for table schema checks of
	// files that are adopted as they are).
	Arrow *arrow.Schema
	// NullFree names the flat optional top-level columns that the footer
	// proves hold no null: the statistics of every one of their column
	// chunks record a null count of 0. A column without such statistics,
	// or nested, is not named (its nulls are unknown without reading its
	// pages).
	NullFree []string
	// IDs are the Parquet field ids the file carries (an Iceberg engine's
	// data files have them): readers that find them read the file by them.
	IDs FieldIDs
	// Columns are the footer's column statistics (ColumnStats), what the
	// file's manifest entry records.
	Columns []manifest.ColumnStats
}

// ReadFooter reads and checks the footer of the Parquet file r of size
// bytes, reading only the footer (a footer-only check, e.g. over ranged
// GETs: it does not decode pages, so it cannot see damage inside them). A
// file that is not Parquet, or whose footer is inconsistent, fails with
// ErrCorrupt; a column staging cannot hash fails with ErrUnsupported.
// Logical types newer than this reader knows are read as their physical
// types, as DuckDB does.
func ReadFooter(r io.ReaderAt, size int64) (Footer, error) {
	pr, err := Open(r, size)
	if err != nil {
		return Footer{}, err
	}
	defer pr.Close()
	ft, canon, err := CheckFooter(pr, size)
	if err == nil && canon != nil {
		ft.Arrow, ft.IDs = canon.Arrow, canon.IDs
		ft.NullFree = nullFree(pr)
		ft.Columns = ColumnStats(pr.MetaData())
	}
	return ft, err
}

// CheckFooter checks what the footer of pr (a file of size bytes) says
// and derives the canonical schema; the Footer's Arrow, NullFree, IDs and
// Columns are left unset (ReadFooter sets them).
func CheckFooter(pr *file.Reader, size int64) (Footer, *Schema, error) {
	return checkFooterAs(pr, size, false)
}

// checkFooterAs is CheckFooter, with the canonical schema of schemaOf.
func checkFooterAs(pr *file.Reader, size int64, int96Nanos bool) (Footer, *Schema, error) {
	md := pr.MetaData()
	canon, err := schemaOf(md.Schema, int96Nanos)
	if err != nil {
		return Footer{}, nil, err
	}
	var sum int64
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		if rg.NumRows() < 0 {
			return Footer{}, nil, fmt.Errorf("%w: row group %d has %d rows", ErrCorrupt, g, rg.NumRows())
		}
		if rg.NumColumns() != md.Schema.NumColumns() {
			return Footer{}, nil, fmt.Errorf("%w: row group %d has %d columns, the schema %d", ErrCorrupt, g, rg.NumColumns(), md.Schema.NumColumns())
		}
		sum += rg.NumRows()
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return Footer{}, nil, fmt.Errorf("%w: row group %d column %d: %v", ErrCorrupt, g, c, err)
			}
			if cc.NumValues() == 0 {
				continue
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
			if start < 4 || cc.TotalCompressedSize() < 0 || start+cc.TotalCompressedSize() > size {
				return Footer{}, nil, fmt.Errorf("%w: column %s (row group %d) lies outside the file", ErrCorrupt, cc.PathInSchema(), g)
			}
		}
	}
	if md.NumRows < 0 || md.NumRows != sum && sum != 0 {
		return Footer{}, nil, fmt.Errorf("%w: footer says %d rows, its row groups %d", ErrCorrupt, md.NumRows, sum)
	}
	return Footer{Rows: md.NumRows, Schema: canon.Text, RowGroups: md.NumRowGroups()}, canon, nil
}

// nullFree returns the flat optional top-level columns whose column chunks
// all have statistics with a null count of 0 (see Footer.NullFree). Only
// flat columns: for a nested one, writers differ in what the leaf's null
// count counts (null lists, empty lists, null elements).
func nullFree(pr *file.Reader) (names []string) {
	defer func() {
		if recover() != nil {
			names = nil // statistics Arrow cannot decode prove nothing
		}
	}()
	md := pr.MetaData()
	sc := md.Schema
	for c := 0; c < sc.NumColumns(); c++ {
		col := sc.Column(c)
		if col.MaxRepetitionLevel() != 0 || col.MaxDefinitionLevel() != 1 || len(col.ColumnPath()) != 1 {
			continue
		}
		proven := true
		for g := 0; g < md.NumRowGroups() && proven; g++ {
			cc, err := md.RowGroup(g).ColumnChunk(c)
			if err != nil {
				proven = false
				break
			}
			st, err := cc.Statistics()
			proven = err == nil && st != nil && st.HasNullCount() && st.NullCount() == 0
		}
		if proven {
			names = append(names, col.Name())
		}
	}
	return names
}

// Open opens the Parquet file r of size bytes with Arrow's reader as
// staging reads it: a logical type Arrow does not know (a newer writer's)
// is read as its physical type, as DuckDB does, so the schema is the one
// ReadFooter checked and the table recorded; a footer Arrow's parser
// panics on is ErrCorrupt. It reads the footer only. Readers of files that
// staging accepted (the Iceberg metadata's footer schema) use it, so that
// no file staging accepts makes them fail or panic.
//
// Arrow refuses a footer whose schema has a logical type it does not know;
// then the footer is read again with those annotations removed, so that
// the columns read as their physical types.
func Open(r io.ReaderAt, size int64) (pr *file.Reader, err error) {
	pr, err = newArrowReader(&sizedReaderAt{r: r, size: size})
	if err == nil || !strings.Contains(err.Error(), "invalid logical type") {
		return pr, err
	}
	patched, perr := withoutUnknownLogicalTypes(r, size)
	if perr != nil {
		return nil, err
	}
	return newArrowReader(patched)
}

func newArrowReader(r *sizedReaderAt) (pr *file.Reader, err error) {
	RegisterCodecs()
	defer func() {
		// Arrow's footer parser can panic on malformed input.
		if p := recover(); p != nil {
			pr, err = nil, fmt.Errorf("%w: footer: %v", ErrCorrupt, p)
		}
	}()
	pr, err = file.NewParquetReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return pr, nil
}

// withoutUnknownLogicalTypes returns r with its footer re-encoded without
// the logical type annotations that parquet-go does not know either (the
// copy is only read; the file's own bytes are what is uploaded).
func withoutUnknownLogicalTypes(r io.ReaderAt, size int64) (*sizedReaderAt, error) {
	if size < 12 {
		return nil, errors.New("too small")
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:]))
	if string(tail[4:]) != "PAR1" || n > size-12 {
		return nil, errors.New("no footer")
	}
	raw := make([]byte, n)
	if _, err := r.ReadAt(raw, size-8-n); err != nil {
		return nil, err
	}
	var md format.FileMetaData
	if err := thrift.Unmarshal(&thrift.CompactProtocol{}, raw, &md); err != nil {
		return nil, err
	}
	// parquet-go's decoder drops the union members it does not know, so
	// encoding the footer again leaves those annotations out.
	b, err := thrift.Marshal(&thrift.CompactProtocol{}, &md)
	if err != nil {
		return nil, err
	}
	var footer bytes.Buffer
	footer.Write(b)
	_ = binary.Write(&footer, binary.LittleEndian, uint32(len(b)))
	footer.WriteString("PAR1")
	cut := size - 8 - n
	return &sizedReaderAt{r: r, size: cut + int64(footer.Len()), cut: cut, tail: footer.Bytes()}, nil
}

// sizedReaderAt is r cut at cut and followed by tail (when tail is set),
// with the Seek that Arrow's reader needs.
type sizedReaderAt struct {
	r    io.ReaderAt
	size int64
	cut  int64
	tail []byte
	pos  int64
}

func (s *sizedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if s.tail == nil {
		return s.r.ReadAt(p, off)
	}
	if off >= s.size {
		return 0, io.EOF
	}
	n := 0
	if off < s.cut {
		m := int64(len(p))
		if off+m > s.cut {
			m = s.cut - off
		}
		k, err := s.r.ReadAt(p[:m], off)
		n += k
		if err != nil && !(errors.Is(err, io.EOF) && int64(k) == m) {
			return n, err
		}
		off += int64(k)
	}
	if n < len(p) && off >= s.cut {
		n += copy(p[n:], s.tail[off-s.cut:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (s *sizedReaderAt) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += s.pos
	case io.SeekEnd:
		offset += s.size
	}
	if offset < 0 {
		return 0, errors.New("negative position")
	}
	s.pos = offset
	return offset, nil
}
