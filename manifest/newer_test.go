package manifest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/strictjson"
)

// A pointer or manifest of a newer major version was written by a newer
// pswap: the refusal says so and matches ErrNewerFormat (and still
// ErrUnsupportedVersion); an older major version is not newer.
func TestNewerMajorVersionNamed(t *testing.T) {
	for _, c := range []struct {
		file, from string
		decode     func([]byte) error
	}{
		{"valid_pointer.json", `"version": "1.`, func(b []byte) error { _, err := DecodePointer(b); return err }},
		{"valid_manifest.json", `"version": "1.`, func(b []byte) error { _, err := Decode(b); return err }},
	} {
		data, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), c.from) {
			t.Fatalf("%s has no %s", c.file, c.from)
		}
		err = c.decode([]byte(strings.Replace(string(data), c.from, `"version": "3.`, 1)))
		if !errors.Is(err, strictjson.ErrNewerFormat) || !errors.Is(err, ErrUnsupportedVersion) ||
			!strings.Contains(err.Error(), "written by a newer pswap (format 3.") || !strings.Contains(err.Error(), "upgrade pswap") {
			t.Errorf("%s of version 3: %v, want ErrNewerFormat", c.file, err)
		}
		err = c.decode([]byte(strings.Replace(string(data), c.from, `"version": "0.`, 1)))
		if !errors.Is(err, ErrUnsupportedVersion) || errors.Is(err, strictjson.ErrNewerFormat) {
			t.Errorf("%s of version 0: %v, want ErrUnsupportedVersion only", c.file, err)
		}
	}
}
