package strictjson

import (
	"strconv"
	"strings"
)

// ParseVersion parses a document's "major.minor" version: two decimal
// numbers of at most nine digits, without signs or leading zeros.
func ParseVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	major, okA := versionPart(a)
	minor, okB := versionPart(b)
	return major, minor, okA && okB
}

func versionPart(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
