package checksum

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

// Value tags of the canonical row encoding (see staging's doc.go).
const (
	TagNull      byte = 0x00
	TagBool      byte = 0x01
	TagInt       byte = 0x02
	TagUint      byte = 0x03
	TagFloat32   byte = 0x04
	TagFloat64   byte = 0x05
	TagString    byte = 0x06
	TagBinary    byte = 0x07
	TagDate      byte = 0x08
	TagTime      byte = 0x09
	TagTimestamp byte = 0x0a
	TagDecimal   byte = 0x0b
	TagList      byte = 0x0c
	TagStruct    byte = 0x0d
	TagMap       byte = 0x0e
	TagFloat16   byte = 0x0f
)

// Sum is the order-independent sum (mod 2^128) of row hashes.
type Sum struct{ hi, lo uint64 }

// AddRow adds the rowsum128 hash of a row's canonical encoding enc.
func (s *Sum) AddRow(enc []byte) {
	h := xxh3.Hash128(enc)
	var c uint64
	s.lo, c = bits.Add64(s.lo, h.Lo, 0)
	s.hi, _ = bits.Add64(s.hi, h.Hi, c)
}

// Add adds sum o (mod 2^128).
func (s *Sum) Add(o Sum) {
	var c uint64
	s.lo, c = bits.Add64(s.lo, o.lo, 0)
	s.hi, _ = bits.Add64(s.hi, o.hi, c)
}

// RowSumOf folds the schema, the row count and the row sum into the
// generation's rowsum128 content checksum.
func RowSumOf(schema string, rows int64, s Sum) string {
	return foldChecksum(RowSum, "pswap/rowsum128/v1", schema, rows, s)
}

// The Append functions append one value's canonical (rowsum128)
// encoding, its tag and then its bytes, to b.

// AppendInt appends a signed integer.
func AppendInt(b []byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, TagInt), uint64(v))
}

// AppendUint appends an unsigned integer.
func AppendUint(b []byte, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, TagUint), v)
}

// AppendBool appends a boolean.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, TagBool, 1)
	}
	return append(b, TagBool, 0)
}

// AppendFloat32 appends a float32 (NaN canonical).
func AppendFloat32(b []byte, v float32) []byte {
	u := math.Float32bits(v)
	if v != v {
		u = 0x7fc00000
	}
	return binary.LittleEndian.AppendUint32(append(b, TagFloat32), u)
}

// AppendFloat64 appends a float64 (NaN canonical).
func AppendFloat64(b []byte, v float64) []byte {
	u := math.Float64bits(v)
	if v != v {
		u = 0x7ff8000000000000
	}
	return binary.LittleEndian.AppendUint64(append(b, TagFloat64), u)
}

// AppendBytes appends a byte string under tag (TagString, TagBinary).
func AppendBytes(b []byte, tag byte, v []byte) []byte {
	b = binary.AppendUvarint(append(b, tag), uint64(len(v)))
	return append(b, v...)
}

// AppendString appends a string.
func AppendString(b []byte, v string) []byte {
	b = binary.AppendUvarint(append(b, TagString), uint64(len(v)))
	return append(b, v...)
}

// AppendDate appends a date (days since the Unix epoch).
func AppendDate(b []byte, days int32) []byte {
	return binary.LittleEndian.AppendUint32(append(b, TagDate), uint32(days))
}

// AppendTagged64 appends a 64-bit value under tag (times, timestamps).
func AppendTagged64(b []byte, tag byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, tag), uint64(v))
}

// AppendDecimalBE appends the unscaled value as width bytes (16 or 32) of
// little-endian two's complement. be is the value's big-endian two's
// complement bytes, of any length.
func AppendDecimalBE(b []byte, width int, be []byte) []byte {
	b = append(b, TagDecimal)
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

// AppendDecimalInt64 appends a decimal whose unscaled value is v, as
// width bytes.
func AppendDecimalInt64(b []byte, width int, v int64) []byte {
	b = binary.LittleEndian.AppendUint64(append(b, TagDecimal), uint64(v))
	fill := uint64(0)
	if v < 0 {
		fill = math.MaxUint64
	}
	for i := 8; i < width; i += 8 {
		b = binary.LittleEndian.AppendUint64(b, fill)
	}
	return b
}

// AppendDecimal128 appends a 128-bit decimal as width bytes.
func AppendDecimal128(b []byte, width int, v decimal128.Num) []byte {
	b = append(b, TagDecimal)
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

// AppendDecimal256 appends a 256-bit decimal as width bytes.
func AppendDecimal256(b []byte, width int, v decimal256.Num) []byte {
	b = append(b, TagDecimal)
	a := v.Array() // little-endian 64-bit words
	for i := 0; i < width/8; i++ {
		b = binary.LittleEndian.AppendUint64(b, a[i])
	}
	return b
}

// DecimalWidth is the width of a decimal type's canonical encoding: 32
// bytes for 256-bit decimals, 16 for the others.
func DecimalWidth(dt arrow.DataType) int {
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

// ArrowEnc appends the canonical encoding of row i of one column.
type ArrowEnc func(b []byte, i int) []byte

// ArrowEncoder returns the encoder for arr, whose values are encoded as
// values of the canonical type canon (the type the column has once written
// to Parquet and read back).
func ArrowEncoder(arr arrow.Array, canon arrow.DataType) (ArrowEnc, error) {
	enc, err := arrowValueEncoder(arr, canon)
	if err != nil {
		return nil, err
	}
	if arr.NullN() == 0 {
		return enc, nil
	}
	return func(b []byte, i int) []byte {
		if arr.IsNull(i) {
			return append(b, TagNull)
		}
		return enc(b, i)
	}, nil
}

// Unsupported is the ErrUnsupported error for a column of type arr
// (stored as canon).
func Unsupported(arr arrow.DataType, canon arrow.DataType) error {
	if arrow.TypeEqual(arr, canon) {
		return fmt.Errorf("%w: %s", ErrUnsupported, arr)
	}
	return fmt.Errorf("%w: %s (stored as %s)", ErrUnsupported, arr, canon)
}

func arrowValueEncoder(arr arrow.Array, canon arrow.DataType) (ArrowEnc, error) {
	switch a := arr.(type) {
	case *array.Null:
		return func(b []byte, i int) []byte { return append(b, TagNull) }, nil
	case *array.Boolean:
		return func(b []byte, i int) []byte { return AppendBool(b, a.Value(i)) }, nil
	case *array.Int8:
		return func(b []byte, i int) []byte { return AppendInt(b, int64(a.Value(i))) }, nil
	case *array.Int16:
		return func(b []byte, i int) []byte { return AppendInt(b, int64(a.Value(i))) }, nil
	case *array.Int32:
		return func(b []byte, i int) []byte { return AppendInt(b, int64(a.Value(i))) }, nil
	case *array.Int64:
		return func(b []byte, i int) []byte { return AppendInt(b, a.Value(i)) }, nil
	case *array.Uint8:
		return func(b []byte, i int) []byte { return AppendUint(b, uint64(a.Value(i))) }, nil
	case *array.Uint16:
		return func(b []byte, i int) []byte { return AppendUint(b, uint64(a.Value(i))) }, nil
	case *array.Uint32:
		return func(b []byte, i int) []byte { return AppendUint(b, uint64(a.Value(i))) }, nil
	case *array.Uint64:
		return func(b []byte, i int) []byte { return AppendUint(b, a.Value(i)) }, nil
	case *array.Float32:
		return func(b []byte, i int) []byte { return AppendFloat32(b, a.Value(i)) }, nil
	case *array.Float64:
		return func(b []byte, i int) []byte { return AppendFloat64(b, a.Value(i)) }, nil
	case *array.String:
		return func(b []byte, i int) []byte { return AppendString(b, a.Value(i)) }, nil
	case *array.LargeString:
		return func(b []byte, i int) []byte { return AppendString(b, a.Value(i)) }, nil
	case *array.Binary:
		return func(b []byte, i int) []byte { return AppendBytes(b, TagBinary, a.Value(i)) }, nil
	case *array.LargeBinary:
		return func(b []byte, i int) []byte { return AppendBytes(b, TagBinary, a.Value(i)) }, nil
	case *array.FixedSizeBinary:
		return func(b []byte, i int) []byte { return AppendBytes(b, TagBinary, a.Value(i)) }, nil
	case *array.Date32:
		return func(b []byte, i int) []byte { return AppendDate(b, int32(a.Value(i))) }, nil
	case *array.Date64:
		return func(b []byte, i int) []byte {
			return AppendDate(b, int32(convertUnit(int64(a.Value(i)), 1, 86_400_000)))
		}, nil
	case *array.Time32:
		ct, ok := canonTimeUnit(canon)
		if !ok {
			return nil, Unsupported(arr.DataType(), canon)
		}
		mul, div := unitFactor(a.DataType().(*arrow.Time32Type).Unit, ct)
		return func(b []byte, i int) []byte {
			return AppendTagged64(b, TagTime, convertUnit(int64(a.Value(i)), mul, div))
		}, nil
	case *array.Time64:
		ct, ok := canonTimeUnit(canon)
		if !ok {
			return nil, Unsupported(arr.DataType(), canon)
		}
		mul, div := unitFactor(a.DataType().(*arrow.Time64Type).Unit, ct)
		return func(b []byte, i int) []byte {
			return AppendTagged64(b, TagTime, convertUnit(int64(a.Value(i)), mul, div))
		}, nil
	case *array.Timestamp:
		ct, ok := canon.(*arrow.TimestampType)
		if !ok {
			return nil, Unsupported(arr.DataType(), canon)
		}
		mul, div := unitFactor(a.DataType().(*arrow.TimestampType).Unit, ct.Unit)
		return func(b []byte, i int) []byte {
			return AppendTagged64(b, TagTimestamp, convertUnit(int64(a.Value(i)), mul, div))
		}, nil
	case *array.Decimal128:
		w := DecimalWidth(canon)
		return func(b []byte, i int) []byte { return AppendDecimal128(b, w, a.Value(i)) }, nil
	case *array.Decimal256:
		w := DecimalWidth(canon)
		return func(b []byte, i int) []byte { return AppendDecimal256(b, w, a.Value(i)) }, nil
	case *array.Dictionary:
		values, err := ArrowEncoder(a.Dictionary(), canon)
		if err != nil {
			return nil, err
		}
		return func(b []byte, i int) []byte { return values(b, a.GetValueIndex(i)) }, nil
	case *array.Float16:
		return func(b []byte, i int) []byte { return AppendFloat16(b, a.Value(i).Uint16()) }, nil
	case *array.Map: // before array.ListLike: a map is a list of entries
		ct, ok := canon.(*arrow.MapType)
		if !ok {
			return nil, Unsupported(arr.DataType(), canon)
		}
		keys, err := ArrowEncoder(a.Keys(), ct.KeyType())
		if err != nil {
			return nil, err
		}
		items, err := ArrowEncoder(a.Items(), ct.ItemType())
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
			b, entries = AppendMapEntries(b, scratch, ends, entries[:0])
			return b
		}, nil
	case array.ListLike:
		elem, ok := listElem(canon)
		if !ok {
			return nil, Unsupported(arr.DataType(), canon)
		}
		values, err := ArrowEncoder(a.ListValues(), elem)
		if err != nil {
			return nil, err
		}
		return func(b []byte, i int) []byte {
			start, end := a.ValueOffsets(i)
			b = binary.AppendUvarint(append(b, TagList), uint64(end-start))
			for j := int(start); j < int(end); j++ {
				b = values(b, j)
			}
			return b
		}, nil
	case *array.Struct:
		ct, ok := canon.(*arrow.StructType)
		if !ok || ct.NumFields() != a.NumField() {
			return nil, Unsupported(arr.DataType(), canon)
		}
		fields := make([]ArrowEnc, a.NumField())
		for k := range fields {
			var err error
			if fields[k], err = ArrowEncoder(a.Field(k), ct.Field(k).Type); err != nil {
				return nil, err
			}
		}
		return func(b []byte, i int) []byte {
			b = binary.AppendUvarint(append(b, TagStruct), uint64(len(fields)))
			for _, f := range fields {
				b = f(b, i)
			}
			return b
		}, nil
	}
	return nil, Unsupported(arr.DataType(), canon)
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

// AppendFloat16 appends an IEEE 754 half-precision value given as its bits.
func AppendFloat16(b []byte, u uint16) []byte {
	if u&0x7c00 == 0x7c00 && u&0x03ff != 0 { // NaN
		u = 0x7e00
	}
	return binary.LittleEndian.AppendUint16(append(b, TagFloat16), u)
}

// AppendMapEntries appends a map value: its entry count, then its entries'
// encodings (key then value, each as uvarint length + bytes) sorted
// bytewise, so that the order in which a writer stored the entries does
// not count. enc holds the entries back to back; ends[k] is where entry k
// ends. entries is scratch space, returned for reuse.
func AppendMapEntries(b []byte, enc []byte, ends []int, entries [][]byte) ([]byte, [][]byte) {
	start := 0
	for _, end := range ends {
		entries = append(entries, enc[start:end])
		start = end
	}
	slices.SortFunc(entries, bytesCompare)
	b = binary.AppendUvarint(append(b, TagMap), uint64(len(entries)))
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

// ParquetEnc appends the canonical encoding of one non-null parquet-go value.
type ParquetEnc func(b []byte, v pq.Value) []byte

// ParquetEncoder returns the encoder of a parquet-go leaf column whose
// canonical (Arrow) type is canon.
func ParquetEncoder(leaf pq.Type, canon arrow.DataType) (ParquetEnc, error) {
	kind := leaf.Kind()
	switch t := canon.(type) {
	case *arrow.NullType:
		return func(b []byte, v pq.Value) []byte { return append(b, TagNull) }, nil
	case *arrow.BooleanType:
		return func(b []byte, v pq.Value) []byte { return AppendBool(b, v.Boolean()) }, nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type:
		return func(b []byte, v pq.Value) []byte { return AppendInt(b, int64(v.Int32())) }, nil
	case *arrow.Int64Type:
		return func(b []byte, v pq.Value) []byte { return AppendInt(b, v.Int64()) }, nil
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type:
		return func(b []byte, v pq.Value) []byte { return AppendUint(b, uint64(uint32(v.Int32()))) }, nil
	case *arrow.Uint64Type:
		return func(b []byte, v pq.Value) []byte { return AppendUint(b, uint64(v.Int64())) }, nil
	case *arrow.Float32Type:
		return func(b []byte, v pq.Value) []byte { return AppendFloat32(b, v.Float()) }, nil
	case *arrow.Float64Type:
		return func(b []byte, v pq.Value) []byte { return AppendFloat64(b, v.Double()) }, nil
	case *arrow.StringType, *arrow.LargeStringType:
		return func(b []byte, v pq.Value) []byte { return AppendBytes(b, TagString, v.ByteArray()) }, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.FixedSizeBinaryType:
		return func(b []byte, v pq.Value) []byte { return AppendBytes(b, TagBinary, v.ByteArray()) }, nil
	case *arrow.Date32Type:
		return func(b []byte, v pq.Value) []byte { return AppendDate(b, v.Int32()) }, nil
	case *arrow.Time32Type:
		return func(b []byte, v pq.Value) []byte { return AppendTagged64(b, TagTime, int64(v.Int32())) }, nil
	case *arrow.Time64Type:
		return func(b []byte, v pq.Value) []byte { return AppendTagged64(b, TagTime, v.Int64()) }, nil
	case *arrow.TimestampType:
		if kind != pq.Int64 {
			return nil, fmt.Errorf("%w: timestamp stored as %s", ErrUnsupported, kind)
		}
		return func(b []byte, v pq.Value) []byte { return AppendTagged64(b, TagTimestamp, v.Int64()) }, nil
	case *arrow.Decimal128Type, *arrow.Decimal256Type:
		w := DecimalWidth(t)
		switch kind {
		case pq.Int32:
			return func(b []byte, v pq.Value) []byte { return AppendDecimalInt64(b, w, int64(v.Int32())) }, nil
		case pq.Int64:
			return func(b []byte, v pq.Value) []byte { return AppendDecimalInt64(b, w, v.Int64()) }, nil
		case pq.ByteArray, pq.FixedLenByteArray:
			return func(b []byte, v pq.Value) []byte { return AppendDecimalBE(b, w, v.ByteArray()) }, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupported, canon)
}

func bytesCompare(a, b []byte) int { return bytes.Compare(a, b) }
