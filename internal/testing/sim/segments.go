package sim

import (
	"context"
	"errors"

	"github.com/pswap/pswap/internal/layout"
	"github.com/pswap/pswap/manifest"
)

// errNoSegment: a head references a segment the store does not hold.
var errNoSegment = errors.New("segment not on the store")

// decodeManifest decodes a manifest document as the store holds it and
// expands a head (an append's manifest that lists earlier files by
// reference, manifest.Segment) from the world's objects: every checker
// sees every file of a generation, as a reader does (swap.ReadManifest).
func (w *World) decodeManifest(data []byte) (*manifest.Manifest, error) {
	m, err := manifest.Decode(data)
	if err != nil || !m.Segmented() {
		return m, err
	}
	prefix := layout.DataPrefixOf(m)
	err = m.Expand(context.Background(), func(_ context.Context, id string) ([]byte, error) {
		o, ok := w.objs[manifest.SegmentKey(prefix, id)]
		if !ok {
			return nil, errNoSegment
		}
		return o.data, nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}
