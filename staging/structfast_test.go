package staging

import (
	"github.com/pswap/pswap/internal/checksum"

	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

type edgeRow struct {
	I    int        `parquet:"i"`
	I16  int16      `parquet:"i16"`
	U8   uint8      `parquet:"u8"`
	U64  uint64     `parquet:"u64"`
	D64  int64      `parquet:"d64,decimal(3:18)"`
	S    string     `parquet:"s,bytes"`
	B    []byte     `parquet:"b,string"`
	Ms   time.Time  `parquet:"ms,timestamp(millisecond)"`
	Ns   *time.Time `parquet:"ns,optional,timestamp"`
	P    *float32   `parquet:"p,optional"`
	Skip string     `parquet:"-"`
	priv int
}

// TestFastStructHashMatchesDeconstruct: hashing fields directly gives the
// same checksum as hashing parquet-go's deconstructed rows, which are what
// the files hold.
func TestFastStructHashMatchesDeconstruct(t *testing.T) {
	old := time.Date(1901, 3, 4, 5, 6, 7, 123456789, time.UTC)
	f := float32(-1.25)
	edges := []edgeRow{
		{I: -1, U64: 1 << 63, D64: -12345, S: "ab", B: []byte("cd"), Ms: old, Ns: &old, P: &f},
		{I: 1 << 40, I16: -5, U8: 7, priv: 1, Ms: time.Unix(-1, 999_999_999).UTC()},
	}
	checksum := func(slow bool, write func(*Stager) error) (string, bool) {
		slowStructHash = slow
		defer func() { slowStructHash = false }()
		_, s := newMem(t, Options{})
		if err := write(s); err != nil {
			t.Fatal(err)
		}
		var fast bool
		for _, si := range s.structs {
			fast = si.fast != nil
		}
		c, err := s.Finish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c.ContentChecksum, fast
	}
	for name, write := range map[string]func(*Stager) error{
		"row":      func(s *Stager) error { return Write(s, makeRows(500, 41)...) },
		"textRow":  func(s *Stager) error { return Write(s, textRows()...) },
		"benchRow": func(s *Stager) error { b := make([]benchRow, 100); fillBench(b, 5); return Write(s, b...) },
		"edgeRow":  func(s *Stager) error { return Write(s, edges...) },
	} {
		slow, _ := checksum(true, write)
		fast, usedFast := checksum(false, write)
		if !usedFast {
			t.Errorf("%s: no direct encoders", name)
		}
		if slow != fast {
			t.Errorf("%s: direct hashing %s, deconstructed %s", name, fast, slow)
		}
	}
}

// TestFastStructFallback: shapes the direct encoders do not cover still
// work through parquet-go's rows.
func TestFastStructFallback(t *testing.T) {
	type optionalValue struct {
		A int64 `parquet:"a,optional"` // zero is written as null
	}
	type embedded struct {
		otherRow
	}
	// parquet-go cannot map some tags; Write refuses them.
	type narrowed struct {
		A int64 `parquet:"a,int(16)"`
	}
	if _, s := newMem(t, Options{}); !errors.Is(Write(s, narrowed{1}), ErrUnsupported) {
		t.Error("int64 with int(16) was not refused")
	}
	for name, tc := range map[string]struct {
		typ   reflect.Type
		write func(*Stager) error
	}{
		"optional non-pointer": {reflect.TypeFor[optionalValue](), func(s *Stager) error { return Write(s, optionalValue{0}, optionalValue{1}) }},
		"embedded":             {reflect.TypeFor[embedded](), func(s *Stager) error { return Write(s, embedded{otherRow{1, "x"}}) }},
	} {
		st, s := newMem(t, Options{})
		if err := tc.write(s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if si := s.structs[tc.typ]; si == nil || si.fast != nil {
			t.Errorf("%s: want the deconstructing path", name)
		}
		c := finish(t, s)
		checkContent(t, st, c, c.Rows)
	}
	// Zero of an optional non-pointer field hashes as null.
	type ptrValue struct {
		A *int64 `parquet:"a,optional"`
	}
	_, s1 := newMem(t, Options{})
	_, s2 := newMem(t, Options{})
	if err := Write(s1, optionalValue{0}); err != nil {
		t.Fatal(err)
	}
	if err := Write(s2, ptrValue{nil}); err != nil {
		t.Fatal(err)
	}
	if a, b := finish(t, s1), finish(t, s2); a.ContentChecksum != b.ContentChecksum {
		t.Errorf("optional zero %s, nil pointer %s", a.ContentChecksum, b.ContentChecksum)
	}
}

// kindRow has a field of every hashKind hashCols computes from memory,
// and some it encodes first.
type kindRow struct {
	I64 int64      `parquet:"i64"`
	I   int        `parquet:"i"`
	I32 int32      `parquet:"i32"`
	F64 float64    `parquet:"f64"`
	F32 float32    `parquet:"f32"`
	B   bool       `parquet:"b"`
	S   string     `parquet:"s"`
	SB  string     `parquet:"sb,bytes"`
	Ms  time.Time  `parquet:"ms,timestamp(millisecond)"`
	Us  time.Time  `parquet:"us,timestamp(microsecond)"`
	Ns  time.Time  `parquet:"ns,timestamp(nanosecond)"`
	PS  *string    `parquet:"ps,optional"`
	PI  *int64     `parquet:"pi,optional"`
	PF  *float64   `parquet:"pf,optional"`
	PT  *time.Time `parquet:"pt,optional,timestamp(microsecond)"`
	I16 int16      `parquet:"i16"`               // encoded first
	D   int32      `parquet:"d,date"`            // encoded first
	Raw []byte     `parquet:"raw"`               // encoded first
	Dec int64      `parquet:"dec,decimal(2:18)"` // encoded first
}

func kindRows(n int) []kindRow {
	nans := []float64{math.NaN(), math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000123)}
	specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	rows := make([]kindRow, n)
	for i := range rows {
		r := &rows[i]
		r.I64 = int64(i) * -7919
		r.I = i << 33
		r.I32 = math.MinInt32 + int32(i)
		switch i % 4 {
		case 0:
			r.F64 = nans[i%len(nans)]
			r.F32 = float32(math.NaN())
		case 1:
			r.F64 = specials[i%len(specials)]
			r.F32 = math.Float32frombits(0xffc00001) // another NaN
		default:
			r.F64 = float64(i) / 3
			r.F32 = -float32(i)
		}
		r.B = i%3 == 0
		r.S = strings.Repeat("x", i%40)
		r.SB = fmt.Sprint(i % 16)
		ts := time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC).Add(time.Duration(i) * 1234567 * time.Nanosecond)
		r.Ms, r.Us, r.Ns = ts, ts, ts
		if i%5 != 0 {
			s, v, f, t := fmt.Sprint("p", i), int64(i), float64(i), ts
			r.PS, r.PI, r.PF, r.PT = &s, &v, &f, &t
		}
		r.I16 = int16(i)
		r.D = int32(i - 500)
		r.Raw = []byte{byte(i), 0}
		r.Dec = int64(i) * 101
	}
	return rows
}

// TestHashColsMatchesEncoding: the column-at-a-time hash of structs gives,
// for every kind it reads from memory (NaNs of any payload, negative zero,
// nulls, times before 1970), the checksum of hashing each value's
// encoding, over several blocks of rows; and the parquet-go rows agree.
func TestHashColsMatchesEncoding(t *testing.T) {
	rows := kindRows(2*hashBlock + 77)
	_, s := newMem(t, Options{})
	if err := Write(s, rows[:1]...); err != nil {
		t.Fatal(err)
	}
	si := s.structs[reflect.TypeFor[kindRow]()]
	if si == nil || si.fast == nil {
		t.Fatal("kindRow has no direct encoders")
	}
	seen := map[hashKind]bool{}
	for _, f := range si.fast {
		seen[f.kind] = true
	}
	for k := hashEncoded; k <= hashTimeNano; k++ {
		if !seen[k] {
			t.Errorf("kindRow has no field of hashKind %d", k)
		}
	}
	var byCols, byEnc checksum.Sums
	hashCols(si, rows, &byCols)
	hashFast(s, si, rows, &byEnc)
	if byCols != byEnc {
		t.Fatalf("hashCols %x, encoded values %x", byCols.Col, byEnc.Col)
	}
	// Any single value changed changes the sum.
	for m, mutate := range []func(r *kindRow){
		func(r *kindRow) { r.I64++ },
		func(r *kindRow) { r.F64 = math.Copysign(0, -1) },
		func(r *kindRow) { r.B = !r.B },
		func(r *kindRow) { r.S += "y" },
		func(r *kindRow) { r.Us = r.Us.Add(time.Microsecond) },
		func(r *kindRow) { r.PI = new(int64) }, // that row's PI is null
	} {
		changed := slices.Clone(rows)
		mutate(&changed[hashBlock+3])
		var c checksum.Sums
		hashCols(si, changed, &c)
		if c == byCols {
			t.Errorf("mutation %d left the checksum as it was", m)
		}
	}
	// And against parquet-go's deconstructed rows (the slow path).
	checksum := func(slow bool) string {
		slowStructHash = slow
		defer func() { slowStructHash = false }()
		_, s := newMem(t, Options{})
		if err := Write(s, rows...); err != nil {
			t.Fatal(err)
		}
		c, err := s.Finish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c.ContentChecksum
	}
	if fast, slow := checksum(false), checksum(true); fast != slow {
		t.Errorf("direct %s, deconstructed %s", fast, slow)
	}
}
