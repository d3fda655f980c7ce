package partition

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pswap/pswap/internal/errkind"
)

// Limits on a key.
const (
	// MaxColumns is the largest number of columns a key may have.
	MaxColumns = 8
	// MaxLen is the largest length in bytes of a key, both as given to
	// Parse and in its canonical (escaped) form.
	MaxLen = 512
)

// ErrInvalidKey is wrapped by every error about a malformed partition key.
var ErrInvalidKey = errkind.New("invalid partition key", errkind.ErrInvalidKey)

// Suffixes the store reserves for the file backend's temporary and lock
// files; a path segment ending in one of them is rejected by the store, so a
// key value must not end in one either.
var reservedSuffixes = []string{".pswap-tmp", ".pswap-lock"}

// Column is one name=value pair of a partition key. Value is unescaped.
type Column struct {
	Name, Value string
}

// String returns the column in its canonical, escaped form: name=value.
func (c Column) String() string {
	return c.Name + "=" + Escape(c.Value)
}

// Key is a validated Hive-style partition key such as "dt=2026-11-29/hr=13".
// It is immutable and comparable with ==: two keys are equal exactly when
// their canonical forms are equal, so a Key can be used as a map key. The
// zero Key has no columns and is not valid input to anything that needs a
// partition; check IsZero.
type Key struct {
	s string // canonical form; "" for the zero Key
}

// New builds a key from columns, in order, validating every name and value.
func New(cols ...Column) (Key, error) {
	if len(cols) == 0 {
		return Key{}, fmt.Errorf("%w: no columns", ErrInvalidKey)
	}
	if len(cols) > MaxColumns {
		return Key{}, fmt.Errorf("%w: %d columns, more than the limit of %d", ErrInvalidKey, len(cols), MaxColumns)
	}
	for i, c := range cols {
		if p := nameProblem(c.Name); p != "" {
			return Key{}, fmt.Errorf("%w: column name %q: %s", ErrInvalidKey, c.Name, p)
		}
		if p := valueProblem(c.Value); p != "" {
			return Key{}, fmt.Errorf("%w: column %s value %q: %s", ErrInvalidKey, c.Name, c.Value, p)
		}
		for _, d := range cols[:i] {
			if d.Name == c.Name {
				return Key{}, fmt.Errorf("%w: duplicate column name %q", ErrInvalidKey, c.Name)
			}
		}
	}
	s := format(cols)
	if len(s) > MaxLen {
		return Key{}, fmt.Errorf("%w: %q is %d bytes, longer than the limit of %d", ErrInvalidKey, clip(s), len(s), MaxLen)
	}
	return Key{s: s}, nil
}

// MustParse is Parse that panics on error. Use it only for constants.
func MustParse(s string) Key {
	k, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return k
}

// Parse parses a partition key: name=value segments separated by "/".
// Values may use %XX escapes (either case of hex), which are decoded; a key
// that is valid but not in canonical form (for example "dt=a:b" or a
// lowercase escape) is accepted and its String is the canonical form. Use
// Validate to require the canonical form.
//
// Parse rejects: an empty string; a leading or trailing "/" or an empty
// segment ("//"); a segment that is not name=value, including "." and "..";
// a column name that does not match [a-z][a-z0-9_]* (uppercase, a leading
// "_" or "." and other characters are rejected); an empty value; a
// duplicate column name; a value that is "." or ".." or ends in a suffix
// the store reserves (a "/" in a value is fine: its canonical form escapes
// it as %2F, as Hive and Spark do, so it never splits a path); invalid %-escapes;
// control characters, raw or escaped; invalid UTF-8, raw or escaped; more
// than MaxColumns columns; more than MaxLen bytes.
// Errors wrap ErrInvalidKey and quote the input.
func Parse(s string) (Key, error) {
	cols, err := parseColumns(s)
	if err != nil {
		return Key{}, err
	}
	c := format(cols)
	if len(c) > MaxLen {
		return Key{}, invalid(s, fmt.Sprintf("canonical form is %d bytes, longer than the limit of %d", len(c), MaxLen))
	}
	return Key{s: c}, nil
}

// Validate reports whether s is a valid partition key in canonical form,
// that is, Parse(s) succeeds and its String is s. Errors wrap ErrInvalidKey.
func Validate(s string) error {
	k, err := Parse(s)
	if err != nil {
		return err
	}
	if k.s != s {
		return invalid(s, fmt.Sprintf("not in canonical form (want %q)", k.s))
	}
	return nil
}

// Columns returns a copy of the key's columns in order, with unescaped values.
func (k Key) Columns() []Column {
	if k.s == "" {
		return nil
	}
	segs := strings.Split(k.s, "/")
	cols := make([]Column, len(segs))
	for i, seg := range segs {
		name, val, _ := strings.Cut(seg, "=")
		v, _ := unescape(val) // canonical form: cannot fail
		cols[i] = Column{Name: name, Value: v}
	}
	return cols
}

// Value returns the unescaped value of the named column.
func (k Key) Value(name string) (string, bool) {
	for _, c := range k.Columns() {
		if c.Name == name {
			return c.Value, true
		}
	}
	return "", false
}

// Len returns the number of columns.
func (k Key) Len() int {
	if k.s == "" {
		return 0
	}
	return strings.Count(k.s, "/") + 1
}

// String returns the canonical form, for example "dt=2026-11-29/hr=13".
// It is "" for the zero Key.
func (k Key) String() string { return k.s }

// Path returns the key as a relative path below the table root; it is the
// same as String and never has a leading or trailing "/".
func (k Key) Path() string { return k.s }

// IsZero reports whether k is the zero Key (no columns).
func (k Key) IsZero() bool { return k.s == "" }

// MarshalText returns the canonical form ("" for the zero Key).
func (k Key) MarshalText() ([]byte, error) { return []byte(k.s), nil }

// UnmarshalText parses a key that must be in canonical form (see Validate).
// Unlike MarshalText it rejects the empty string.
func (k *Key) UnmarshalText(b []byte) error {
	s := string(b)
	if err := Validate(s); err != nil {
		return err
	}
	*k = Key{s: s}
	return nil
}

func parseColumns(s string) ([]Column, error) {
	switch {
	case s == "":
		return nil, invalid(s, "empty")
	case len(s) > MaxLen:
		return nil, invalid(s, fmt.Sprintf("%d bytes, longer than the limit of %d", len(s), MaxLen))
	case !utf8.ValidString(s):
		return nil, invalid(s, "not valid UTF-8")
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return nil, invalid(s, "contains a control character")
	case strings.HasPrefix(s, "/"):
		return nil, invalid(s, "leading /")
	case strings.HasSuffix(s, "/"):
		return nil, invalid(s, "trailing /")
	case strings.Contains(s, "//"):
		return nil, invalid(s, "empty segment (//)")
	}
	n := strings.Count(s, "/") + 1
	if n > MaxColumns {
		return nil, invalid(s, fmt.Sprintf("%d columns, more than the limit of %d", n, MaxColumns))
	}
	cols := make([]Column, 0, n)
	for seg := range strings.SplitSeq(s, "/") {
		name, val, ok := strings.Cut(seg, "=")
		if !ok {
			return nil, invalid(s, fmt.Sprintf("segment %q is not name=value", seg))
		}
		if p := nameProblem(name); p != "" {
			return nil, invalid(s, fmt.Sprintf("column name %q: %s", name, p))
		}
		v, err := unescape(val)
		if err != nil {
			return nil, invalid(s, fmt.Sprintf("column %s: %v", name, err))
		}
		if p := valueProblem(v); p != "" {
			return nil, invalid(s, fmt.Sprintf("column %s value %q: %s", name, v, p))
		}
		for _, c := range cols {
			if c.Name == name {
				return nil, invalid(s, fmt.Sprintf("duplicate column name %q", name))
			}
		}
		cols = append(cols, Column{Name: name, Value: v})
	}
	return cols, nil
}

func invalid(s, problem string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidKey, clip(s), problem)
}

// clip shortens very long inputs in error messages.
func clip(s string) string {
	const max = 600
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// reservedDir is the table's top-level folder of pswap's own state
// (package internal/layout): no column name may be a prefix of it.
const reservedDir = "_pswap"

// nameProblem returns why name is not a valid column name, or "".
func nameProblem(name string) string {
	if name == "" {
		return "empty"
	}
	switch name[0] {
	case '_':
		if strings.HasPrefix(reservedDir, name) {
			// delta-rs's vacuum spares a top-level "_" folder unless its
			// path starts with a partition column's name (a bare prefix
			// match): such a column would expose pswap's own state.
			return fmt.Sprintf("a leading _ is reserved, and %q is a prefix of %s, the folder that holds pswap's own state", name, reservedDir)
		}
		return "a leading _ is reserved"
	case '.':
		return "a leading . is not allowed"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9':
			if i == 0 {
				return "must start with a lowercase letter"
			}
		case c >= 'A' && c <= 'Z':
			return "must be lowercase"
		default:
			return "must match [a-z][a-z0-9_]*"
		}
	}
	return ""
}

// valueProblem returns why an unescaped value is not valid, or "".
func valueProblem(v string) string {
	switch {
	case v == "":
		return "empty"
	case v == "." || v == "..":
		return "not allowed"
	case !utf8.ValidString(v):
		return "not valid UTF-8"
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "contains a control character"
	}
	for _, suf := range reservedSuffixes {
		if strings.HasSuffix(v, suf) {
			return fmt.Sprintf("the suffix %q is reserved", suf)
		}
	}
	return ""
}

func format(cols []Column) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(c.Name)
		b.WriteByte('=')
		b.WriteString(Escape(c.Value))
	}
	return b.String()
}

// mustEscape marks the bytes Hive's FileUtils.escapePathName escapes.
var mustEscape = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	for _, c := range "\"#%'*/:=?\\\x7f{[]^" {
		t[c] = true
	}
	return t
}()

// Escape escapes a partition value as Hive's FileUtils.escapePathName does:
// each of `"#%'*/:=?\{[]^`, DEL and the ASCII control characters becomes
// %XX with uppercase hex. Other bytes, including non-ASCII UTF-8, are kept.
func Escape(v string) string {
	n := 0
	for i := 0; i < len(v); i++ {
		if mustEscape[v[i]] {
			n++
		}
	}
	if n == 0 {
		return v
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(v)+2*n)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if mustEscape[c] {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// Unescape decodes %XX escapes (either case of hex). Unlike Hive, which
// leaves a malformed escape alone, it fails on a "%" not followed by two
// hex digits. Errors wrap ErrInvalidKey.
func Unescape(v string) (string, error) {
	u, err := unescape(v)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	return u, nil
}

func unescape(v string) (string, error) {
	i := strings.IndexByte(v, '%')
	if i < 0 {
		return v, nil
	}
	b := make([]byte, 0, len(v))
	b = append(b, v[:i]...)
	for ; i < len(v); i++ {
		c := v[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(v) {
			return "", fmt.Errorf("invalid escape %q at byte %d", v[i:], i)
		}
		hi, ok1 := unhex(v[i+1])
		lo, ok2 := unhex(v[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("invalid escape %q at byte %d", v[i:i+3], i)
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
