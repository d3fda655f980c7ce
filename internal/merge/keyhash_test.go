package merge

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func one(t *testing.T, dt arrow.DataType, v any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	switch x := v.(type) {
	case nil:
		b.AppendNull()
	case int64:
		switch bb := b.(type) {
		case *array.Int32Builder:
			bb.Append(int32(x))
		case *array.Int64Builder:
			bb.Append(x)
		case *array.Uint64Builder:
			bb.Append(uint64(x))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(x))
		}
	case string:
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(x)
		case *array.BinaryBuilder:
			bb.Append([]byte(x))
		}
	case float64:
		switch bb := b.(type) {
		case *array.Float32Builder:
			bb.Append(float32(x))
		case *array.Float64Builder:
			bb.Append(x)
		}
	}
	return b.NewArray()
}

// TestAppendValueCanonical: the same value in another physical type
// encodes the same; different values and kinds do not.
func TestAppendValueCanonical(t *testing.T) {
	enc := func(a arrow.Array) []byte {
		b, ok := AppendValue(nil, a, 0)
		if !ok {
			t.Fatalf("%s: null", a.DataType())
		}
		return b
	}
	same := [][2]arrow.Array{
		{one(t, arrow.PrimitiveTypes.Int32, int64(7)), one(t, arrow.PrimitiveTypes.Int64, int64(7))},
		{one(t, arrow.PrimitiveTypes.Uint64, int64(7)), one(t, arrow.PrimitiveTypes.Int64, int64(7))},
		{one(t, arrow.BinaryTypes.String, "a"), one(t, arrow.BinaryTypes.Binary, "a")},
		{one(t, arrow.PrimitiveTypes.Float32, 1.5), one(t, arrow.PrimitiveTypes.Float64, 1.5)},
		{one(t, &arrow.TimestampType{Unit: arrow.Millisecond}, int64(1500)), one(t, &arrow.TimestampType{Unit: arrow.Microsecond}, int64(1_500_000))},
		{one(t, &arrow.TimestampType{Unit: arrow.Nanosecond}, int64(2_000)), one(t, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, int64(2))},
	}
	for _, p := range same {
		if !bytes.Equal(enc(p[0]), enc(p[1])) {
			t.Errorf("%s and %s of the same value encode differently", p[0].DataType(), p[1].DataType())
		}
	}
	differ := [][2]arrow.Array{
		{one(t, arrow.PrimitiveTypes.Int64, int64(7)), one(t, arrow.PrimitiveTypes.Int64, int64(8))},
		{one(t, arrow.PrimitiveTypes.Int64, int64(7)), one(t, arrow.BinaryTypes.String, "7")},
		{one(t, arrow.BinaryTypes.String, "ab"), one(t, arrow.BinaryTypes.String, "a")},
		{one(t, &arrow.TimestampType{Unit: arrow.Nanosecond}, int64(2_001)), one(t, &arrow.TimestampType{Unit: arrow.Microsecond}, int64(2))},
	}
	for _, p := range differ {
		if bytes.Equal(enc(p[0]), enc(p[1])) {
			t.Errorf("%s %s and %s %s encode the same", p[0].DataType(), p[0].ValueStr(0), p[1].DataType(), p[1].ValueStr(0))
		}
	}
	if _, ok := AppendValue(nil, one(t, arrow.PrimitiveTypes.Int64, nil), 0); ok {
		t.Error("a null encoded")
	}
}

// TestKeyTuples: length prefixes keep ("ab","c") apart from ("a","bc").
func TestKeyTuples(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil)
	rec := func(a, b string) arrow.RecordBatch {
		return array.NewRecordBatch(sc, []arrow.Array{one(t, arrow.BinaryTypes.String, a), one(t, arrow.BinaryTypes.String, b)}, 1)
	}
	h := NewHasher([]string{"a", "b"})
	cols, err := h.Columns(sc, "test")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := h.Row(rec("ab", "c"), cols, 0)
	y, _ := h.Row(rec("a", "bc"), cols, 0)
	z, _ := h.Row(rec("ab", "c"), cols, 0)
	if x == y || x != z {
		t.Errorf("hashes %v %v %v", x, y, z)
	}
	if _, err := NewHasher([]string{"missing"}).Columns(sc, "the input"); err == nil {
		t.Error("a missing key column was accepted")
	}
}
