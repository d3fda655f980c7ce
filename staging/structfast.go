package staging

import (
	"github.com/pswap/pswap/internal/checksum"

	"math"
	"reflect"
	"strings"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/parquet-go/parquet-go"
	"github.com/zeebo/xxh3"
)

// fieldEnc hashes one column straight from a struct's memory, without
// parquet-go's row deconstruction (which costs more than the encoding).
type fieldEnc struct {
	off  uintptr
	ptr  bool // the field is a pointer; nil is null
	enc  func(b []byte, p unsafe.Pointer) []byte
	kind hashKind // how hashCols hashes the value without encoding it
	seed uint64   // the column's colsum128 seed
}

// hashKind names the Go field types whose colsum128 value hash hashCols
// computes straight from memory: each gives the hash checksum.ValueHash gives of
// the field's encoding (the tests compare the two on every kind). Other
// fields (narrowing conversions, dates, decimals, []byte) are encoded and
// hashed from their encoding.
type hashKind uint8

const (
	hashEncoded hashKind = iota // enc, then checksum.ValueHash
	hashInt64                   // int64 (or int) in an int64 column
	hashInt32                   // int32 in an int32 column
	hashFloat64
	hashFloat32
	hashBool
	hashString // string in a string or binary column
	hashTimeMilli
	hashTimeMicro
	hashTimeNano
)

// hashKindOf is the hashKind of a field of Go type t in a column of
// canonical type canon.
func hashKindOf(t reflect.Type, canon arrow.DataType) hashKind {
	if t == timeType {
		if ts, ok := canon.(*arrow.TimestampType); ok {
			switch ts.Unit {
			case arrow.Millisecond:
				return hashTimeMilli
			case arrow.Microsecond:
				return hashTimeMicro
			case arrow.Nanosecond:
				return hashTimeNano
			}
		}
		return hashEncoded
	}
	switch id := canon.ID(); {
	case id == arrow.INT64 && (t.Kind() == reflect.Int64 || t.Kind() == reflect.Int && t.Size() == 8):
		return hashInt64
	case id == arrow.INT32 && t.Kind() == reflect.Int32:
		return hashInt32
	case id == arrow.FLOAT64 && t.Kind() == reflect.Float64:
		return hashFloat64
	case id == arrow.FLOAT32 && t.Kind() == reflect.Float32:
		return hashFloat32
	case id == arrow.BOOL && t.Kind() == reflect.Bool:
		return hashBool
	case (id == arrow.STRING || id == arrow.BINARY) && t.Kind() == reflect.String:
		return hashString
	}
	return hashEncoded
}

// fastEncoders returns per-column encoders reading the fields of struct
// type st directly, or nil when some column is not one of the simple cases
// whose conversion to Parquet is known to match parquet-go's: then the
// Stager hashes parquet-go's deconstructed rows instead.
func fastEncoders(st reflect.Type, ps *pq.Schema, leaves [][]string, canon *arrow.Schema) []fieldEnc {
	if st.Kind() != reflect.Struct {
		return nil
	}
	byName := map[string]reflect.StructField{}
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous {
			return nil
		}
		tag, hasTag := f.Tag.Lookup("parquet")
		name, _, _ := strings.Cut(tag, ",")
		if hasTag && tag == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		byName[name] = f
	}
	if len(byName) != len(leaves) {
		return nil
	}
	encs := make([]fieldEnc, len(leaves))
	for i, path := range leaves {
		f, ok := byName[path[0]]
		leaf, ok2 := ps.Lookup(path...)
		if !ok || !ok2 || len(path) != 1 {
			return nil
		}
		t := f.Type
		optional := leaf.MaxDefinitionLevel > 0
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
			if !optional {
				return nil
			}
		} else if optional {
			return nil // parquet-go writes zero values of optional non-pointer fields as nulls
		}
		enc := valueEnc(t, canon.Field(i).Type)
		if enc == nil {
			return nil
		}
		encs[i] = fieldEnc{off: f.Offset, ptr: f.Type.Kind() == reflect.Pointer, enc: enc,
			kind: hashKindOf(t, canon.Field(i).Type), seed: checksum.ColSeed(i)}
	}
	return encs
}

var timeType = reflect.TypeFor[time.Time]()

// readSigned returns a reader of a signed integer of kind k.
func readSigned(k reflect.Kind) func(p unsafe.Pointer) int64 {
	switch k {
	case reflect.Int8:
		return func(p unsafe.Pointer) int64 { return int64(*(*int8)(p)) }
	case reflect.Int16:
		return func(p unsafe.Pointer) int64 { return int64(*(*int16)(p)) }
	case reflect.Int32:
		return func(p unsafe.Pointer) int64 { return int64(*(*int32)(p)) }
	case reflect.Int64:
		return func(p unsafe.Pointer) int64 { return *(*int64)(p) }
	case reflect.Int:
		return func(p unsafe.Pointer) int64 { return int64(*(*int)(p)) }
	}
	return nil
}

func readUnsigned(k reflect.Kind) func(p unsafe.Pointer) uint64 {
	switch k {
	case reflect.Uint8:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint8)(p)) }
	case reflect.Uint16:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint16)(p)) }
	case reflect.Uint32:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint32)(p)) }
	case reflect.Uint64:
		return func(p unsafe.Pointer) uint64 { return *(*uint64)(p) }
	case reflect.Uint:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint)(p)) }
	}
	return nil
}

// valueEnc returns the encoder of a Go value of type t stored in a column
// of canonical type canon, or nil.
func valueEnc(t reflect.Type, canon arrow.DataType) func(b []byte, p unsafe.Pointer) []byte {
	if t == timeType {
		ts, ok := canon.(*arrow.TimestampType)
		if !ok {
			return nil
		}
		switch ts.Unit {
		case arrow.Millisecond:
			return func(b []byte, p unsafe.Pointer) []byte {
				return checksum.AppendTagged64(b, checksum.TagTimestamp, (*time.Time)(p).UnixMilli())
			}
		case arrow.Microsecond:
			return func(b []byte, p unsafe.Pointer) []byte {
				return checksum.AppendTagged64(b, checksum.TagTimestamp, (*time.Time)(p).UnixMicro())
			}
		case arrow.Nanosecond:
			return func(b []byte, p unsafe.Pointer) []byte {
				return checksum.AppendTagged64(b, checksum.TagTimestamp, (*time.Time)(p).UnixNano())
			}
		}
		return nil
	}
	k := t.Kind()
	if rs := readSigned(k); rs != nil {
		switch c := canon.(type) {
		case *arrow.Int8Type:
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendInt(b, int64(int8(rs(p)))) }
		case *arrow.Int16Type:
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendInt(b, int64(int16(rs(p)))) }
		case *arrow.Int32Type:
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendInt(b, int64(int32(rs(p)))) }
		case *arrow.Int64Type:
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendInt(b, rs(p)) }
		case *arrow.Date32Type:
			if k != reflect.Int32 {
				return nil
			}
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendDate(b, int32(rs(p))) }
		case *arrow.Decimal128Type:
			if k != reflect.Int32 && k != reflect.Int64 {
				return nil
			}
			w := checksum.DecimalWidth(c)
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendDecimalInt64(b, w, rs(p)) }
		}
		return nil
	}
	if ru := readUnsigned(k); ru != nil {
		switch canon.(type) {
		case *arrow.Uint8Type:
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendUint(b, uint64(uint8(ru(p)))) }
		case *arrow.Uint16Type:
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendUint(b, uint64(uint16(ru(p)))) }
		case *arrow.Uint32Type:
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendUint(b, uint64(uint32(ru(p)))) }
		case *arrow.Uint64Type:
			return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendUint(b, ru(p)) }
		}
		return nil
	}
	switch {
	case k == reflect.Bool && canon.ID() == arrow.BOOL:
		return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendBool(b, *(*bool)(p)) }
	case k == reflect.Float32 && canon.ID() == arrow.FLOAT32:
		return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendFloat32(b, *(*float32)(p)) }
	case k == reflect.Float64 && canon.ID() == arrow.FLOAT64:
		return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendFloat64(b, *(*float64)(p)) }
	case k == reflect.String && canon.ID() == arrow.STRING:
		return func(b []byte, p unsafe.Pointer) []byte { return checksum.AppendString(b, *(*string)(p)) }
	case k == reflect.String && canon.ID() == arrow.BINARY:
		return func(b []byte, p unsafe.Pointer) []byte {
			s := *(*string)(p)
			return checksum.AppendBytes(b, checksum.TagBinary, unsafe.Slice(unsafe.StringData(s), len(s)))
		}
	case k == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && canon.ID() == arrow.BINARY:
		return func(b []byte, p unsafe.Pointer) []byte {
			return checksum.AppendBytes(b, checksum.TagBinary, *(*[]byte)(p))
		}
	case k == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && canon.ID() == arrow.STRING:
		return func(b []byte, p unsafe.Pointer) []byte {
			return checksum.AppendBytes(b, checksum.TagString, *(*[]byte)(p))
		}
	}
	return nil
}

// hashBlock is the number of rows hashCols hashes a column at a time.
const hashBlock = 512

// hashCols adds the colsum128 content checksum of rows to sum, a column at
// a time over blocks of rows: per column, one loop of loads and mixes
// instead of an encoding per value. It is the checksum hashFast computes
// (without the legacy rowsum128).
func hashCols[T any](si *structInfo, rows []T, sum *checksum.Sums) {
	var acc [hashBlock]uint64
	var buf []byte
	stride := unsafe.Sizeof(*new(T))
	for len(rows) > 0 {
		a := acc[:min(len(rows), hashBlock)]
		clear(a)
		base := unsafe.Pointer(&rows[0])
		for k := range si.fast {
			buf = si.fast[k].fold(a, base, stride, buf)
		}
		for _, x := range a {
			sum.Col.AddFold(x)
		}
		rows = rows[len(a):]
	}
}

// fold folds the value hashes of the field in len(acc) rows, stride bytes
// apart from base, into the rows' accumulators. buf is scratch space for
// encoded values; fold returns it.
func (f *fieldEnc) fold(acc []uint64, base unsafe.Pointer, stride uintptr, buf []byte) []byte {
	seed := f.seed
	for i := range acc {
		p := unsafe.Add(base, uintptr(i)*stride+f.off)
		if f.ptr {
			if p = *(*unsafe.Pointer)(p); p == nil {
				acc[i] = checksum.FoldValue(acc[i], checksum.NullHash)
				continue
			}
		}
		var h uint64
		switch f.kind {
		case hashInt64:
			h = checksum.FixedHash(uint64(*(*int64)(p)), seed)
		case hashInt32:
			h = checksum.FixedHash(uint64(int64(*(*int32)(p))), seed)
		case hashFloat64:
			u := math.Float64bits(*(*float64)(p))
			if u&^(1<<63) > 0x7ff0000000000000 { // NaN: its canonical form
				u = 0x7ff8000000000000
			}
			h = checksum.FixedHash(u, seed)
		case hashFloat32:
			u := math.Float32bits(*(*float32)(p))
			if u&^(1<<31) > 0x7f800000 {
				u = 0x7fc00000
			}
			h = checksum.FixedHash(uint64(u), seed)
		case hashBool:
			var b uint64
			if *(*bool)(p) {
				b = 1
			}
			h = checksum.FixedHash(b, seed)
		case hashString:
			h = xxh3.HashStringSeed(*(*string)(p), seed)
		case hashTimeMilli:
			h = checksum.FixedHash(uint64((*time.Time)(p).UnixMilli()), seed)
		case hashTimeMicro:
			h = checksum.FixedHash(uint64((*time.Time)(p).UnixMicro()), seed)
		case hashTimeNano:
			h = checksum.FixedHash(uint64((*time.Time)(p).UnixNano()), seed)
		default:
			buf = f.enc(buf[:0], p)
			h = checksum.ValueHash(buf, seed)
		}
		acc[i] = checksum.FoldValue(acc[i], h)
	}
	return buf
}

// hashFast adds the content checksum of rows to sum.
func hashFast[T any](s *Stager, si *structInfo, rows []T, sum *checksum.Sums) {
	encs, fold := si.fast, si.fold
	for i := range rows {
		base := unsafe.Pointer(&rows[i])
		b := s.buf[:0]
		fold.Begin()
		for _, f := range encs {
			start := len(b)
			p := unsafe.Add(base, f.off)
			if f.ptr {
				p = *(*unsafe.Pointer)(p)
			}
			if p == nil {
				b = append(b, checksum.TagNull)
			} else {
				b = f.enc(b, p)
			}
			fold.Value(b[start:])
			if !fold.Legacy {
				b = b[:0]
			}
		}
		s.buf = b
		fold.End(sum, b)
	}
}
