package lakehouse

import (
	"context"

	"github.com/pswap/pswap/store"
)

// Reflected returns what the latest published version reflects of the
// partitions parts: its version (0: nothing published), location, and
// each partition's pointer sequence number (absent: the version has no
// record of it). It reads the version hint, the metadata file and its
// manifest list, and the group manifests of parts.
func Reflected(ctx context.Context, st store.Store, parts []string) (version int, loc string, seqs map[string]int64, err error) {
	p := newLoader(ctx, st, Options{})
	s, err := p.load(ctx, true)
	if err != nil {
		return 0, "", nil, err
	}
	seqs = map[string]int64{}
	if s.version == 0 || s.meta == nil {
		return s.version, "", seqs, nil
	}
	for _, part := range parts {
		m, have, err := p.recorded(ctx, s, part)
		if err != nil {
			return s.version, "", nil, err
		}
		if have {
			seqs[part] = m.seq
		}
	}
	return s.version, p.loc(MetadataKey(s.version)), seqs, nil
}
