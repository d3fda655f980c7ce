package manifest

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/errkind"
)

// ErrInvalid is matched (with errors.Is) by every error that reports a
// malformed, inconsistent or unsafe manifest or pointer, whether it was found
// while decoding a document or while validating a value before encoding it.
var ErrInvalid = errkind.New("invalid pswap document", errkind.ErrPermanent)

// ErrUnsupportedVersion is matched by errors for a document whose major
// version this package does not know. It also matches ErrInvalid.
var ErrUnsupportedVersion = fmt.Errorf("%w: unsupported version", ErrInvalid)

// Error describes one problem with one field of a manifest or pointer. Its
// message names the document kind, the field (as a JSON path such as
// "files[3].path"), the offending value where it helps, and the problem:
//
//	manifest: files[3].path "../x": escapes the generation prefix
//
// Every *Error matches ErrInvalid; version errors also match
// ErrUnsupportedVersion.
type Error struct {
	Doc     string // "manifest" or "pointer"
	Field   string // JSON path of the field; "document" for the document as a whole
	Value   string // the offending value as shown in the message (already quoted if a string); may be empty
	Problem string // what is wrong, in words
	Err     error  // ErrInvalid or ErrUnsupportedVersion
	Cause   error  // an underlying error (e.g. from the partition package), or nil
}

func (e *Error) Error() string {
	s := e.Doc + ": " + e.Field
	if e.Value != "" {
		s += " " + e.Value
	}
	return s + ": " + e.Problem
}

// Unwrap exposes the sentinel and, if any, the underlying cause.
func (e *Error) Unwrap() []error {
	sentinel := e.Err
	if sentinel == nil {
		sentinel = ErrInvalid
	}
	if e.Cause != nil {
		return []error{sentinel, e.Cause}
	}
	return []error{sentinel}
}

// maxShownValue bounds how much of an offending value an error message shows.
const maxShownValue = 80

// show formats an offending value for an error message: strings are quoted
// (so control characters are visible) and truncated, integers printed.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		if len(v) > maxShownValue {
			cut := maxShownValue
			for cut > 0 && !utf8.RuneStart(v[cut]) {
				cut--
			}
			return strconv.Quote(v[:cut]) + "..."
		}
		return strconv.Quote(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	default:
		return fmt.Sprint(v)
	}
}

func invalid(doc, field string, value any, problem string, args ...any) *Error {
	if len(args) > 0 {
		problem = fmt.Sprintf(problem, args...)
	}
	return &Error{Doc: doc, Field: field, Value: show(value), Problem: problem, Err: ErrInvalid}
}
