package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// EncodeColumns and DecodeColumns carry a file's statistics outside a
// manifest (the staged record) with the manifest's rules.
func TestColumnsCodecRoundTrip(t *testing.T) {
	cols := []ColumnStats{
		{Name: "id", Size: 52, Values: 2, Nulls: 0, Type: "long", Min: "1", Max: "2"},
		{Name: "ts", Size: 9, Values: 2, Nulls: -1},
	}
	data := EncodeColumns(cols)
	got, err := DecodeColumns("doc", "files[0].columns", data)
	if err != nil || !reflect.DeepEqual(got, cols) {
		t.Fatalf("round trip: %+v %v\n%s", got, err, data)
	}
	if got, err := DecodeColumns("doc", "c", EncodeColumns(nil)); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no columns: %+v %v", got, err)
	}
	for _, c := range []struct{ in, want string }{
		{`[{"name": "a", "size": 1, "values": 1}, {"name": "a", "size": 1, "values": 1}]`, `doc: c[1].name "a": duplicates c[0].name`},
		{`[{"name": "a", "size": 1, "values": 1, "x": 2}]`, `doc: c[0].x: unknown field`},
		{`[{"name": "a", "name": "b"}]`, `doc: c: `},
		{`[{"name": "a", "size": 1, "values": 1}] {}`, `doc: c: `},
		{`{}`, `doc: c: `},
	} {
		_, err := DecodeColumns("doc", "c", []byte(c.in))
		if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid starting %q", c.in, err, c.want)
		}
	}
}

func FuzzDecodeColumns(f *testing.F) {
	f.Add(EncodeColumns([]ColumnStats{{Name: "id", Size: 5, Values: 2, Nulls: 0, Type: "long", Min: "1", Max: "2"}}))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"name": "a", "size": 1, "values": 1, "min": ""}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cols, err := DecodeColumns("doc", "c", data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid: %v", err)
			}
			return
		}
		again, err := DecodeColumns("doc", "c", EncodeColumns(cols))
		if err != nil || !reflect.DeepEqual(again, cols) {
			t.Fatalf("re-encoding changes the statistics: %+v %v, want %+v", again, err, cols)
		}
	})
}
