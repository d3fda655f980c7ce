package tablemeta

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics, every error matches ErrInvalid, and a
// document it accepts re-encodes to a document that decodes to the same
// table and encodes to the same bytes again.
func FuzzDecode(f *testing.F) {
	g := string(golden(f))
	f.Add([]byte(g))
	f.Add([]byte(g[:len(g)/2]))
	f.Add([]byte(strings.Replace(g, `"version": "1.2"`, `"version": "1.9", "x": [1]`, 1)))
	f.Add([]byte(strings.Replace(g, `"long"`, `{"type": "struct", "fields": [{"id": 11, "name": "a", "type": "int", "nullable": true}]}`, 1)))
	f.Add([]byte(strings.Replace(g, `"last_column_id": 10`, `"last_column_id": 11`, 1)))
	f.Add([]byte(`{"format":"pswap-table","version":"1.0"}`))
	f.Add([]byte(strings.Replace(g, `"schema_id"`, `"time_zone": "Europe/Berlin", "schema_id"`, 1)))
	f.Add([]byte(strings.Replace(g, `"schema_id"`, `"time_zone": "UTC", "schema_id"`, 1)))
	f.Add([]byte(strings.Replace(g, `"version": "1.2",`, `"version": "1.2", "published_ids": true,`, 1)))
	f.Add([]byte(strings.Replace(g, `"version": "1.2",`, `"version": "1.1", "published_ids": true,`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid: %v", err)
			}
			return
		}
		enc, err := Encode(tb)
		if err != nil {
			t.Fatalf("accepted document does not encode: %v", err)
		}
		back, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoded document does not decode: %v\n%s", err, enc)
		}
		if !back.Schema.Equal(tb.Schema) || back.LastColumnID != tb.LastColumnID || back.SchemaID != tb.SchemaID || back.TimeZone != tb.TimeZone {
			t.Fatalf("round trip changed the table")
		}
		enc2, _ := Encode(back)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not canonical")
		}
	})
}

// FuzzCheckKey: CheckKey never panics, and its errors are ErrPartitionMismatch
// or a malformed key.
func FuzzCheckKey(f *testing.F) {
	for _, k := range []string{"dt=2026-11-29", "dt=2026-13-45", "dt=20261127", "dt=2026-11-27/hr=13", "year=2026/month=02/day=31"} {
		f.Add("dt=2026-11-29", k)
		f.Add("year=2026/month=11/day=29", k)
	}
	f.Fuzz(func(t *testing.T, first, key string) {
		cols, err := InferPartitionColumns(first, nil)
		if err != nil {
			return
		}
		tb := &Table{PartitionColumns: cols}
		for i := range tb.PartitionColumns {
			tb.PartitionColumns[i].ID = i + 1
		}
		if err := tb.CheckKey(first); err != nil {
			t.Fatalf("the key a table was inferred from does not fit it: %v", err)
		}
		_ = tb.CheckKey(key)
	})
}
