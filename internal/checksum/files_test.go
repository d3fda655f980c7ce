package checksum

import (
	"testing"

	"github.com/pswap/pswap/manifest"
)

// FilesDigest leaves names out and order does not count; sizes and
// checksums do.
func TestFilesDigest(t *testing.T) {
	a := []manifest.File{{Path: "a", Size: 1, Checksum: "etag:x"}, {Path: "b", Size: 2, Checksum: "etag:y"}}
	b := []manifest.File{{Path: "z", Size: 2, Checksum: "etag:y"}, {Path: "q", Size: 1, Checksum: "etag:x"}}
	if FilesDigest(a) != FilesDigest(b) {
		t.Error("the same bytes under other names and order give another digest")
	}
	c := []manifest.File{{Path: "a", Size: 1, Checksum: "etag:x"}, {Path: "b", Size: 3, Checksum: "etag:y"}}
	d := []manifest.File{{Path: "a", Size: 1, Checksum: "etag:x"}, {Path: "b", Size: 2, Checksum: "etag:w"}}
	if FilesDigest(a) == FilesDigest(c) || FilesDigest(a) == FilesDigest(d) {
		t.Error("another size or checksum gives the same digest")
	}
	if len(FilesDigest(nil)) != 64 {
		t.Errorf("digest %q", FilesDigest(nil))
	}
}
