package manifest

import (
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// MaxRunIDBytes bounds a run id, MaxWriterBytes the writer field.
const (
	MaxRunIDBytes  = 256
	MaxWriterBytes = 256
)

// NewGenerationID returns a fresh generation id: a UUID version 7 in
// canonical lowercase form. Ids made later sort later (lexically), which
// makes listings of generations time-ordered. It panics only if the
// system's source of randomness fails.
func NewGenerationID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// ValidateGenerationID reports whether s is a generation id: a UUID version
// 7 (RFC 9562 variant) written in the canonical lowercase 8-4-4-4-12 form.
// Other spellings of the same UUID (upper case, braces, urn:uuid:) are
// rejected so that one generation has exactly one name and one prefix.
func ValidateGenerationID(s string) error {
	if p := checkGenerationID(s); p != "" {
		return invalid("manifest", "generation id", s, "%s", p)
	}
	return nil
}

// checkGenerationID returns what is wrong with s, or "".
func checkGenerationID(s string) string {
	if s == "" {
		return "empty"
	}
	if len(s) != 36 {
		return "not a UUID in canonical 8-4-4-4-12 form"
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "not a UUID"
	}
	if u.String() != s {
		return "not in canonical lowercase form"
	}
	if u.Variant() != uuid.RFC4122 {
		return "not an RFC 9562 variant UUID"
	}
	if v := u.Version(); v != 7 {
		return fmt.Sprintf("UUID version %d, want 7", int(v))
	}
	return ""
}

// GenerationTime returns the creation time embedded in a generation id
// (millisecond precision, taken from the clock of the machine that made it).
func GenerationTime(id string) (time.Time, error) {
	if err := ValidateGenerationID(id); err != nil {
		return time.Time{}, err
	}
	sec, nsec := uuid.MustParse(id).Time().UnixTime()
	return time.Unix(sec, nsec).UTC(), nil
}

// ValidateRunID reports whether s may be used as a run id: at most 256 bytes
// of valid UTF-8, every character printable (letters, marks, numbers,
// punctuation, symbols and the ASCII space; no control or format
// characters). The empty string (no run id) is allowed.
func ValidateRunID(s string) error {
	if p := checkPrintable(s, MaxRunIDBytes); p != "" {
		return invalid("manifest", "run id", s, "%s", p)
	}
	return nil
}

// checkPrintable returns what is wrong with a free-text field, or "".
func checkPrintable(s string, maxBytes int) string {
	if len(s) > maxBytes {
		return fmt.Sprintf("longer than %d bytes", maxBytes)
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("contains the non-printable character %U", r)
		}
	}
	return ""
}
