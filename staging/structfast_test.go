package staging

import (
	"context"
	"errors"
	"reflect"
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
