package integration

import (
	"strings"

	"github.com/pswap/pswap/internal/layout"
)

// pathKind is what a request path (or a key, absolute or relative to any
// prefix) is in a partition's state, in either layout (package layout):
// the key is taken from the table-level layout's _pswap/p/, else from the
// first segment that starts a partition's legacy _pswap folder.
func pathKind(p string) layout.Kind {
	key := p
	if i := strings.Index("/"+p, "/"+layout.PartitionsRoot); i >= 0 {
		key = p[i:]
	} else {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			if strings.Contains(s, "=") {
				key = strings.Join(segs[i:], "/")
				break
			}
		}
	}
	part, ok := layout.PartitionOf(key)
	if !ok {
		return layout.KindOther
	}
	k, _ := layout.Classify(part, key)
	return k
}
