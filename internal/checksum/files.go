package checksum

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pswap/pswap/internal/errkind"
	"github.com/pswap/pswap/manifest"
)

// The content checksum algorithms (the part of a content checksum before
// the colon).
const (
	// ColSum is the content checksum staging records: per row a fold of
	// per-column value hashes, computed a column at a time.
	ColSum = "colsum128"
	// RowSum is the content checksum of generations staged before
	// colsum128: XXH3-128 of each row's canonical encoding. It is still
	// computed where an older generation is compared or verified.
	RowSum = "rowsum128"
	// Files is the content checksum of a generation holding files added
	// with the footer-only check, whose rows were not read: SHA-256 over
	// the sorted lines "<size> <file checksum>\n" of all the generation's
	// files, paths left out. The same bytes under any file names have the
	// same checksum; the same rows in other bytes do not.
	Files = "files-sha256"
	// Adopted is the content checksum of a generation an external engine
	// wrote and pswap adopted: the same digest as Files, under its own
	// name, so that adopted and staged generations never compare equal.
	// Each file's line names its bytes: "md5:<hex>" where the store keeps
	// their MD5 beside a version that is new with every write (GCS,
	// Azure), else its "etag:" checksum (S3, file://).
	Adopted = "adopted-sha256"
)

// ErrUnsupported: a column type no checksum hashes (the staging package
// reports it as its own ErrUnsupported).
var ErrUnsupported = errkind.New("unsupported column type", errkind.ErrBadInput)

// Algo is the algorithm of a content checksum "<algo>:<hex>".
func Algo(sum string) string {
	algo, _, _ := strings.Cut(sum, ":")
	return algo
}

// OfFiles is the Files checksum of a generation's files.
func OfFiles(files []manifest.File) string { return Files + ":" + FilesDigest(files) }

// OfAdopted is the Adopted checksum of a generation's files.
func OfAdopted(files []manifest.File) string { return Adopted + ":" + FilesDigest(files) }

// FilesDigest is the hex SHA-256 of a file list's sorted lines "<size>
// <checksum>\n", paths left out: the same bytes under any names give the
// same digest.
func FilesDigest(files []manifest.File) string {
	lines := make([]string, len(files))
	for i, f := range files {
		lines[i] = fmt.Sprintf("%d %s\n", f.Size, f.Checksum)
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		io.WriteString(h, l)
	}
	return hex.EncodeToString(h.Sum(nil))
}
