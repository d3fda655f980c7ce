package tablemeta

import (
	"errors"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/strictjson"
)

// A table of the table-level layout is version 2.0 on the store, so that a
// pswap of the legacy layout (which reads 1.x and refuses another major
// version) cannot write partitions this version never looks at; a 2.x
// document is of that layout whether or not it spells the field.
func TestTableLevelLayoutIsVersion2(t *testing.T) {
	tb, err := Decode(golden(t))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := Encode(tb)
	if err != nil || !strings.Contains(string(enc), `"version": "1.2"`) {
		t.Fatalf("a legacy-layout table: %v\n%s", err, enc)
	}
	tb.Layout = LayoutTable
	enc, err = Encode(tb)
	if err != nil || !strings.Contains(string(enc), `"version": "2.0"`) || !strings.Contains(string(enc), `"layout": 2`) {
		t.Fatalf("a table-level-layout table: %v\n%s", err, enc)
	}
	back, err := Decode(enc)
	if err != nil || back.Layout != LayoutTable || back.Version != VersionLayout {
		t.Fatalf("decoded back: %+v, %v", back, err)
	}
	implied, err := Decode([]byte(strings.Replace(string(enc), `"layout": 2`, `"layout": 0`, 1)))
	if err != nil || implied.Layout != LayoutTable {
		t.Fatalf("2.0 without the field: %+v, %v", implied, err)
	}
	// What a 1.x-only reader does with it: this package's own rule for
	// another major version, applied to the version it knew.
	if _, err := Decode([]byte(strings.Replace(string(enc), `"version": "2.0"`, `"version": "3.0"`, 1))); !errors.Is(err, ErrUnsupportedVersion) ||
		!errors.Is(err, strictjson.ErrNewerFormat) || !strings.Contains(err.Error(), "written by a newer pswap (format 3.0); upgrade pswap") {
		t.Fatalf("a newer major version: %v, want ErrNewerFormat", err)
	}
	// A newer minor of 2 is read, its unknown fields ignored.
	if _, err := Decode([]byte(strings.Replace(string(enc), `"version": "2.0",`, `"version": "2.3", "retention": 7,`, 1))); err != nil {
		t.Fatalf("2.3: %v", err)
	}
	// published_ids is a field of 1.2 and of every 2.x.
	tb.PublishedIDs = true
	if enc, err = Encode(tb); err != nil {
		t.Fatal(err)
	}
	if back, err := Decode(enc); err != nil || !back.PublishedIDs {
		t.Fatalf("2.0 with published_ids: %+v, %v", back, err)
	}
}
