package manifest

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/strictjson"
	"github.com/pswap/pswap/store"
)

// Limits enforced by Validate and Decode.
const (
	// MaxDocumentBytes bounds an encoded manifest or pointer. Decode rejects
	// larger inputs before parsing them; Encode refuses to produce one.
	MaxDocumentBytes = 64 << 20
	// MaxFiles bounds the number of files of one generation.
	MaxFiles = 100_000
	// MaxFileSize is the largest single object S3 stores (5 TiB).
	MaxFileSize int64 = 5 << 40
	// MaxPathBytes bounds a file path (relative to the generation prefix).
	MaxPathBytes = 512
	// MaxSchemaBytes bounds the schema fingerprint.
	MaxSchemaBytes = 1 << 20
)

// ValidateFilePath reports whether p may name a file of a generation: a
// relative slash-separated path of at most 512 bytes of valid UTF-8, with no
// empty, "." or ".." segments, no leading slash, no backslash, no control
// characters, and no segment starting with "_" or "." (Hive-style readers
// treat such names as hidden, so the data would silently vanish from queries).
// Such a path can never leave the generation's prefix.
func ValidateFilePath(p string) error {
	if prob := checkFilePath(p); prob != "" {
		return invalid("manifest", "file path", p, "%s", prob)
	}
	return nil
}

func checkFilePath(p string) string {
	switch {
	case p == "":
		return "empty"
	case len(p) > MaxPathBytes:
		return fmt.Sprintf("longer than %d bytes", MaxPathBytes)
	case !utf8.ValidString(p):
		return "not valid UTF-8"
	case p[0] == '/':
		return "is absolute; must be relative to the generation prefix"
	}
	for _, r := range p {
		if r == '\\' {
			return "contains a backslash"
		}
		if isControl(r) {
			return fmt.Sprintf("contains the control character %U", r)
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "..":
			return "escapes the generation prefix"
		case seg == "":
			return "has an empty segment"
		case seg == ".":
			return `has a "." segment`
		case seg[0] == '_' || seg[0] == '.':
			return fmt.Sprintf("segment %q starts with %q (hidden from readers)", seg, seg[:1])
		}
	}
	if err := store.ValidateKey(p); err != nil {
		return err.Error()
	}
	return ""
}

// isControl reports C0 and C1 control characters and DEL.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)
}

const fileChecksumPrefix = "sha256:"

// SHA256Checksum formats a SHA-256 digest (32 bytes, e.g. from sha256.Sum256
// or hash.Hash.Sum(nil)) as a file checksum: "sha256:" followed by 64
// lowercase hex digits.
func SHA256Checksum(sum []byte) string {
	return fileChecksumPrefix + hex.EncodeToString(sum)
}

// ETagChecksumPrefix starts the checksum of a file that pswap adopted or
// copied without reading it: the store's own version token of the object
// (an S3 ETag, the file backend's content hash), which changes whenever the
// object is replaced. Verify compares it with the object's current ETag.
const ETagChecksumPrefix = "etag:"

// maxETagChars bounds the token of an "etag:" checksum.
const maxETagChars = 256

// ETagChecksum formats a store ETag as a file checksum: "etag:" followed by
// the token without its surrounding double quotes. It fails for a token
// that is empty, longer than 256 characters, or has characters other than
// ASCII letters, digits and "-_+/=." (S3 ETags are hex digests, with "-N"
// for multipart uploads).
func ETagChecksum(etag string) (string, error) {
	s := ETagChecksumPrefix + strings.Trim(etag, `"`)
	if p := checkFileChecksum(s); p != "" {
		return "", invalid("manifest", "file checksum", s, "%s", p)
	}
	return s, nil
}

// SameETag reports whether a store ETag is the version an "etag:" checksum
// recorded (quotes ignored). It is false for other kinds of checksum.
func SameETag(checksum, etag string) bool {
	tok, ok := strings.CutPrefix(checksum, ETagChecksumPrefix)
	return ok && tok != "" && tok == strings.Trim(etag, `"`)
}

// ValidateFileChecksum reports whether s is a file checksum: "sha256:"
// followed by exactly 64 lowercase hex digits, or "etag:" followed by a
// store's version token (see ETagChecksum).
func ValidateFileChecksum(s string) error {
	if p := checkFileChecksum(s); p != "" {
		return invalid("manifest", "file checksum", s, "%s", p)
	}
	return nil
}

func checkFileChecksum(s string) string {
	if tok, ok := strings.CutPrefix(s, ETagChecksumPrefix); ok {
		if tok == "" || len(tok) > maxETagChars {
			return fmt.Sprintf("etag must have 1 to %d characters", maxETagChars)
		}
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_+/=.", c) >= 0) {
				return fmt.Sprintf("etag has the character %q (want letters, digits and -_+/=.)", c)
			}
		}
		return ""
	}
	hexPart, ok := strings.CutPrefix(s, fileChecksumPrefix)
	if !ok {
		return `must start with "sha256:" or "etag:"`
	}
	if len(hexPart) != 64 {
		return fmt.Sprintf("has %d hex digits, want 64", len(hexPart))
	}
	if !isLowerHex(hexPart) {
		return "digest is not lowercase hex"
	}
	return ""
}

// ValidateContentChecksum reports whether s is a content checksum:
// "<algo>:<hex>" where algo is 1 to 32 characters of [a-z0-9-] and hex is an
// even number (16 to 128) of lowercase hex digits.
func ValidateContentChecksum(s string) error {
	if p := checkContentChecksum(s); p != "" {
		return invalid("manifest", "content checksum", s, "%s", p)
	}
	return nil
}

func checkContentChecksum(s string) string {
	if s == "" {
		return "empty"
	}
	algo, hexPart, ok := strings.Cut(s, ":")
	if !ok {
		return `must have the form "<algo>:<hex>"`
	}
	if len(algo) < 1 || len(algo) > 32 {
		return "algorithm name must be 1 to 32 characters"
	}
	for i := 0; i < len(algo); i++ {
		c := algo[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return "algorithm name must use only [a-z0-9-]"
		}
	}
	if len(hexPart) < 16 || len(hexPart) > 128 || len(hexPart)%2 != 0 {
		return fmt.Sprintf("has %d hex digits, want an even number from 16 to 128", len(hexPart))
	}
	if !isLowerHex(hexPart) {
		return "digest is not lowercase hex"
	}
	return ""
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// checkSchema allows any valid UTF-8 text without control characters other
// than tab and newline (schemas are often printed on several lines).
func checkSchema(s string) string {
	if len(s) > MaxSchemaBytes {
		return fmt.Sprintf("longer than %d bytes", MaxSchemaBytes)
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	for _, r := range s {
		if isControl(r) && r != '\t' && r != '\n' {
			return fmt.Sprintf("contains the control character %U", r)
		}
	}
	return ""
}

// checkTime requires a non-zero instant whose UTC form has a four-digit year
// (RFC 3339 cannot write any other).
func checkTime(t time.Time) string {
	if t.IsZero() {
		return "missing (zero time)"
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Sprintf("year %d is outside 0001..9999 in UTC", y)
	}
	return ""
}

var (
	ourMajor, _, _ = strictjson.ParseVersion(Version)
	// ourMinor is the highest minor version of a manifest this package
	// knows (and writes, for a manifest with column statistics): a
	// document of a higher one may have fields it does not know.
	_, ourMinor, _        = strictjson.ParseVersion(StatsVersion)
	_, ourPointerMinor, _ = strictjson.ParseVersion(PointerVersion)
	// segmentedMajor is the major version of a manifest with segments
	// (SegmentedVersion), which this package reads beside ourMajor's.
	segmentedMajor, _, _ = strictjson.ParseVersion(SegmentedVersion)
)

// checkVersion validates a declared version. It reports whether the document
// comes from a newer minor version of the format (whose unknown fields are
// then ignored), or an error.
func checkVersion(doc, v string) (newerMinor bool, err *Error) {
	major, minor, ok := strictjson.ParseVersion(v)
	if !ok {
		return false, invalid(doc, "version", v, `must have the form "major.minor"`)
	}
	if doc == "manifest" && major == segmentedMajor {
		return minor > 0, nil
	}
	if major != ourMajor {
		newest, knows := ourMajor, strconv.Itoa(ourMajor)
		if doc == "manifest" {
			newest, knows = segmentedMajor, knows+" and "+strconv.Itoa(segmentedMajor)
		}
		if major > newest {
			e := invalid(doc, "version", v, "unsupported major version %d (this reader knows %s): %s", major, knows, strictjson.NewerFormatProblem(v))
			e.Err, e.Cause = ErrUnsupportedVersion, strictjson.ErrNewerFormat
			return false, e
		}
		e := invalid(doc, "version", v, "unsupported major version %d (this reader knows %s)", major, knows)
		e.Err = ErrUnsupportedVersion
		return false, e
	}
	if doc == "pointer" {
		return minor > ourPointerMinor, nil
	}
	return minor > ourMinor, nil
}
