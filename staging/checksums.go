package staging

import "github.com/pswap/pswap/internal/checksum"

// The algorithms are defined in one place, internal/checksum (with the
// adopted-sha256 of adopted generations); these are their public names.

// Content checksum algorithms (the part of Content.ContentChecksum before
// the colon; see doc.go).
const (
	// ChecksumColSum is the content checksum staging records: per row a
	// fold of per-column value hashes, computed a column at a time.
	ChecksumColSum = checksum.ColSum
	// ChecksumRowSum is the content checksum of generations staged before
	// colsum128: XXH3-128 of each row's canonical encoding. It is still
	// computed where an older generation is compared or verified.
	ChecksumRowSum = checksum.RowSum
	// ChecksumFiles is the content checksum of a generation holding files
	// added with CheckFooter, whose rows were not read: SHA-256 over the
	// sorted lines "<size> <file checksum>\n" of all the generation's
	// files, paths left out. The same bytes under any file names have the
	// same checksum; the same rows in other bytes do not.
	ChecksumFiles = checksum.Files
)

// ChecksumAlgo is the algorithm of a content checksum "<algo>:<hex>" (one
// of the Checksum constants for staging's own).
func ChecksumAlgo(sum string) string {
	return checksum.Algo(sum)
}
