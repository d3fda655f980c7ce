package merge

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/errkind"
)

// ErrBadOption: a key list or delete marker that does not parse. It
// matches errkind.ErrBadInput.
var ErrBadOption = errkind.New("bad merge option", errkind.ErrBadInput)

// MaxKeyColumns bounds the columns of a key.
const MaxKeyColumns = 32

// ParseKeys parses a comma-separated list of key columns ("order_id",
// "tenant,order_id"): at least one, none empty, none twice, each a valid
// column name (printable, at most 256 bytes, no comma).
func ParseKeys(spec string) ([]string, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("%w: no key column (want e.g. --key order_id or --key tenant,order_id)", ErrBadOption)
	}
	parts := strings.Split(spec, ",")
	if len(parts) > MaxKeyColumns {
		return nil, fmt.Errorf("%w: %d key columns, at most %d", ErrBadOption, len(parts), MaxKeyColumns)
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		name := strings.TrimSpace(p)
		if err := checkName("key column", name); err != nil {
			return nil, err
		}
		if slices.Contains(out, name) {
			return nil, fmt.Errorf("%w: key column %q given twice", ErrBadOption, name)
		}
		out = append(out, name)
	}
	return out, nil
}

// DeleteWhen marks input rows that delete their key: a row whose Column
// holds Value (compared as text: the value as a CSV would spell it)
// removes the key from the partition and is not written.
type DeleteWhen struct {
	Column string
	Value  string
}

// IsZero reports that no delete marker is set.
func (d DeleteWhen) IsZero() bool { return d.Column == "" }

// String returns the marker as ParseDeleteWhen reads it.
func (d DeleteWhen) String() string {
	if d.IsZero() {
		return ""
	}
	return d.Column + "=" + d.Value
}

// ParseDeleteWhen parses a delete marker "column=value" (op=D). The value
// may be empty (op=) but not the column.
func ParseDeleteWhen(spec string) (DeleteWhen, error) {
	col, val, ok := strings.Cut(spec, "=")
	if !ok {
		return DeleteWhen{}, fmt.Errorf("%w: delete marker %q: want column=value, e.g. op=D", ErrBadOption, clip(spec))
	}
	col = strings.TrimSpace(col)
	if err := checkName("delete marker column", col); err != nil {
		return DeleteWhen{}, err
	}
	if !utf8.ValidString(val) || strings.ContainsFunc(val, isControl) {
		return DeleteWhen{}, fmt.Errorf("%w: delete marker value %q: not printable text", ErrBadOption, clip(val))
	}
	if len(val) > maxName {
		return DeleteWhen{}, fmt.Errorf("%w: delete marker value of %d bytes, at most %d", ErrBadOption, len(val), maxName)
	}
	return DeleteWhen{Column: col, Value: val}, nil
}

const maxName = 256

func checkName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty %s name", ErrBadOption, what)
	case len(name) > maxName:
		return fmt.Errorf("%w: %s name of %d bytes, at most %d", ErrBadOption, what, len(name), maxName)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, isControl):
		return fmt.Errorf("%w: %s name %q: not printable text", ErrBadOption, what, clip(name))
	case strings.ContainsAny(name, "=,"):
		return fmt.Errorf("%w: %s name %q holds '=' or ','", ErrBadOption, what, clip(name))
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
