package checksum

import (
	"crypto/sha256"
	"encoding/hex"
	"io"

	"github.com/pswap/pswap/manifest"
)

// Appended is the content checksum of an append's generation (package
// swap): SHA-256 over the base generation's content checksum and the
// FilesDigest of the run's files, "<base>\n<digest>\n". It chains: an
// append computes it from its base's checksum and its own files alone, so
// its cost does not grow with the partition's earlier appends (the Files
// checksum of all the files would: they are not all in an append's
// manifest, see manifest.Segment). Two generations compare equal only
// when they hold the same files appended in the same runs.
const Appended = "appended-sha256"

// OfAppend is the Appended checksum of an append of files own onto a base
// generation of content checksum base ("" for none).
func OfAppend(base string, own []manifest.File) string {
	h := sha256.New()
	io.WriteString(h, base+"\n"+FilesDigest(own)+"\n")
	return Appended + ":" + hex.EncodeToString(h.Sum(nil))
}
