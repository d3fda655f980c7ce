package staging

import (
	"reflect"
	"strings"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/parquet-go/parquet-go"
)

// fieldEnc hashes one column straight from a struct's memory, without
// parquet-go's row deconstruction (which costs more than the encoding).
type fieldEnc struct {
	off uintptr
	ptr bool // the field is a pointer; nil is null
	enc func(b []byte, p unsafe.Pointer) []byte
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
		encs[i] = fieldEnc{off: f.Offset, ptr: f.Type.Kind() == reflect.Pointer, enc: enc}
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
				return appendTagged64(b, tagTimestamp, (*time.Time)(p).UnixMilli())
			}
		case arrow.Microsecond:
			return func(b []byte, p unsafe.Pointer) []byte {
				return appendTagged64(b, tagTimestamp, (*time.Time)(p).UnixMicro())
			}
		case arrow.Nanosecond:
			return func(b []byte, p unsafe.Pointer) []byte {
				return appendTagged64(b, tagTimestamp, (*time.Time)(p).UnixNano())
			}
		}
		return nil
	}
	k := t.Kind()
	if rs := readSigned(k); rs != nil {
		switch c := canon.(type) {
		case *arrow.Int8Type:
			return func(b []byte, p unsafe.Pointer) []byte { return appendInt(b, int64(int8(rs(p)))) }
		case *arrow.Int16Type:
			return func(b []byte, p unsafe.Pointer) []byte { return appendInt(b, int64(int16(rs(p)))) }
		case *arrow.Int32Type:
			return func(b []byte, p unsafe.Pointer) []byte { return appendInt(b, int64(int32(rs(p)))) }
		case *arrow.Int64Type:
			return func(b []byte, p unsafe.Pointer) []byte { return appendInt(b, rs(p)) }
		case *arrow.Date32Type:
			if k != reflect.Int32 {
				return nil
			}
			return func(b []byte, p unsafe.Pointer) []byte { return appendDate(b, int32(rs(p))) }
		case *arrow.Decimal128Type:
			if k != reflect.Int32 && k != reflect.Int64 {
				return nil
			}
			w := decimalWidth(c)
			return func(b []byte, p unsafe.Pointer) []byte { return appendDecimalInt64(b, w, rs(p)) }
		}
		return nil
	}
	if ru := readUnsigned(k); ru != nil {
		switch canon.(type) {
		case *arrow.Uint8Type:
			return func(b []byte, p unsafe.Pointer) []byte { return appendUint(b, uint64(uint8(ru(p)))) }
		case *arrow.Uint16Type:
			return func(b []byte, p unsafe.Pointer) []byte { return appendUint(b, uint64(uint16(ru(p)))) }
		case *arrow.Uint32Type:
			return func(b []byte, p unsafe.Pointer) []byte { return appendUint(b, uint64(uint32(ru(p)))) }
		case *arrow.Uint64Type:
			return func(b []byte, p unsafe.Pointer) []byte { return appendUint(b, ru(p)) }
		}
		return nil
	}
	switch {
	case k == reflect.Bool && canon.ID() == arrow.BOOL:
		return func(b []byte, p unsafe.Pointer) []byte { return appendBool(b, *(*bool)(p)) }
	case k == reflect.Float32 && canon.ID() == arrow.FLOAT32:
		return func(b []byte, p unsafe.Pointer) []byte { return appendFloat32(b, *(*float32)(p)) }
	case k == reflect.Float64 && canon.ID() == arrow.FLOAT64:
		return func(b []byte, p unsafe.Pointer) []byte { return appendFloat64(b, *(*float64)(p)) }
	case k == reflect.String && canon.ID() == arrow.STRING:
		return func(b []byte, p unsafe.Pointer) []byte { return appendString(b, *(*string)(p)) }
	case k == reflect.String && canon.ID() == arrow.BINARY:
		return func(b []byte, p unsafe.Pointer) []byte {
			s := *(*string)(p)
			return appendBytes(b, tagBinary, unsafe.Slice(unsafe.StringData(s), len(s)))
		}
	case k == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && canon.ID() == arrow.BINARY:
		return func(b []byte, p unsafe.Pointer) []byte { return appendBytes(b, tagBinary, *(*[]byte)(p)) }
	case k == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && canon.ID() == arrow.STRING:
		return func(b []byte, p unsafe.Pointer) []byte { return appendBytes(b, tagString, *(*[]byte)(p)) }
	}
	return nil
}

// hashFast adds the content checksum of rows to sum.
func hashFast[T any](s *Stager, si *structInfo, rows []T, sum *sums) {
	encs, fold := si.fast, si.fold
	for i := range rows {
		base := unsafe.Pointer(&rows[i])
		b := s.buf[:0]
		fold.begin()
		for _, f := range encs {
			start := len(b)
			p := unsafe.Add(base, f.off)
			if f.ptr {
				p = *(*unsafe.Pointer)(p)
			}
			if p == nil {
				b = append(b, tagNull)
			} else {
				b = f.enc(b, p)
			}
			fold.value(b[start:])
			if !fold.legacy {
				b = b[:0]
			}
		}
		s.buf = b
		fold.end(sum, b)
	}
}
