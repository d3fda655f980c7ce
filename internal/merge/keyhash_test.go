package merge

import (
	"bytes"
	"errors"
	"strings"
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

// TestKeysAsTableType: a key in another unit or width than the table's
// hashes as the table's value once Keys converts it (a time in ms or ns
// as the table's µs: issue 39, item 3), and a value the table's type
// cannot hold exactly is ErrBadKey.
func TestKeysAsTableType(t *testing.T) {
	ctx := t.Context()
	mem := memory.DefaultAllocator
	hashOf := func(typ, table arrow.DataType, json string) (Hash, error) {
		t.Helper()
		arr, _, err := array.FromJSON(mem, typ, strings.NewReader(json))
		if err != nil {
			t.Fatal(err)
		}
		defer arr.Release()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: typ}}, nil), []arrow.Array{arr}, 1)
		defer rec.Release()
		h := NewHasher([]string{"k"}, table)
		keys, err := h.Keys(ctx, rec, []int{0})
		if err != nil {
			return Hash{}, err
		}
		defer keys.Release()
		sum, _ := keys.Row(0)
		return sum, nil
	}
	us := arrow.FixedWidthTypes.Time64us
	want, err := hashOf(us, us, `[7200000000]`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		typ  arrow.DataType
		json string
	}{
		{arrow.FixedWidthTypes.Time32s, `[7200]`},
		{arrow.FixedWidthTypes.Time32ms, `[7200000]`},
		{arrow.FixedWidthTypes.Time64ns, `[7200000000000]`},
	} {
		got, err := hashOf(c.typ, us, c.json)
		if err != nil || got != want {
			t.Errorf("%s %s: hash %v (%v), want the table's %v", c.typ, c.json, got, err, want)
		}
		if untyped, _ := hashOf(c.typ, nil, c.json); untyped != want {
			t.Errorf("%s %s without a table type: hash %v, want %v (times of day are canonical in ns)", c.typ, c.json, untyped, want)
		}
	}
	if _, err := hashOf(arrow.FixedWidthTypes.Time64ns, us, `[7200000000001]`); !errors.Is(err, ErrBadKey) {
		t.Errorf("a time in ns that is not a whole µs: %v, want ErrBadKey", err)
	}
}
