package lakehouse

import (
	"bytes"
	"testing"

	"github.com/apache/iceberg-go"
)

// FuzzCanonicalAvro: canonicalAvro never panics, never changes a file's
// length (the manifest list records it), and a file it changes reads the
// same as before.
func FuzzCanonicalAvro(f *testing.F) {
	var buf bytes.Buffer
	seq := int64(1)
	if err := iceberg.WriteManifestList(2, &buf, 7, nil, &seq, 0, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:40])
	f.Add([]byte("Obj\x01\x03\x02a\x02b"))
	f.Add([]byte("Obj\x01\x01\x02\x02a\x02b\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m [16]byte
		copy(m[:], "0123456789abcdef")
		out := canonicalAvro(bytes.Clone(data), m)
		if len(out) != len(data) {
			t.Fatalf("length %d -> %d", len(data), len(out))
		}
		if bytes.Equal(out, data) {
			return
		}
		a, errA := readManifestList(data)
		b, errB := readManifestList(out)
		if (errA == nil) != (errB == nil) || len(a) != len(b) {
			t.Fatalf("reads differently: %d %v / %d %v", len(a), errA, len(b), errB)
		}
		if again := canonicalAvro(out, m); !bytes.Equal(again, out) {
			t.Fatal("not idempotent")
		}
	})
}
