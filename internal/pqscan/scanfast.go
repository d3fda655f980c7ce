package pqscan

import (
	"github.com/pswap/pswap/internal/checksum"

	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/zeebo/xxh3"
)

// The fast scan of an existing file: for a flat schema of primitive
// columns (the common case), the pages of a row group are decompressed by
// Arrow's page reader and decoded here, straight into value hashes folded
// into the rows' accumulators, without building Arrow arrays. It computes
// the same colsum128 as checksum.ColHasher over Arrow's records (the definition in
// staging's doc.go; FuzzFastScan here and staging's FuzzAddParquetFile
// compare them on arbitrary files). Anything
// it does not handle (an encoding, a page shape), and anything it finds
// wrong, makes it give the row group up: the row group is then scanned
// again by the Arrow path, which decides (so a corrupt file is refused
// with the same error as before, and the fast scan is never more lenient
// than Arrow's reader where it fails).

// fastKind is how the fast scan turns one column's physical values into
// their canonical 64 bits.
type fastKind uint8

const (
	fkBool     fastKind = iota + 1
	fkInt32             // int32, date32, time32: sign-extended
	fkInt8              // INT32 holding int8: truncated, sign-extended
	fkInt16             // INT32 holding int16
	fkUint8             // INT32 holding uint8: truncated, zero-extended
	fkUint16            // INT32 holding uint16
	fkUint32            // INT32 holding uint32: zero-extended
	fkInt64             // int64, uint64, time64, timestamp: as is
	fkFloat             // float32 bits (NaN canonical)
	fkDouble            // float64 bits (NaN canonical)
	fkBytes             // string, binary: XXH3-64 of the bytes
	fkDec32             // INT32 decimal: its rowsum128 encoding hashed
	fkDec64             // INT64 decimal
	fkDecFixed          // FIXED_LEN_BYTE_ARRAY decimal (big-endian)
	fkFixed             // fixed-size binary: XXH3-64 of the bytes
	fkInt96             // INT96 timestamp: microseconds, as Spark reads it (see int96Micros)
)

// maxFastPageValues bounds the values of one page the fast scan decodes at
// once (per column: 9 bytes a value); a larger page is left to the Arrow
// path, which decodes in batches.
const maxFastPageValues = 1 << 20

// errNotFast: the fast scan gives a row group up.
var errNotFast = errors.New("not for the fast scan")

// newFastScanner returns a fast scanner of a file when its schema is flat
// and every column a primitive the fast scan hashes, nil else.
func newFastScanner(md *metadata.FileMetaData, canon *Schema) *fastScanner {
	sc := md.Schema
	if sc.NumColumns() != canon.Arrow.NumFields() {
		return nil
	}
	s := &fastScanner{cols: make([]fastCol, sc.NumColumns())}
	for c := range s.cols {
		col := sc.Column(c)
		if len(col.ColumnPath()) != 1 || col.MaxRepetitionLevel() != 0 || col.MaxDefinitionLevel() > 1 {
			return nil
		}
		dt := canon.Arrow.Field(c).Type
		k := fastKindOf(col.PhysicalType(), dt)
		fc := fastCol{s: s, kind: k, seed: checksum.ColSeed(c), maxDef: col.MaxDefinitionLevel()}
		switch k {
		case 0:
			return nil
		case fkDec32, fkDec64, fkDecFixed:
			fc.decWidth = checksum.DecimalWidth(dt)
		}
		if k == fkDecFixed || k == fkFixed {
			fc.flen = col.TypeLength()
			if fc.flen <= 0 || k == fkDecFixed && fc.flen > fc.decWidth {
				return nil
			}
			if ft, ok := dt.(*arrow.FixedSizeBinaryType); ok && ft.ByteWidth != fc.flen {
				return nil
			}
		}
		s.cols[c] = fc
	}
	return s
}

func fastKindOf(pt parquet.Type, dt arrow.DataType) fastKind {
	switch pt {
	case parquet.Types.Boolean:
		if dt.ID() == arrow.BOOL {
			return fkBool
		}
	case parquet.Types.Int32:
		switch dt.ID() {
		case arrow.INT32, arrow.DATE32, arrow.TIME32:
			return fkInt32
		case arrow.INT8:
			return fkInt8
		case arrow.INT16:
			return fkInt16
		case arrow.UINT8:
			return fkUint8
		case arrow.UINT16:
			return fkUint16
		case arrow.UINT32:
			return fkUint32
		case arrow.DECIMAL128, arrow.DECIMAL256:
			return fkDec32
		}
	case parquet.Types.Int64:
		switch dt.ID() {
		case arrow.INT64, arrow.UINT64, arrow.TIME64, arrow.TIMESTAMP:
			return fkInt64
		case arrow.DECIMAL128, arrow.DECIMAL256:
			return fkDec64
		}
	case parquet.Types.Int96:
		if ts, ok := dt.(*arrow.TimestampType); ok && ts.Unit == arrow.Microsecond {
			return fkInt96
		}
	case parquet.Types.FixedLenByteArray:
		switch dt.ID() {
		case arrow.DECIMAL128, arrow.DECIMAL256:
			return fkDecFixed
		case arrow.FIXED_SIZE_BINARY:
			return fkFixed
		}
	case parquet.Types.Float:
		if dt.ID() == arrow.FLOAT32 {
			return fkFloat
		}
	case parquet.Types.Double:
		if dt.ID() == arrow.FLOAT64 {
			return fkDouble
		}
	case parquet.Types.ByteArray:
		switch dt.ID() {
		case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
			return fkBytes
		}
	}
	return 0
}

// canon32 is the canonical 64 bits of a 32-bit physical value.
func (k fastKind) canon32(v uint32) uint64 {
	switch k {
	case fkInt8:
		return uint64(int64(int8(v)))
	case fkInt16:
		return uint64(int64(int16(v)))
	case fkUint8:
		return uint64(uint8(v))
	case fkUint16:
		return uint64(uint16(v))
	case fkUint32:
		return uint64(v)
	case fkFloat:
		if f := math.Float32frombits(v); f != f {
			return 0x7fc00000
		}
		return uint64(v)
	}
	return uint64(int64(int32(v)))
}

// width is the size of one PLAIN value of the column, 0 for booleans and
// byte arrays.
func (c *fastCol) width() int {
	switch c.kind {
	case fkInt64, fkDouble, fkDec64:
		return 8
	case fkBool, fkBytes:
		return 0
	case fkDecFixed, fkFixed:
		return c.flen
	case fkInt96:
		return 12
	}
	return 4
}

// decHash is the value hash of a decimal whose unscaled value is v.
func (c *fastCol) decHash(v int64) uint64 {
	c.enc = checksum.AppendDecimalInt64(c.enc[:0], c.decWidth, v)
	return xxh3.HashSeed(c.enc, c.seed)
}

// fixedBytesHash is the value hash of a FIXED_LEN_BYTE_ARRAY value.
func (c *fastCol) fixedBytesHash(b []byte) uint64 {
	if c.kind == fkFixed {
		return xxh3.HashSeed(b, c.seed)
	}
	c.enc = checksum.AppendDecimalBE(c.enc[:0], c.decWidth, b)
	return xxh3.HashSeed(c.enc, c.seed)
}

// fastScanner scans row groups of one file with the fast scan; one per
// worker, its buffers reused between row groups.
type fastScanner struct {
	cols  []fastCol
	acc   []uint64
	i64   []int64 // DELTA_BINARY_PACKED decoding
	i32   []int32
	bools []uint8 // RLE booleans
	bytes []byte  // DELTA_LENGTH_BYTE_ARRAY values, DELTA_BYTE_ARRAY's
	offs  []uint32
	// DELTA_BYTE_ARRAY
	bytes2             []byte
	prefixes, suffixes []int64
	pad                []byte // bit-packed runs at the end of a page
	chunk              [lazyChunk]uint64
}

// rowGroup adds the row hashes of row group rg to sum and returns its
// rows. Any error means the row group must be scanned by the Arrow path.
func (s *fastScanner) rowGroup(ctx context.Context, rg *file.RowGroupReader, sum *checksum.Sum) (rows int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: decoder: %v", errNotFast, r)
		}
	}()
	n := rg.NumRows()
	if rg.NumColumns() != len(s.cols) {
		return 0, errNotFast
	}
	defer func() {
		for c := range s.cols {
			if pr := s.cols[c].pr; pr != nil {
				pr.Close() // its buffers back to the pool
				s.cols[c].pr = nil
			}
		}
	}()
	for c := range s.cols {
		pr, err := rg.GetColumnPageReader(c)
		if err != nil {
			return 0, err
		}
		s.cols[c].reset(pr)
	}
	var local checksum.Sum
	for done := int64(0); done < n; {
		k := int(min(n-done, scanBatch))
		s.acc = checksum.GrowU64(s.acc, k)
		acc := s.acc[:k]
		clear(acc)
		for c := range s.cols {
			if err := s.cols[c].fold(acc); err != nil {
				return 0, err
			}
		}
		local.AddFolds(acc)
		done += int64(k)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
	for c := range s.cols {
		if err := s.cols[c].finish(); err != nil {
			return 0, err
		}
	}
	sum.Add(local)
	return n, nil
}

// fastCol is the decoding state of one column chunk.
type fastCol struct {
	s        *fastScanner
	kind     fastKind
	seed     uint64
	maxDef   int16
	decWidth int // bytes of a decimal's canonical encoding (16, 32)
	flen     int // bytes of a FIXED_LEN_BYTE_ARRAY value
	enc      []byte
	pr       file.PageReader

	dict    []uint64 // value hashes of the dictionary entries
	hasDict bool

	// The current page: levels[:left] (nil when every value is present)
	// and hs (value hashes of the present values) from vpos on; or, for a
	// page of present values only in PLAIN (fixed width) or a dictionary
	// encoding (lazy), its values hashed as they are folded: raw from the
	// page's bytes, or the dictionary indices idx.
	levels []uint8
	hs     []uint64
	idx    []uint32
	lazy   lazyPage
	raw    []byte
	left   int
	vpos   int
	lpos   int
	levBuf []uint8
}

// lazyPage is how fold gets a page's value hashes.
type lazyPage uint8

const (
	lazyNone  lazyPage = iota // decoded into hs
	lazyPlain                 // PLAIN values of a fixed width in raw, hashed as folded
	lazyDict                  // dictionary indices in idx, looked up as folded
)

// lazyChunk is how many value hashes fold computes at a time from a lazy
// page before folding them (8 KiB of hashes, in the CPU's L1 cache): the
// page's hashes are never written out whole, which spared a page-sized
// buffer per column and its round trip through memory.
const lazyChunk = 1024

func (c *fastCol) reset(pr file.PageReader) {
	c.pr = pr
	c.hasDict, c.dict = false, c.dict[:0]
	c.levels, c.hs = nil, c.hs[:0]
	c.lazy, c.raw = lazyNone, nil
	c.left, c.vpos, c.lpos = 0, 0, 0
}

// lazyHashes writes the value hashes of the lazy page's values from on
// into out.
func (c *fastCol) lazyHashes(out []uint64, from int) error {
	if c.lazy == lazyPlain {
		return c.plain(out, c.raw[from*c.width():])
	}
	dict := c.dict
	for i, k := range c.idx[from : from+len(out)] {
		if int(k) >= len(dict) {
			return fmt.Errorf("%w: dictionary index %d out of range", errNotFast, k)
		}
		out[i] = dict[k]
	}
	return nil
}

// fold folds the next len(acc) rows' value hashes into acc.
func (c *fastCol) fold(acc []uint64) error {
	for len(acc) > 0 {
		if c.left == 0 {
			if err := c.nextPage(); err != nil {
				return err
			}
			continue
		}
		k := min(len(acc), c.left)
		a := acc[:k]
		switch {
		case c.lazy != lazyNone:
			buf := c.s.chunk[:]
			for j := 0; j < k; j += lazyChunk {
				h := buf[:min(lazyChunk, k-j)]
				if err := c.lazyHashes(h, c.vpos+j); err != nil {
					return err
				}
				checksum.FoldValues(a[j:j+len(h)], h)
			}
			c.vpos += k
		case c.levels == nil:
			checksum.FoldValues(a, c.hs[c.vpos:c.vpos+k])
			c.vpos += k
		default:
			lv := c.levels[c.lpos : c.lpos+k]
			hs := c.hs
			vp := c.vpos
			for i, l := range lv {
				h := checksum.NullHash
				if l != 0 {
					h = hs[vp]
					vp++
				}
				a[i] = checksum.FoldValue(a[i], h)
			}
			c.vpos = vp
			c.lpos += k
		}
		c.left -= k
		acc = acc[k:]
	}
	return nil
}

// finish checks that the column chunk holds no more values than its row
// group's rows.
func (c *fastCol) finish() error {
	if c.left != 0 {
		return fmt.Errorf("%w: column holds more values than rows", errNotFast)
	}
	for c.pr.Next() {
		switch p := c.pr.Page().(type) {
		case *file.DataPageV1:
			if p.NumValues() > 0 {
				return fmt.Errorf("%w: column holds more values than rows", errNotFast)
			}
		case *file.DataPageV2:
			if p.NumValues() > 0 {
				return fmt.Errorf("%w: column holds more values than rows", errNotFast)
			}
		default:
			return fmt.Errorf("%w: a page of another type", errNotFast)
		}
	}
	return c.pr.Err()
}

// nextPage decodes the next data page (after a dictionary page, if one
// comes first).
func (c *fastCol) nextPage() error {
	if !c.pr.Next() {
		if err := c.pr.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%w: column holds fewer values than rows", errNotFast)
	}
	var (
		data       []byte
		nv         int
		enc        parquet.Encoding
		levels     []byte // the definition levels' RLE runs
		haveLevels bool
	)
	switch p := c.pr.Page().(type) {
	case *file.DictionaryPage:
		if c.hasDict {
			return fmt.Errorf("%w: a second dictionary page", errNotFast)
		}
		if e := parquet.Encoding(p.Encoding()); e != parquet.Encodings.Plain && e != parquet.Encodings.PlainDict {
			return fmt.Errorf("%w: dictionary page encoding %s", errNotFast, e)
		}
		if err := c.decodeDict(p.Data(), int(p.NumValues())); err != nil {
			return err
		}
		c.hasDict = true
		return nil
	case *file.DataPageV1:
		data, nv, enc = p.Data(), int(p.NumValues()), parquet.Encoding(p.Encoding())
		if c.maxDef > 0 {
			if p.DefinitionLevelEncoding() != parquet.Encodings.RLE || len(data) < 4 {
				return fmt.Errorf("%w: definition levels not RLE", errNotFast)
			}
			n := int(binary.LittleEndian.Uint32(data))
			if n < 0 || n > len(data)-4 {
				return fmt.Errorf("%w: definition levels overrun the page", errNotFast)
			}
			levels, data, haveLevels = data[4:4+n], data[4+n:], true
		}
	case *file.DataPageV2:
		data, nv, enc = p.Data(), int(p.NumValues()), parquet.Encoding(p.Encoding())
		if int(p.NumRows()) != nv {
			return fmt.Errorf("%w: DataPage v2 rows and values differ", errNotFast)
		}
		rl, dl := int(p.RepetitionLevelByteLen()), int(p.DefinitionLevelByteLen())
		if rl < 0 || dl < 0 || rl+dl > len(data) || rl != 0 {
			return fmt.Errorf("%w: DataPage v2 level lengths", errNotFast)
		}
		if c.maxDef > 0 {
			levels, haveLevels = data[:dl], true
		}
		data = data[rl+dl:]
	default:
		return fmt.Errorf("%w: page of an unknown type", errNotFast)
	}
	if nv < 0 || nv > maxFastPageValues {
		return fmt.Errorf("%w: page of %d values", errNotFast, nv)
	}
	present := nv
	c.levels = nil
	if haveLevels && nv > 0 && !allDefined(levels, nv) {
		if cap(c.levBuf) < nv+8 {
			c.levBuf = make([]uint8, nv+8)
		}
		lv := c.levBuf[:nv]
		if err := rleLevels(lv, levels); err != nil {
			return err
		}
		present = 0
		for _, l := range lv {
			present += int(l)
		}
		if present != nv {
			c.levels = lv
		}
	}
	c.left, c.vpos, c.lpos = nv, 0, 0
	c.lazy = lazyNone
	if c.levels == nil && nv > 0 {
		switch w := c.width(); {
		case enc == parquet.Encodings.Plain && w > 0 && c.kind != fkBool:
			if len(data)/w < nv {
				return fmt.Errorf("%w: page too short", errNotFast)
			}
			c.lazy, c.raw = lazyPlain, data[:w*nv:w*nv]
			return nil
		case enc == parquet.Encodings.PlainDict || enc == parquet.Encodings.RLEDict:
			if err := c.dictIndexes(nv, data); err != nil {
				return err
			}
			c.lazy = lazyDict
			return nil
		}
	}
	c.hs = checksum.GrowU64(c.hs, present)
	return c.decodeValues(c.hs[:present], data[:len(data):len(data)], enc)
}

// decodeValues writes the value hashes of the len(out) values of a page.
func (c *fastCol) decodeValues(out []uint64, data []byte, enc parquet.Encoding) error {
	switch enc {
	case parquet.Encodings.Plain:
		return c.plain(out, data)
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		return c.dictIndices(out, data)
	case parquet.Encodings.DeltaBinaryPacked:
		return c.deltaInts(out, data)
	case parquet.Encodings.DeltaLengthByteArray:
		return c.deltaLengthByteArray(out, data)
	case parquet.Encodings.DeltaByteArray:
		if c.kind != fkBytes {
			return fmt.Errorf("%w: DELTA_BYTE_ARRAY of this type", errNotFast)
		}
		return c.deltaByteArray(out, data)
	case parquet.Encodings.RLE:
		return c.rleBools(out, data)
	case parquet.Encodings.ByteStreamSplit:
		return c.byteStreamSplit(out, data)
	}
	return fmt.Errorf("%w: encoding %s", errNotFast, enc)
}

// hash64 is the value hash of a physical value given in 64 bits (a 32-bit
// one zero-extended).
func (c *fastCol) hash64(x uint64) uint64 {
	switch c.kind {
	case fkInt64:
		return checksum.FixedHash(x, c.seed)
	case fkDouble:
		if f := math.Float64frombits(x); f != f {
			x = 0x7ff8000000000000
		}
		return checksum.FixedHash(x, c.seed)
	case fkDec64:
		return c.decHash(int64(x))
	case fkDec32:
		return c.decHash(int64(int32(uint32(x))))
	case fkDecFixed, fkFixed:
		var b [8]byte // the value's bytes in order (byte k in bits 8k of x)
		binary.LittleEndian.PutUint64(b[:], x)
		return c.fixedBytesHash(b[:c.flen])
	}
	return checksum.FixedHash(c.kind.canon32(uint32(x)), c.seed)
}
