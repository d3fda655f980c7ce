package staging

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/parquet-go/bitpack"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/zeebo/xxh3"
)

// The fast scan of an existing file: for a flat schema of primitive
// columns (the common case), the pages of a row group are decompressed by
// Arrow's page reader and decoded here, straight into value hashes folded
// into the rows' accumulators, without building Arrow arrays. It computes
// the same colsum128 as colHasher over Arrow's records (the definition in
// doc.go; FuzzAddParquetFile compares them on arbitrary files). Anything
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
func newFastScanner(md *metadata.FileMetaData, canon *canonSchema) *fastScanner {
	sc := md.Schema
	if sc.NumColumns() != canon.arrow.NumFields() {
		return nil
	}
	s := &fastScanner{cols: make([]fastCol, sc.NumColumns())}
	for c := range s.cols {
		col := sc.Column(c)
		if len(col.ColumnPath()) != 1 || col.MaxRepetitionLevel() != 0 || col.MaxDefinitionLevel() > 1 {
			return nil
		}
		dt := canon.arrow.Field(c).Type
		k := fastKindOf(col.PhysicalType(), dt)
		fc := fastCol{s: s, kind: k, seed: colSeed(c), maxDef: col.MaxDefinitionLevel()}
		switch k {
		case 0:
			return nil
		case fkDec32, fkDec64, fkDecFixed:
			fc.decWidth = decimalWidth(dt)
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
	c.enc = appendDecimalInt64(c.enc[:0], c.decWidth, v)
	return xxh3.HashSeed(c.enc, c.seed)
}

// fixedBytesHash is the value hash of a FIXED_LEN_BYTE_ARRAY value.
func (c *fastCol) fixedBytesHash(b []byte) uint64 {
	if c.kind == fkFixed {
		return xxh3.HashSeed(b, c.seed)
	}
	c.enc = appendDecimalBE(c.enc[:0], c.decWidth, b)
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
}

// rowGroup adds the row hashes of row group rg to sum and returns its
// rows. Any error means the row group must be scanned by the Arrow path.
func (s *fastScanner) rowGroup(ctx context.Context, rg *file.RowGroupReader, sum *rowSum) (rows int64, err error) {
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
	var local rowSum
	for done := int64(0); done < n; {
		k := int(min(n-done, scanBatch))
		s.acc = growU64(s.acc, k)
		acc := s.acc[:k]
		clear(acc)
		for c := range s.cols {
			if err := s.cols[c].fold(acc); err != nil {
				return 0, err
			}
		}
		for _, a := range acc {
			local.addFold(a)
		}
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
	sum.add(local)
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
	// and hs (value hashes of the present values) from vpos on.
	levels []uint8
	hs     []uint64
	idx    []uint32
	left   int
	vpos   int
	lpos   int
	levBuf []uint8
}

func (c *fastCol) reset(pr file.PageReader) {
	c.pr = pr
	c.hasDict, c.dict = false, c.dict[:0]
	c.levels, c.hs = nil, c.hs[:0]
	c.left, c.vpos, c.lpos = 0, 0, 0
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
		if c.levels == nil {
			hs := c.hs[c.vpos : c.vpos+k]
			for i, h := range hs {
				a[i] = foldValue(a[i], h)
			}
			c.vpos += k
		} else {
			lv := c.levels[c.lpos : c.lpos+k]
			hs := c.hs
			vp := c.vpos
			for i, l := range lv {
				h := nullHash
				if l != 0 {
					h = hs[vp]
					vp++
				}
				a[i] = foldValue(a[i], h)
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
	c.hs = growU64(c.hs, present)
	if err := c.decodeValues(c.hs[:present], data[:len(data):len(data)], enc); err != nil {
		return err
	}
	c.left, c.vpos, c.lpos = nv, 0, 0
	return nil
}

// decodeDict hashes the n entries of a PLAIN dictionary page.
func (c *fastCol) decodeDict(data []byte, n int) error {
	per := c.width() // bytes an entry takes at least: n is bounded by the page
	switch c.kind {
	case fkBytes:
		per = 4
	case fkBool:
		per = 1 // (8 entries a byte; 1 keeps the bound simple)
	}
	if n < 0 || n > len(data)/per+8 {
		return fmt.Errorf("%w: dictionary of %d entries", errNotFast, n)
	}
	c.dict = growU64(c.dict, n)
	return c.plain(c.dict, data)
}

// decodeValues writes the value hashes of the len(out) values of a page.
func (c *fastCol) decodeValues(out []uint64, data []byte, enc parquet.Encoding) error {
	switch enc {
	case parquet.Encodings.Plain:
		return c.plain(out, data)
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		if !c.hasDict {
			return fmt.Errorf("%w: dictionary-encoded page without a dictionary", errNotFast)
		}
		if len(out) == 0 {
			return nil
		}
		if len(data) < 1 || data[0] > 32 {
			return fmt.Errorf("%w: dictionary index width", errNotFast)
		}
		if cap(c.idx) < len(out)+8 {
			c.idx = make([]uint32, len(out)+8)
		}
		idx := c.idx[:len(out)]
		if err := c.s.rleIndices(idx, data[1:], uint(data[0])); err != nil {
			return err
		}
		dict := c.dict
		for i, k := range idx {
			if int(k) >= len(dict) {
				return fmt.Errorf("%w: dictionary index %d out of range", errNotFast, k)
			}
			out[i] = dict[k]
		}
		return nil
	case parquet.Encodings.DeltaBinaryPacked:
		return c.deltaInts(out, data)
	case parquet.Encodings.DeltaLengthByteArray:
		if c.kind != fkBytes || !deltaHeaderFits(data) {
			return fmt.Errorf("%w: DELTA_LENGTH_BYTE_ARRAY", errNotFast)
		}
		s := c.s
		var err error
		s.bytes, s.offs, err = (&delta.LengthByteArrayEncoding{}).DecodeByteArray(s.bytes[:0], data, s.offs[:0])
		if err != nil {
			return fmt.Errorf("%w: %v", errNotFast, err)
		}
		if len(s.offs) < len(out)+1 {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		b, offs := s.bytes, s.offs
		for i := range out {
			out[i] = xxh3.HashSeed(b[offs[i]:offs[i+1]], c.seed)
		}
		return nil
	case parquet.Encodings.DeltaByteArray:
		if c.kind != fkBytes {
			return fmt.Errorf("%w: DELTA_BYTE_ARRAY of this type", errNotFast)
		}
		return c.deltaByteArray(out, data)
	case parquet.Encodings.RLE:
		if c.kind != fkBool || len(data) < 4 {
			return fmt.Errorf("%w: RLE outside booleans", errNotFast)
		}
		n := int(binary.LittleEndian.Uint32(data))
		if n < 0 || n > len(data)-4 {
			return fmt.Errorf("%w: RLE length overruns the page", errNotFast)
		}
		s := c.s
		if cap(s.bools) < len(out) {
			s.bools = make([]uint8, len(out))
		}
		bs := s.bools[:len(out)]
		if err := rleLevels(bs, data[4:4+n]); err != nil {
			return err
		}
		h0, h1 := fixedHash(0, c.seed), fixedHash(1, c.seed)
		for i, b := range bs {
			out[i] = h0
			if b != 0 {
				out[i] = h1
			}
		}
		return nil
	case parquet.Encodings.ByteStreamSplit:
		w := c.width()
		if w == 0 || w > 8 || len(out) == 0 {
			return fmt.Errorf("%w: BYTE_STREAM_SPLIT of this type", errNotFast)
		}
		if len(data)%w != 0 || len(data)/w < len(out) {
			return fmt.Errorf("%w: BYTE_STREAM_SPLIT size", errNotFast)
		}
		stride := len(data) / w
		for i := range out {
			var x uint64
			for b := 0; b < w; b++ {
				x |= uint64(data[b*stride+i]) << (8 * b)
			}
			out[i] = c.hash64(x)
		}
		return nil
	}
	return fmt.Errorf("%w: encoding %s", errNotFast, enc)
}

// hash64 is the value hash of a physical value given in 64 bits (a 32-bit
// one zero-extended).
func (c *fastCol) hash64(x uint64) uint64 {
	switch c.kind {
	case fkInt64:
		return fixedHash(x, c.seed)
	case fkDouble:
		if f := math.Float64frombits(x); f != f {
			x = 0x7ff8000000000000
		}
		return fixedHash(x, c.seed)
	case fkDec64:
		return c.decHash(int64(x))
	case fkDec32:
		return c.decHash(int64(int32(uint32(x))))
	case fkDecFixed, fkFixed:
		var b [8]byte // the value's bytes in order (byte k in bits 8k of x)
		binary.LittleEndian.PutUint64(b[:], x)
		return c.fixedBytesHash(b[:c.flen])
	}
	return fixedHash(c.kind.canon32(uint32(x)), c.seed)
}

// plain writes the value hashes of len(out) PLAIN values.
func (c *fastCol) plain(out []uint64, data []byte) error {
	seed := c.seed
	switch c.kind {
	case fkBool:
		if len(data)*8 < len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		h0, h1 := fixedHash(0, seed), fixedHash(1, seed)
		for i := range out {
			out[i] = h0
			if data[i>>3]>>(i&7)&1 != 0 {
				out[i] = h1
			}
		}
	case fkInt64:
		if len(data) < 8*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = fixedHash(binary.LittleEndian.Uint64(data[8*i:]), seed)
		}
	case fkDouble:
		if len(data) < 8*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			x := binary.LittleEndian.Uint64(data[8*i:])
			if f := math.Float64frombits(x); f != f {
				x = 0x7ff8000000000000
			}
			out[i] = fixedHash(x, seed)
		}
	case fkInt32:
		if len(data) < 4*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = fixedHash(uint64(int64(int32(binary.LittleEndian.Uint32(data[4*i:])))), seed)
		}
	case fkDec32:
		if len(data) < 4*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = c.decHash(int64(int32(binary.LittleEndian.Uint32(data[4*i:]))))
		}
	case fkDec64:
		if len(data) < 8*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = c.decHash(int64(binary.LittleEndian.Uint64(data[8*i:])))
		}
	case fkInt96:
		if len(data)/12 < len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = fixedHash(uint64(int96Micros(data[12*i:12*i+12])), seed)
		}
	case fkDecFixed, fkFixed:
		w := c.flen
		if len(data)/w < len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		for i := range out {
			out[i] = c.fixedBytesHash(data[w*i : w*i+w])
		}
	case fkBytes:
		p := 0
		for i := range out {
			if len(data)-p < 4 {
				return fmt.Errorf("%w: page too short", errNotFast)
			}
			n := int(binary.LittleEndian.Uint32(data[p:]))
			p += 4
			if n < 0 || n > len(data)-p {
				return fmt.Errorf("%w: page too short", errNotFast)
			}
			out[i] = xxh3.HashSeed(data[p:p+n], seed)
			p += n
		}
	default: // the other 32-bit kinds
		if len(data) < 4*len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		k := c.kind
		for i := range out {
			out[i] = fixedHash(k.canon32(binary.LittleEndian.Uint32(data[4*i:])), seed)
		}
	}
	return nil
}

// deltaInts writes the value hashes of len(out) DELTA_BINARY_PACKED
// integers.
func (c *fastCol) deltaInts(out []uint64, data []byte) error {
	w := c.width()
	switch c.kind {
	case fkBool, fkBytes, fkFloat, fkDouble, fkDecFixed, fkFixed, fkInt96:
		return fmt.Errorf("%w: DELTA_BINARY_PACKED of this type", errNotFast)
	}
	if !deltaHeaderFits(data) {
		return fmt.Errorf("%w: DELTA_BINARY_PACKED header", errNotFast)
	}
	var err error
	s := c.s
	if w == 8 {
		s.i64, err = (&delta.BinaryPackedEncoding{}).DecodeInt64(s.i64[:0], data)
		if err != nil {
			return fmt.Errorf("%w: %v", errNotFast, err)
		}
		if len(s.i64) < len(out) {
			return fmt.Errorf("%w: page too short", errNotFast)
		}
		if c.kind != fkInt64 {
			for i := range out {
				out[i] = c.hash64(uint64(s.i64[i]))
			}
			return nil
		}
		for i := range out {
			out[i] = fixedHash(uint64(s.i64[i]), c.seed)
		}
		return nil
	}
	s.i32, err = (&delta.BinaryPackedEncoding{}).DecodeInt32(s.i32[:0], data)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotFast, err)
	}
	if len(s.i32) < len(out) {
		return fmt.Errorf("%w: page too short", errNotFast)
	}
	for i := range out {
		out[i] = c.hash64(uint64(uint32(s.i32[i])))
	}
	return nil
}

// deltaHeaderFits: the header of DELTA_BINARY_PACKED data (block size,
// miniblocks per block, value count), which bounds what its decoder
// allocates, is within the fast scan's bounds.
func deltaHeaderFits(data []byte) bool {
	for p, i := 0, 0; i < 3; i++ {
		v, n := binary.Uvarint(data[p:])
		if n <= 0 || v > maxFastPageValues {
			return false
		}
		p += n
	}
	return true
}

// allDefined: the definition levels (bit width 1) of a page of n values
// begin with one run of n or more 1s: every value is present (what
// writers that mark every column optional write for columns without
// nulls).
func allDefined(src []byte, n int) bool {
	h, k := binary.Uvarint(src)
	return k > 0 && h&1 == 0 && h>>1 >= uint64(n) && len(src) > k && src[k] == 1
}

// rleLevels decodes len(dst) values of bit width 1 (definition levels,
// booleans) of the RLE/bit-packed hybrid encoding.
func rleLevels(dst []uint8, src []byte) error {
	for len(dst) > 0 {
		h, n := binary.Uvarint(src)
		if n <= 0 {
			return fmt.Errorf("%w: levels end early", errNotFast)
		}
		src = src[n:]
		if h&1 == 0 { // a run of one value
			cnt := h >> 1
			if len(src) < 1 {
				return fmt.Errorf("%w: levels end early", errNotFast)
			}
			v := src[0]
			src = src[1:]
			if v > 1 {
				return fmt.Errorf("%w: level %d", errNotFast, v)
			}
			k := int(min(cnt, uint64(len(dst))))
			d := dst[:k]
			if k > 0 {
				d[0] = v
				for f := 1; f < k; f *= 2 {
					copy(d[f:], d[:f])
				}
			}
			dst = dst[k:]
			continue
		}
		groups := h >> 1 // of 8 values, one byte each
		if groups > uint64(len(src)) {
			groups = uint64(len(src)) // what is there; the loop fails if too few
			if groups == 0 {
				return fmt.Errorf("%w: levels end early", errNotFast)
			}
		}
		for _, b := range src[:groups] {
			if len(dst) >= 8 {
				d := dst[:8]
				d[0], d[1], d[2], d[3] = b&1, b>>1&1, b>>2&1, b>>3&1
				d[4], d[5], d[6], d[7] = b>>4&1, b>>5&1, b>>6&1, b>>7
				dst = dst[8:]
				continue
			}
			for i := range dst {
				dst[i] = b >> i & 1
			}
			dst = dst[:0]
			break
		}
		src = src[groups:]
	}
	return nil
}

// rleIndices decodes len(dst) values of bit width w (0 to 32) of the
// RLE/bit-packed hybrid encoding (dictionary indices); cap(dst) must leave
// 8 values of room for a last group.
func (s *fastScanner) rleIndices(dst []uint32, src []byte, w uint) error {
	bytesPerGroup := int(w) // 8 values of w bits
	for len(dst) > 0 {
		h, n := binary.Uvarint(src)
		if n <= 0 {
			return fmt.Errorf("%w: indices end early", errNotFast)
		}
		src = src[n:]
		if h&1 == 0 {
			cnt := h >> 1
			vb := int(w+7) / 8
			if len(src) < vb {
				return fmt.Errorf("%w: indices end early", errNotFast)
			}
			var v uint32
			for i := 0; i < vb; i++ {
				v |= uint32(src[i]) << (8 * i)
			}
			src = src[vb:]
			k := int(min(cnt, uint64(len(dst))))
			d := dst[:k]
			for i := range d {
				d[i] = v
			}
			dst = dst[k:]
			continue
		}
		groups := int(min(h>>1, uint64(len(dst)+7)/8))
		if w == 0 {
			k := min(8*groups, len(dst))
			clear(dst[:k])
			dst = dst[k:]
			continue
		}
		nb := groups * bytesPerGroup
		if nb > len(src) {
			return fmt.Errorf("%w: indices end early", errNotFast)
		}
		var in []byte
		if len(src)-nb < bitpack.PaddingInt32 {
			if cap(s.pad) < nb+bitpack.PaddingInt32 {
				s.pad = make([]byte, nb+bitpack.PaddingInt32)
			}
			in = s.pad[:nb+bitpack.PaddingInt32]
			copy(in, src[:nb])
			clear(in[nb:])
		} else {
			in = src[:nb+bitpack.PaddingInt32]
		}
		bitpack.Unpack(dst[:8*groups], in[:nb:nb+bitpack.PaddingInt32], w)
		// skip the run: the header said h>>1 groups; any beyond what is
		// needed are not read.
		skip := int(h>>1) * bytesPerGroup
		if skip > len(src) || skip < 0 {
			skip = nb
		}
		src = src[skip:]
		dst = dst[min(8*groups, len(dst)):]
	}
	return nil
}

// deltaByteArray writes the value hashes of len(out) DELTA_BYTE_ARRAY
// values: prefix lengths, suffix lengths (both DELTA_BINARY_PACKED), then
// the suffixes; each value is the previous one's prefix and its suffix,
// rebuilt in a buffer no larger than the page.
func (c *fastCol) deltaByteArray(out []uint64, data []byte) error {
	s := c.s
	var err error
	var rest []byte
	if s.prefixes, rest, err = deltaLengths(s.prefixes[:0], data); err != nil {
		return err
	}
	if s.suffixes, rest, err = deltaLengths(s.suffixes[:0], rest); err != nil {
		return err
	}
	if len(s.prefixes) != len(s.suffixes) || len(s.prefixes) < len(out) {
		return fmt.Errorf("%w: DELTA_BYTE_ARRAY lengths", errNotFast)
	}
	prev, cur := s.bytes[:0], s.bytes2[:0]
	for i := range out {
		p, n := s.prefixes[i], s.suffixes[i]
		if p > int64(len(prev)) || n > int64(len(rest)) {
			return fmt.Errorf("%w: DELTA_BYTE_ARRAY value overruns", errNotFast)
		}
		cur = append(append(cur[:0], prev[:p]...), rest[:n]...)
		rest = rest[n:]
		out[i] = xxh3.HashSeed(cur, c.seed)
		prev, cur = cur, prev
	}
	s.bytes, s.bytes2 = prev, cur
	return nil
}

// deltaLengths decodes DELTA_BINARY_PACKED lengths (each 0 to 2^31-1)
// into dst and returns the bytes after them.
func deltaLengths(dst []int64, src []byte) ([]int64, []byte, error) {
	bad := fmt.Errorf("%w: DELTA_BINARY_PACKED lengths", errNotFast)
	var hdr [3]uint64
	for i := range hdr {
		v, n := binary.Uvarint(src)
		if n <= 0 || v > maxFastPageValues {
			return dst, nil, bad
		}
		hdr[i], src = v, src[n:]
	}
	blockSize, miniblocks, total := int(hdr[0]), int(hdr[1]), int(hdr[2])
	if blockSize == 0 || miniblocks == 0 || blockSize%miniblocks != 0 || (blockSize/miniblocks)%8 != 0 {
		return dst, nil, bad
	}
	first, n := binary.Varint(src)
	if n <= 0 {
		return dst, nil, bad
	}
	src = src[n:]
	if total == 0 {
		return dst, src, nil
	}
	per := blockSize / miniblocks
	v := first
	dst = append(dst, v)
	for len(dst) < total {
		minDelta, n := binary.Varint(src)
		if n <= 0 || len(src) < n+miniblocks {
			return dst, nil, bad
		}
		widths := src[n : n+miniblocks]
		src = src[n+miniblocks:]
		for _, w := range widths {
			if len(dst) >= total {
				break // unused miniblocks have no bytes
			}
			if w > 32 {
				return dst, nil, bad
			}
			size := per * int(w) / 8
			if len(src) < size {
				return dst, nil, bad
			}
			mb := src[:size]
			src = src[size:]
			var acc uint64
			var have uint
			pos := 0
			for k := 0; k < per && len(dst) < total; k++ {
				for have < uint(w) {
					acc |= uint64(mb[pos]) << have
					pos++
					have += 8
				}
				d := acc & (1<<w - 1)
				acc >>= w
				have -= uint(w)
				v += minDelta + int64(d)
				if v < 0 || v > math.MaxInt32 {
					return dst, nil, bad
				}
				dst = append(dst, v)
			}
		}
	}
	if first < 0 || first > math.MaxInt32 {
		return dst, nil, bad
	}
	return dst, src, nil
}
