package deltalog

import (
	"context"

	"github.com/pswap/pswap/store"
)

// Reflected returns the Delta log's latest version (-1: no log) and the
// pointer sequence number it reflects of each pswap partition with files.
func Reflected(ctx context.Context, st store.Store) (version int64, seqs map[string]int64, err error) {
	s, err := Load(ctx, st)
	if err != nil {
		return -1, nil, err
	}
	parts, err := s.partitions()
	if err != nil {
		return s.Version, nil, err
	}
	seqs = make(map[string]int64, len(parts))
	for k, p := range parts {
		seqs[k] = p.seq
	}
	return s.Version, seqs, nil
}
