package tablemeta

import (
	"errors"
	"strings"
	"testing"
)

// published_ids (1.2) round-trips, is omitted when false, and reads only
// as a boolean; a 1.1 document holding it is refused (an unknown field of
// its own minor), and a 1.1 reader ignores it in a 1.2 document (as
// TestDecodeNewerMinorIgnoresAdditions shows for any addition).
func TestPublishedIDsRoundTrip(t *testing.T) {
	tb, err := Decode(golden(t))
	if err != nil {
		t.Fatal(err)
	}
	if tb.PublishedIDs {
		t.Fatal("the golden document is marked")
	}
	plain, err := Encode(tb)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "published_ids") {
		t.Fatalf("an unmarked table encodes the mark:\n%s", plain)
	}
	tb.PublishedIDs = true
	enc, err := Encode(tb)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(enc), `"published_ids": true`) || !strings.Contains(string(enc), `"version": "1.2"`) {
		t.Fatalf("a marked table encodes as\n%s", enc)
	}
	back, err := Decode(enc)
	if err != nil || !back.PublishedIDs {
		t.Fatalf("decoded %+v, %v: want marked", back, err)
	}
	if c := back.Clone(); !c.PublishedIDs {
		t.Fatal("Clone drops the mark")
	}
	for _, c := range []struct{ name, doc, want string }{
		{"not bool", strings.Replace(string(enc), `"published_ids": true`, `"published_ids": "yes"`, 1), "published_ids"},
		{"in 1.1", strings.Replace(string(enc), `"version": "1.2"`, `"version": "1.1"`, 1), "published_ids"},
	} {
		if _, err := Decode([]byte(c.doc)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid naming %q", c.name, err, c.want)
		}
	}
}
