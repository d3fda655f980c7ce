package merge

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/zeebo/xxh3"

	"github.com/pswap/pswap/internal/errkind"
)

// ErrBadKey: an input row whose key cannot be used (a key column missing
// or null). It matches errkind.ErrBadInput.
var ErrBadKey = errkind.New("bad merge key", errkind.ErrBadInput)

// Hash is the 128-bit hash of a row's key columns.
type Hash = xxh3.Uint128

// Hasher hashes the key columns of record batches of one schema.
type Hasher struct {
	names []string
	types []arrow.DataType // the table's, per key column (nil: as they are)
	buf   []byte
}

// NewHasher hashes the named key columns. types, when given, are the
// table's Arrow types of the key columns, one per key (nil: as it is):
// Keys converts a column of another type to its table type before it is
// hashed, so that the input's keys and the table's rows compare as the
// table's values (a time in ms or ns as the table's µs).
func NewHasher(keys []string, types ...arrow.DataType) *Hasher {
	return &Hasher{names: keys, types: types}
}

// Keys are the key columns of one record batch, converted to the table's
// types: what the hasher hashes.
type Keys struct {
	h    *Hasher
	cols []arrow.Array
	idx  []int
	own  []arrow.Array // converted columns, released by Release
}

// Keys converts the key columns cols (from Columns) of rec to the
// table's types (Arrow's safe casts: a value the table's type cannot hold
// exactly, a time in ns that is not a whole µs, is an ErrBadKey naming
// the column); the caller releases the result.
func (h *Hasher) Keys(ctx context.Context, rec arrow.RecordBatch, cols []int) (*Keys, error) {
	k := &Keys{h: h, cols: make([]arrow.Array, len(cols)), idx: make([]int, len(cols))}
	for j, c := range cols {
		col := rec.Column(c)
		k.cols[j] = col
		if j >= len(h.types) || h.types[j] == nil || sameValues(col.DataType(), h.types[j]) {
			continue
		}
		out, err := compute.CastArray(ctx, col, compute.SafeCastOptions(h.types[j]))
		if err != nil {
			k.Release()
			return nil, fmt.Errorf("%w: key column %q is %s, the table's is %s: %v", ErrBadKey, h.names[j], col.DataType(), h.types[j], err)
		}
		k.own = append(k.own, out)
		k.cols[j] = out
	}
	for j := range k.idx {
		k.idx[j] = j
	}
	return k, nil
}

// sameValues reports whether a column of type dt holds values of type
// want as they are (a dictionary of them included).
func sameValues(dt, want arrow.DataType) bool {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	return arrow.TypeEqual(dt, want)
}

// Row hashes row i (see Hasher.Row).
func (k *Keys) Row(i int) (sum Hash, null bool) {
	b := k.h.buf[:0]
	for _, c := range k.cols {
		var ok bool
		b, ok = AppendValue(b, c, i)
		if !ok {
			return Hash{}, true
		}
	}
	k.h.buf = b
	return xxh3.Hash128(b), false
}

// Release releases the converted columns.
func (k *Keys) Release() {
	for _, c := range k.own {
		c.Release()
	}
	k.own = nil
}

// Columns returns the indexes of the key columns in sc, or an ErrBadKey
// naming the first one missing.
func (h *Hasher) Columns(sc *arrow.Schema, what string) ([]int, error) {
	idx := make([]int, len(h.names))
	for i, n := range h.names {
		f := sc.FieldIndices(n)
		if len(f) == 0 {
			return nil, fmt.Errorf("%w: %s has no key column %q (its columns: %s)", ErrBadKey, what, n, columnNames(sc))
		}
		idx[i] = f[0]
	}
	return idx, nil
}

func columnNames(sc *arrow.Schema) string {
	n := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		n[i] = f.Name
	}
	return strings.Join(n, ", ")
}

// Row hashes row i of rec's key columns (cols from Columns). null reports
// that a key column is null there: such a row has no key.
func (h *Hasher) Row(rec arrow.RecordBatch, cols []int, i int) (sum Hash, null bool) {
	b := h.buf[:0]
	for _, c := range cols {
		var ok bool
		b, ok = AppendValue(b, rec.Column(c), i)
		if !ok {
			return Hash{}, true
		}
	}
	h.buf = b
	return xxh3.Hash128(b), false
}

// Describe spells row i's key for a message: name=value pairs.
func (h *Hasher) Describe(rec arrow.RecordBatch, cols []int, i int) string {
	parts := make([]string, len(cols))
	for j, c := range cols {
		parts[j] = h.names[j] + "=" + clip(rec.Column(c).ValueStr(i))
	}
	return strings.Join(parts, ", ")
}

// AppendValue appends the canonical encoding of arr[i] to b, tagged by
// kind and length-prefixed, so that the encodings of two key tuples are
// equal exactly when their values are: integers of every width as int64
// (uint64 above 2^63-1 apart), float32 and float64 as float64, strings and
// binaries as their bytes, dates as days, timestamps in microseconds (a
// finer value apart), times of day in nanoseconds, anything else as
// Arrow's text of it. ok is false for a null. Values of two table types
// may encode alike (a long and an int): Hasher.Keys converts both sides
// to the table's type first.
func AppendValue(b []byte, arr arrow.Array, i int) (_ []byte, ok bool) {
	if arr.IsNull(i) {
		return b, false
	}
	switch a := arr.(type) {
	case *array.Int8:
		return appendInt(b, int64(a.Value(i))), true
	case *array.Int16:
		return appendInt(b, int64(a.Value(i))), true
	case *array.Int32:
		return appendInt(b, int64(a.Value(i))), true
	case *array.Int64:
		return appendInt(b, a.Value(i)), true
	case *array.Uint8:
		return appendInt(b, int64(a.Value(i))), true
	case *array.Uint16:
		return appendInt(b, int64(a.Value(i))), true
	case *array.Uint32:
		return appendInt(b, int64(a.Value(i))), true
	case *array.Uint64:
		if v := a.Value(i); v <= math.MaxInt64 {
			return appendInt(b, int64(v)), true
		} else {
			return binary.BigEndian.AppendUint64(append(b, 'u'), v), true
		}
	case *array.Float32:
		return appendFloat(b, float64(a.Value(i))), true
	case *array.Float64:
		return appendFloat(b, a.Value(i)), true
	case *array.String:
		return appendBytes(b, a.Value(i)), true
	case *array.LargeString:
		return appendBytes(b, a.Value(i)), true
	case *array.StringView:
		return appendBytes(b, a.Value(i)), true
	case *array.Binary:
		return appendBytes(b, a.Value(i)), true
	case *array.LargeBinary:
		return appendBytes(b, a.Value(i)), true
	case *array.BinaryView:
		return appendBytes(b, a.Value(i)), true
	case *array.Boolean:
		v := byte(0)
		if a.Value(i) {
			v = 1
		}
		return append(b, 'b', v), true
	case *array.Date32:
		return binary.BigEndian.AppendUint64(append(b, 'd'), uint64(int64(a.Value(i)))), true
	case *array.Date64:
		return binary.BigEndian.AppendUint64(append(b, 'd'), uint64(int64(a.Value(i))/86_400_000)), true
	case *array.Timestamp:
		v := int64(a.Value(i))
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Second:
			v *= 1_000_000
		case arrow.Millisecond:
			v *= 1_000
		case arrow.Nanosecond:
			if v%1_000 != 0 {
				return binary.BigEndian.AppendUint64(append(b, 'T'), uint64(v)), true
			}
			v /= 1_000
		}
		return binary.BigEndian.AppendUint64(append(b, 't'), uint64(v)), true
	case *array.Time32:
		v := int64(a.Value(i))
		switch a.DataType().(*arrow.Time32Type).Unit {
		case arrow.Second:
			v *= 1_000_000_000
		case arrow.Millisecond:
			v *= 1_000_000
		}
		return binary.BigEndian.AppendUint64(append(b, 'h'), uint64(v)), true
	case *array.Time64:
		v := int64(a.Value(i))
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Microsecond {
			v *= 1_000
		}
		return binary.BigEndian.AppendUint64(append(b, 'h'), uint64(v)), true
	case *array.Dictionary:
		return AppendValue(b, a.Dictionary(), a.GetValueIndex(i))
	}
	return appendText(b, 'x', arr.ValueStr(i)), true
}

func appendInt(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 'i'), uint64(v))
}

func appendFloat(b []byte, v float64) []byte {
	if v == 0 {
		v = 0 // -0 is 0
	}
	if math.IsNaN(v) {
		v = math.NaN()
	}
	return binary.BigEndian.AppendUint64(append(b, 'f'), math.Float64bits(v))
}

func appendBytes[T string | []byte](b []byte, v T) []byte {
	b = binary.AppendUvarint(append(b, 's'), uint64(len(v)))
	return append(b, v...)
}

func appendText(b []byte, tag byte, v string) []byte {
	b = binary.AppendUvarint(append(b, tag), uint64(len(v)))
	return append(b, v...)
}

// Text returns arr[i] as text (a CSV's spelling of it, Arrow's ValueStr),
// for comparisons with a delete marker's value and for messages. ok is
// false for a null.
func Text(arr arrow.Array, i int) (string, bool) {
	if arr.IsNull(i) {
		return "", false
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i), true
	case *array.LargeString:
		return a.Value(i), true
	case *array.Boolean:
		if a.Value(i) {
			return "true", true
		}
		return "false", true
	}
	return arr.ValueStr(i), true
}
