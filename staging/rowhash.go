package staging

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	pq "github.com/parquet-go/parquet-go"
	"github.com/zeebo/xxh3"
)

// Value tags of the canonical row encoding (see doc.go).
const (
	tagNull      byte = 0x00
	tagBool      byte = 0x01
	tagInt       byte = 0x02
	tagUint      byte = 0x03
	tagFloat32   byte = 0x04
	tagFloat64   byte = 0x05
	tagString    byte = 0x06
	tagBinary    byte = 0x07
	tagDate      byte = 0x08
	tagTime      byte = 0x09
	tagTimestamp byte = 0x0a
	tagDecimal   byte = 0x0b
	tagList      byte = 0x0c
	tagStruct    byte = 0x0d
	tagMap       byte = 0x0e
	tagFloat16   byte = 0x0f
)

// rowSum is the order-independent sum (mod 2^128) of row hashes.
type rowSum struct{ hi, lo uint64 }

func (s *rowSum) addRow(enc []byte) {
	h := xxh3.Hash128(enc)
	var c uint64
	s.lo, c = bits.Add64(s.lo, h.Lo, 0)
	s.hi, _ = bits.Add64(s.hi, h.Hi, c)
}

func (s *rowSum) add(o rowSum) {
	var c uint64
	s.lo, c = bits.Add64(s.lo, o.lo, 0)
	s.hi, _ = bits.Add64(s.hi, o.hi, c)
}

// rowsumChecksum folds the schema, the row count and the row sum into the
// generation's rowsum128 content checksum.
func rowsumChecksum(schema string, rows int64, s rowSum) string {
	return foldChecksum(ChecksumRowSum, "pswap/rowsum128/v1", schema, rows, s)
}

func appendInt(b []byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, tagInt), uint64(v))
}

func appendUint(b []byte, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, tagUint), v)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, tagBool, 1)
	}
	return append(b, tagBool, 0)
}

func appendFloat32(b []byte, v float32) []byte {
	u := math.Float32bits(v)
	if v != v {
		u = 0x7fc00000
	}
	return binary.LittleEndian.AppendUint32(append(b, tagFloat32), u)
}

func appendFloat64(b []byte, v float64) []byte {
	u := math.Float64bits(v)
	if v != v {
		u = 0x7ff8000000000000
	}
	return binary.LittleEndian.AppendUint64(append(b, tagFloat64), u)
}

func appendBytes(b []byte, tag byte, v []byte) []byte {
	b = binary.AppendUvarint(append(b, tag), uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, v string) []byte {
	b = binary.AppendUvarint(append(b, tagString), uint64(len(v)))
	return append(b, v...)
}

func appendDate(b []byte, days int32) []byte {
	return binary.LittleEndian.AppendUint32(append(b, tagDate), uint32(days))
}

func appendTagged64(b []byte, tag byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, tag), uint64(v))
}

// appendDecimal appends the unscaled value as width bytes (16 or 32) of
// little-endian two's complement. be is the value's big-endian two's
// complement bytes, of any length.
func appendDecimalBE(b []byte, width int, be []byte) []byte {
	b = append(b, tagDecimal)
	var fill byte
	if len(be) > 0 && be[0]&0x80 != 0 {
		fill = 0xff
	}
	for i := 0; i < width; i++ {
		j := len(be) - 1 - i
		if j >= 0 {
			b = append(b, be[j])
		} else {
			b = append(b, fill)
		}
	}
	return b
}

func appendDecimalInt64(b []byte, width int, v int64) []byte {
	b = binary.LittleEndian.AppendUint64(append(b, tagDecimal), uint64(v))
	fill := uint64(0)
	if v < 0 {
		fill = math.MaxUint64
	}
	for i := 8; i < width; i += 8 {
		b = binary.LittleEndian.AppendUint64(b, fill)
	}
	return b
}

func appendDecimal128(b []byte, width int, v decimal128.Num) []byte {
	b = append(b, tagDecimal)
	b = binary.LittleEndian.AppendUint64(b, v.LowBits())
	b = binary.LittleEndian.AppendUint64(b, uint64(v.HighBits()))
	fill := uint64(0)
	if v.Sign() < 0 {
		fill = math.MaxUint64
	}
	for i := 16; i < width; i += 8 {
		b = binary.LittleEndian.AppendUint64(b, fill)
	}
	return b
}

func appendDecimal256(b []byte, width int, v decimal256.Num) []byte {
	b = append(b, tagDecimal)
	a := v.Array() // little-endian 64-bit words
	for i := 0; i < width/8; i++ {
		b = binary.LittleEndian.AppendUint64(b, a[i])
	}
	return b
}

func decimalWidth(dt arrow.DataType) int {
	if dt.ID() == arrow.DECIMAL256 {
		return 32
	}
	return 16
}

// unitFactor converts a value in unit from to unit to: multiply by mul or
// divide by div (one of them is 1).
func unitFactor(from, to arrow.TimeUnit) (mul, div int64) {
	// Multiplier is the length of one unit (a time.Duration in nanoseconds).
	f, t := from.Multiplier(), to.Multiplier()
	if f >= t {
		return int64(f / t), 1
	}
	return 1, int64(t / f)
}

func convertUnit(v, mul, div int64) int64 {
	if div == 1 {
		return v * mul
	}
	q := v / div
	if v%div != 0 && v < 0 {
		q--
	}
	return q
}

// arrowEnc appends the canonical encoding of row i of one column.
type arrowEnc func(b []byte, i int) []byte

// arrowEncoder returns the encoder for arr, whose values are encoded as
// values of the canonical type canon (the type the column has once written
// to Parquet and read back).
func arrowEncoder(arr arrow.Array, canon arrow.DataType) (arrowEnc, error) {
	enc, err := arrowValueEncoder(arr, canon)
	if err != nil {
		return nil, err
	}
	if arr.NullN() == 0 {
		return enc, nil
	}
	return func(b []byte, i int) []byte {
		if arr.IsNull(i) {
			return append(b, tagNull)
		}
		return enc(b, i)
	}, nil
}

func unsupported(arr arrow.DataType, canon arrow.DataType) error {
	if arrow.TypeEqual(arr, canon) {
		return fmt.Errorf("%w: %s", ErrUnsupported, arr)
	}
	return fmt.Errorf("%w: %s (stored as %s)", ErrUnsupported, arr, canon)
}

func arrowValueEncoder(arr arrow.Array, canon arrow.DataType) (arrowEnc, error) {
	switch a := arr.(type) {
	case *array.Null:
		return func(b []byte, i int) []byte { return append(b, tagNull) }, nil
	case *array.Boolean:
		return func(b []byte, i int) []byte { return appendBool(b, a.Value(i)) }, nil
	case *array.Int8:
		return func(b []byte, i int) []byte { return appendInt(b, int64(a.Value(i))) }, nil
	case *array.Int16:
		return func(b []byte, i int) []byte { return appendInt(b, int64(a.Value(i))) }, nil
	case *array.Int32:
		return func(b []byte, i int) []byte { return appendInt(b, int64(a.Value(i))) }, nil
	case *array.Int64:
		return func(b []byte, i int) []byte { return appendInt(b, a.Value(i)) }, nil
	case *array.Uint8:
		return func(b []byte, i int) []byte { return appendUint(b, uint64(a.Value(i))) }, nil
	case *array.Uint16:
		return func(b []byte, i int) []byte { return appendUint(b, uint64(a.Value(i))) }, nil
	case *array.Uint32:
		return func(b []byte, i int) []byte { return appendUint(b, uint64(a.Value(i))) }, nil
	case *array.Uint64:
		return func(b []byte, i int) []byte { return appendUint(b, a.Value(i)) }, nil
	case *array.Float32:
		return func(b []byte, i int) []byte { return appendFloat32(b, a.Value(i)) }, nil
	case *array.Float64:
		return func(b []byte, i int) []byte { return appendFloat64(b, a.Value(i)) }, nil
	case *array.String:
		return func(b []byte, i int) []byte { return appendString(b, a.Value(i)) }, nil
	case *array.LargeString:
		return func(b []byte, i int) []byte { return appendString(b, a.Value(i)) }, nil
	case *array.Binary:
		return func(b []byte, i int) []byte { return appendBytes(b, tagBinary, a.Value(i)) }, nil
	case *array.LargeBinary:
		return func(b []byte, i int) []byte { return appendBytes(b, tagBinary, a.Value(i)) }, nil
	case *array.FixedSizeBinary:
		return func(b []byte, i int) []byte { return appendBytes(b, tagBinary, a.Value(i)) }, nil
	case *array.Date32:
		return func(b []byte, i int) []byte { return appendDate(b, int32(a.Value(i))) }, nil
	case *array.Date64:
		return func(b []byte, i int) []byte {
			return appendDate(b, int32(convertUnit(int64(a.Value(i)), 1, 86_400_000)))
		}, nil
	case *array.Time32:
		ct, ok := canonTimeUnit(canon)
		if !ok {
			return nil, unsupported(arr.DataType(), canon)
		}
		mul, div := unitFactor(a.DataType().(*arrow.Time32Type).Unit, ct)
		return func(b []byte, i int) []byte {
			return appendTagged64(b, tagTime, convertUnit(int64(a.Value(i)), mul, div))
		}, nil
	case *array.Time64:
		ct, ok := canonTimeUnit(canon)
		if !ok {
			return nil, unsupported(arr.DataType(), canon)
		}
		mul, div := unitFactor(a.DataType().(*arrow.Time64Type).Unit, ct)
		return func(b []byte, i int) []byte {
			return appendTagged64(b, tagTime, convertUnit(int64(a.Value(i)), mul, div))
		}, nil
	case *array.Timestamp:
		ct, ok := canon.(*arrow.TimestampType)
		if !ok {
			return nil, unsupported(arr.DataType(), canon)
		}
		mul, div := unitFactor(a.DataType().(*arrow.TimestampType).Unit, ct.Unit)
		return func(b []byte, i int) []byte {
			return appendTagged64(b, tagTimestamp, convertUnit(int64(a.Value(i)), mul, div))
		}, nil
	case *array.Decimal128:
		w := decimalWidth(canon)
		return func(b []byte, i int) []byte { return appendDecimal128(b, w, a.Value(i)) }, nil
	case *array.Decimal256:
		w := decimalWidth(canon)
		return func(b []byte, i int) []byte { return appendDecimal256(b, w, a.Value(i)) }, nil
	case *array.Dictionary:
		values, err := arrowEncoder(a.Dictionary(), canon)
		if err != nil {
			return nil, err
		}
		return func(b []byte, i int) []byte { return values(b, a.GetValueIndex(i)) }, nil
	case *array.Float16:
		return func(b []byte, i int) []byte { return appendFloat16(b, a.Value(i).Uint16()) }, nil
	case *array.Map: // before array.ListLike: a map is a list of entries
		ct, ok := canon.(*arrow.MapType)
		if !ok {
			return nil, unsupported(arr.DataType(), canon)
		}
		keys, err := arrowEncoder(a.Keys(), ct.KeyType())
		if err != nil {
			return nil, err
		}
		items, err := arrowEncoder(a.Items(), ct.ItemType())
		if err != nil {
			return nil, err
		}
		var scratch []byte
		var ends []int
		var entries [][]byte
		return func(b []byte, i int) []byte {
			start, end := a.ValueOffsets(i)
			scratch, ends = scratch[:0], ends[:0]
			for j := int(start); j < int(end); j++ {
				scratch = items(keys(scratch, j), j)
				ends = append(ends, len(scratch))
			}
			b, entries = appendMapEntries(b, scratch, ends, entries[:0])
			return b
		}, nil
	case array.ListLike:
		elem, ok := listElem(canon)
		if !ok {
			return nil, unsupported(arr.DataType(), canon)
		}
		values, err := arrowEncoder(a.ListValues(), elem)
		if err != nil {
			return nil, err
		}
		return func(b []byte, i int) []byte {
			start, end := a.ValueOffsets(i)
			b = binary.AppendUvarint(append(b, tagList), uint64(end-start))
			for j := int(start); j < int(end); j++ {
				b = values(b, j)
			}
			return b
		}, nil
	case *array.Struct:
		ct, ok := canon.(*arrow.StructType)
		if !ok || ct.NumFields() != a.NumField() {
			return nil, unsupported(arr.DataType(), canon)
		}
		fields := make([]arrowEnc, a.NumField())
		for k := range fields {
			var err error
			if fields[k], err = arrowEncoder(a.Field(k), ct.Field(k).Type); err != nil {
				return nil, err
			}
		}
		return func(b []byte, i int) []byte {
			b = binary.AppendUvarint(append(b, tagStruct), uint64(len(fields)))
			for _, f := range fields {
				b = f(b, i)
			}
			return b
		}, nil
	}
	return nil, unsupported(arr.DataType(), canon)
}

// listElem is the element type of a canonical list type.
func listElem(dt arrow.DataType) (arrow.DataType, bool) {
	switch t := dt.(type) {
	case *arrow.ListType:
		return t.Elem(), true
	case *arrow.LargeListType:
		return t.Elem(), true
	case *arrow.FixedSizeListType:
		return t.Elem(), true
	}
	return nil, false
}

// appendFloat16 appends an IEEE 754 half-precision value given as its bits.
func appendFloat16(b []byte, u uint16) []byte {
	if u&0x7c00 == 0x7c00 && u&0x03ff != 0 { // NaN
		u = 0x7e00
	}
	return binary.LittleEndian.AppendUint16(append(b, tagFloat16), u)
}

// appendMapEntries appends a map value: its entry count, then its entries'
// encodings (key then value, each as uvarint length + bytes) sorted
// bytewise, so that the order in which a writer stored the entries does
// not count. enc holds the entries back to back; ends[k] is where entry k
// ends. entries is scratch space, returned for reuse.
func appendMapEntries(b []byte, enc []byte, ends []int, entries [][]byte) ([]byte, [][]byte) {
	start := 0
	for _, end := range ends {
		entries = append(entries, enc[start:end])
		start = end
	}
	slices.SortFunc(entries, bytesCompare)
	b = binary.AppendUvarint(append(b, tagMap), uint64(len(entries)))
	for _, e := range entries {
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	return b, entries
}

func canonTimeUnit(dt arrow.DataType) (arrow.TimeUnit, bool) {
	switch t := dt.(type) {
	case *arrow.Time32Type:
		return t.Unit, true
	case *arrow.Time64Type:
		return t.Unit, true
	}
	return 0, false
}

// pqEnc appends the canonical encoding of one non-null parquet-go value.
type pqEnc func(b []byte, v pq.Value) []byte

// parquetEncoder returns the encoder of a parquet-go leaf column whose
// canonical (Arrow) type is canon.
func parquetEncoder(leaf pq.Type, canon arrow.DataType) (pqEnc, error) {
	kind := leaf.Kind()
	switch t := canon.(type) {
	case *arrow.NullType:
		return func(b []byte, v pq.Value) []byte { return append(b, tagNull) }, nil
	case *arrow.BooleanType:
		return func(b []byte, v pq.Value) []byte { return appendBool(b, v.Boolean()) }, nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type:
		return func(b []byte, v pq.Value) []byte { return appendInt(b, int64(v.Int32())) }, nil
	case *arrow.Int64Type:
		return func(b []byte, v pq.Value) []byte { return appendInt(b, v.Int64()) }, nil
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type:
		return func(b []byte, v pq.Value) []byte { return appendUint(b, uint64(uint32(v.Int32()))) }, nil
	case *arrow.Uint64Type:
		return func(b []byte, v pq.Value) []byte { return appendUint(b, uint64(v.Int64())) }, nil
	case *arrow.Float32Type:
		return func(b []byte, v pq.Value) []byte { return appendFloat32(b, v.Float()) }, nil
	case *arrow.Float64Type:
		return func(b []byte, v pq.Value) []byte { return appendFloat64(b, v.Double()) }, nil
	case *arrow.StringType, *arrow.LargeStringType:
		return func(b []byte, v pq.Value) []byte { return appendBytes(b, tagString, v.ByteArray()) }, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.FixedSizeBinaryType:
		return func(b []byte, v pq.Value) []byte { return appendBytes(b, tagBinary, v.ByteArray()) }, nil
	case *arrow.Date32Type:
		return func(b []byte, v pq.Value) []byte { return appendDate(b, v.Int32()) }, nil
	case *arrow.Time32Type:
		return func(b []byte, v pq.Value) []byte { return appendTagged64(b, tagTime, int64(v.Int32())) }, nil
	case *arrow.Time64Type:
		return func(b []byte, v pq.Value) []byte { return appendTagged64(b, tagTime, v.Int64()) }, nil
	case *arrow.TimestampType:
		if kind != pq.Int64 {
			return nil, fmt.Errorf("%w: timestamp stored as %s", ErrUnsupported, kind)
		}
		return func(b []byte, v pq.Value) []byte { return appendTagged64(b, tagTimestamp, v.Int64()) }, nil
	case *arrow.Decimal128Type, *arrow.Decimal256Type:
		w := decimalWidth(t)
		switch kind {
		case pq.Int32:
			return func(b []byte, v pq.Value) []byte { return appendDecimalInt64(b, w, int64(v.Int32())) }, nil
		case pq.Int64:
			return func(b []byte, v pq.Value) []byte { return appendDecimalInt64(b, w, v.Int64()) }, nil
		case pq.ByteArray, pq.FixedLenByteArray:
			return func(b []byte, v pq.Value) []byte { return appendDecimalBE(b, w, v.ByteArray()) }, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupported, canon)
}

func bytesCompare(a, b []byte) int { return bytes.Compare(a, b) }
